"""How often a sample bot beats others, in-process through the wire codec (no network).

Each match gives the bot under test a different seat (rotating), the others are filled with
the opponent bot; the bots see exactly the protobuf requests a real match sends them.

    python benchmarks/winrate.py --game oh-hell --bot random --vs random --matches 200 --seats 4

Progress goes to stderr: a bar with the first-place rate so far in a terminal, else a line
every ``--every`` matches (default: a twentieth of them), so a long run is never silent.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rich.progress
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from referee.codec import MalformedActionError
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import Fault, FaultKind, FaultPolicy, Match
from sample_bots.serve import BOTS

Progress = Callable[[int, int], None]
"""Told after each match: matches played so far, and the bot's first places among them."""


def run(
    game_name: str,
    bot: str,
    vs: str,
    matches: int,
    seats: int,
    seed: int,
    progress: Progress | None = None,
) -> dict[str, float]:
    """Play ``matches`` matches; return first places, strict wins and faults of the bot."""
    game = make_game(game_name, seats)
    codec = codec_for(game)
    settings = game_settings(game)
    first = strict = faults = decisions = 0
    elapsed = 0.0
    for index in range(matches):
        hero_seat = index % seats
        players = [
            BOTS[bot if seat == hero_seat else vs](seed * 1000 + index * 10 + seat)
            for seat in range(seats)
        ]
        match = Match(game, seed + index, policy=FaultPolicy(max_faults=0))
        started = time.perf_counter()
        while not match.is_over:
            seat = match.to_act()
            request = choose_action_request(match, codec, settings, f"winrate-{index}")
            answer = players[seat].choose(request)
            try:
                match.play(codec.decode_action(answer), 0)
            except MalformedActionError as error:
                match.fault(Fault(FaultKind.MALFORMED_RESPONSE, str(error)), 0)
            decisions += 1
        elapsed += time.perf_counter() - started
        faults += sum(1 for move in match.moves if move.fault and move.seat == hero_seat)
        outcome = match.outcome()
        assert outcome is not None
        if outcome.ranks[hero_seat] == 1:
            first += 1
            strict += outcome.ranks.count(1) == 1
        if progress is not None:
            progress(index + 1, first)
    return {
        "matches": matches,
        "first_place": first / matches,
        "strict_wins": strict / matches,
        "faults": faults,
        "ms_per_decision": 1000 * elapsed / max(decisions, 1),
    }


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--bot", required=True, help="sample bot under test (arena-bot kind)")
    parser.add_argument("--vs", default="random", help="sample bot in every other seat")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--every", type=int, default=0, help="off a terminal: a progress line every N matches"
    )
    args = parser.parse_args()
    with progress_reporter(args.matches, args.every, f"{args.bot} vs {args.vs}") as progress:
        result = run(args.game, args.bot, args.vs, args.matches, args.seats, args.seed, progress)
    print(
        f"{args.game} {args.seats}p: {args.bot} vs {args.vs} x{args.seats - 1}, "
        f"{result['matches']} matches: first place {result['first_place']:.1%} "
        f"(strict wins {result['strict_wins']:.1%}), faults {result['faults']}, "
        f"{result['ms_per_decision']:.3f} ms per decision (all bots, codec included); "
        f"uniform baseline {1 / args.seats:.1%}"
    )


@contextlib.contextmanager
def progress_reporter(total: int, every: int, label: str) -> Iterator[Progress]:
    """A progress callback on stderr: a rich bar in a terminal, else a line every ``every``
    matches (0: every twentieth of ``total``) and at the end."""
    console = Console(stderr=True)
    if console.is_terminal:
        with rich.progress.Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("first place {task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as bar:
            task = bar.add_task(label, total=total, rate="-")
            yield lambda done, first: bar.update(task, completed=done, rate=f"{first / done:.1%}")
        return
    step = every if every > 0 else max(1, total // 20)
    started = time.monotonic()

    def line(done: int, first: int) -> None:
        if done % step == 0 or done == total:
            seconds = time.monotonic() - started
            print(
                f"{label}: {done}/{total} matches, first place {first / done:.1%}, {seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    yield line


if __name__ == "__main__":
    main()
