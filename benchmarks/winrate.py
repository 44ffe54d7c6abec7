"""How often a sample bot beats others, in-process through the wire codec (no network).

Each match gives the bot under test a different seat (rotating), the others are filled with
the opponent bot; the bots see exactly the protobuf requests a real match sends them.

    python benchmarks/winrate.py --game oh-hell --bot random --vs random --matches 200 --seats 4
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.codec import MalformedActionError
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import Fault, FaultKind, FaultPolicy, Match
from sample_bots.serve import BOTS


def run(game_name: str, bot: str, vs: str, matches: int, seats: int, seed: int) -> dict[str, float]:
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
    args = parser.parse_args()
    result = run(args.game, args.bot, args.vs, args.matches, args.seats, args.seed)
    print(
        f"{args.game} {args.seats}p: {args.bot} vs {args.vs} x{args.seats - 1}, "
        f"{result['matches']} matches: first place {result['first_place']:.1%} "
        f"(strict wins {result['strict_wins']:.1%}), faults {result['faults']}, "
        f"{result['ms_per_decision']:.3f} ms per decision (all bots, codec included); "
        f"uniform baseline {1 / args.seats:.1%}"
    )


if __name__ == "__main__":
    main()
