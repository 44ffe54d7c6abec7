"""Matches needed to rank a heuristic bot above random bots: plain deals vs duplicate deals.

For each game, one ``<game>-heuristic`` sample bot plays against ``random`` sample bots in the
other seats, in-process through the wire codec (the bots see exactly the protobuf requests a real
match sends them, as in ``benchmarks/winrate.py``). Results are rated with ``arena.ratings``
exactly as the ladder rates them (openskill Plackett-Luce; every seat is its own bot):

- **plain**: every match is a fresh seeded deal with shuffled seats, rated on its own;
- **duplicate**: one seeded deal is replayed once per seat rotation (2 seats: both ways; n seats:
  n rotations) and the set is rated once from ``set_ranks`` (the ladder's ``plan_set`` order).

Confidence that the heuristic bot is better than random bot r is the normal CDF of
``(mu_h - mu_r) / sqrt(sigma_h^2 + sigma_r^2)``; with several random bots it is the minimum over
them. A run's figure is the first match count after which that confidence is >= 0.95 and stays
so to the end of the run. A run ends at ``--max-matches`` or once the confidence has held for
as many matches again as it took to reach (at least ``--hold`` matches), whichever comes first;
a run that never settles counts as ``--max-matches`` (shown with a ``>``). Matches are counted
as games played, so a duplicate set of n rotations costs n matches.

The table shows, per game, the median over ``--runs`` independent seeds for plain and duplicate
and their ratio duplicate / plain (below 1: duplicate deals rank the bots with fewer matches).

    python benchmarks/fairness.py                     # every game with a heuristic bot
    python benchmarks/fairness.py --game king --runs 9
    python benchmarks/fairness.py --quick             # a smoke run for CI
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ratings import Rating, rate, set_ranks
from referee.codec import MalformedActionError
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.api import Game
from referee.games.registry import GAMES as REGISTERED
from referee.games.registry import codec_for, make_game
from referee.match import Fault, FaultKind, FaultPolicy, Match
from sample_bots.serve import BOTS

GAMES: dict[str, int] = {entry.name: entry.demo_seats for entry in REGISTERED}
"""Games benchmarked and their seat counts (one heuristic bot, random bots elsewhere)."""

CONFIDENCE = 0.95
MODES = ("plain", "duplicate", "duplicate-each")
"""``duplicate-each`` replays the same rotations but rates every match on its own: it separates
what the shared deal gains from what rating a set as one event costs."""
HERO = "heuristic"


def confidence(ratings: dict[str, Rating]) -> float:
    """P(heuristic better than every random bot), the weakest pairwise normal-CDF figure."""
    hero = ratings[HERO]
    worst = 1.0
    for bot, other in ratings.items():
        if bot == HERO:
            continue
        z = (hero.mu - other.mu) / math.sqrt(hero.sigma**2 + other.sigma**2)
        worst = min(worst, 0.5 * (1.0 + math.erf(z / math.sqrt(2.0))))
    return worst


def play(game: Game, seed: int, seats: Sequence[str], bot_seed: int) -> dict[str, int]:
    """One match in-process through the codec; returns each bot's finishing rank."""
    codec = codec_for(game)
    settings = game_settings(game)
    players = [
        BOTS[f"{game.type.name}-heuristic" if name == HERO else "random"](bot_seed + seat)
        for seat, name in enumerate(seats)
    ]
    match = Match(game, seed, policy=FaultPolicy(max_faults=0))
    while not match.is_over:
        request = choose_action_request(match, codec, settings, "fairness")
        answer = players[match.to_act()].choose(request)
        try:
            match.play(codec.decode_action(answer), 0)
        except MalformedActionError as error:
            match.fault(Fault(FaultKind.MALFORMED_RESPONSE, str(error)), 0)
    outcome = match.outcome()
    assert outcome is not None
    return {bot: outcome.ranks[seat] for seat, bot in enumerate(seats)}


def matches_to_rank(
    game: Game, run_seed: int, mode: str, max_matches: int, hold: int
) -> tuple[int, bool]:
    """Matches after which the heuristic bot stays ranked above random at 95 %; settled?"""
    seats = game.num_seats
    bots = [HERO] + [f"random{i}" for i in range(1, seats)]
    ratings = {bot: Rating() for bot in bots}
    rng = random.Random(run_seed)
    played = 0
    reached: int | None = None
    while played < max_matches:
        order = list(bots)
        rng.shuffle(order)
        deal = rng.getrandbits(48)
        rotations = range(1) if mode == "plain" else range(seats)
        results = [
            play(game, deal, [order[(i + shift) % seats] for i in range(seats)], deal + shift * 97)
            for shift in rotations
        ]
        played += len(results)
        if mode == "duplicate-each":
            for ranks in results:
                ratings.update(rate(ratings, ranks))
        else:
            ratings.update(rate(ratings, set_ranks(results)))
        if confidence(ratings) >= CONFIDENCE:
            if reached is None:
                reached = played
            if played - reached >= max(hold, reached):
                return reached, True
        else:
            reached = None
    return (reached, True) if reached is not None else (max_matches, False)


def run(
    game_name: str, seats: int, runs: int, max_matches: int, hold: int, seed: int
) -> dict[str, Any]:
    """Median matches to rank, plain vs duplicate, over ``runs`` seeds."""
    game = make_game(game_name, seats)
    row: dict[str, Any] = {"game": f"{game_name} {seats}p"}
    started = time.process_time()
    for mode in MODES:
        results = [
            matches_to_rank(game, seed * 1_000_003 + r, mode, max_matches, hold)
            for r in range(runs)
        ]
        counts = [count for count, _ in results]
        row[mode] = statistics.median(counts)
        row[f"{mode}_runs"] = counts
        row[f"{mode}_unsettled"] = sum(1 for _, settled in results if not settled)
    row["ratio"] = row["duplicate"] / row["plain"]
    row["ratio_each"] = row["duplicate-each"] / row["plain"]
    row["cpu_s"] = time.process_time() - started
    return row


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="game name (repeatable); default all")
    parser.add_argument("--runs", type=int, default=7, help="independent seeds per figure")
    parser.add_argument("--max-matches", type=int, default=240)
    parser.add_argument("--hold", type=int, default=20, help="least matches the rank must hold")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.max_matches, args.hold = 1, 8, 2
        args.game = args.game or ["king", "klaberjass"]
    rows = []
    print(
        f"{'game':14} {'plain':>7} {'duplicate':>10} {'dup/plain':>10} {'dup-each':>9} "
        f"{'each/plain':>10}  runs (plain | duplicate | dup-each), matches each"
    )
    for game_name, seats in GAMES.items():
        if args.game and game_name not in args.game:
            continue
        if f"{game_name}-heuristic" not in BOTS:
            print(f"{game_name + f' {seats}p':14} skipped: no {game_name}-heuristic sample bot yet")
            rows.append({"game": f"{game_name} {seats}p", "skipped": "no heuristic bot"})
            continue
        row = run(game_name, seats, args.runs, args.max_matches, args.hold, args.seed)
        rows.append(row)

        def shown(mode: str, row: dict[str, Any] = row) -> str:
            mark = ">" if row[f"{mode}_unsettled"] * 2 > args.runs else ""
            return f"{mark}{row[mode]:g}"

        print(
            f"{row['game']:14} {shown('plain'):>7} {shown('duplicate'):>10} {row['ratio']:10.2f} "
            f"{shown('duplicate-each'):>9} {row['ratio_each']:10.2f}  {row['plain_runs']} | "
            f"{row['duplicate_runs']} | {row['duplicate-each_runs']}",
            flush=True,
        )
    print(
        f"median matches until P(heuristic > every random bot) >= {CONFIDENCE} for good, "
        f"over {args.runs} seeds; cap {args.max_matches}"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
