"""Engine cost per decision: random playouts in-process, for every registered game.

Each figure is CPU µs per decision (legal_actions + apply, deals included) and its ratio to a
plain pure-Python trick-taking loop measured in the same run (the machine is shared and noisy,
so compare ratios across runs, not raw µs).

    python benchmarks/engine.py                 # every game, every default seat count
    python benchmarks/engine.py --game king --seconds 3
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.games.api import Game
from referee.games.registry import game_types, make_game

_CHOICE_RNG = random.Random(0)
_CHOICES = [_CHOICE_RNG.getrandbits(30) for _ in range(1 << 16)]
"""Pre-drawn random numbers, so the random player's own draws cost almost nothing."""


WHOLE_GAME_OPTIONS: dict[str, list[dict[str, object]]] = {
    # Random players declare out within a few moves, so default Pinochle games are mostly set-up;
    # without declaring out the same figure covers whole games of card play and melds.
    "pinochle": [{"declare_out": "disabled"}],
}


def baseline_hand(rng: random.Random) -> int:
    """A naive 4-player, 13-trick hand: bids with the hook rule, follow suit, trump. Decisions."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sorted(deck[i * 13 : (i + 1) * 13]) for i in range(4)]
    trump = rng.randrange(4)
    bids: list[int] = []
    for seat in range(4):
        options = [b for b in range(14) if seat < 3 or sum(bids) + b != 13]
        bids.append(options[rng.randrange(len(options))])
    leader, decisions = 0, 4
    for _ in range(13):
        trick: list[int] = []
        for offset in range(4):
            hand = hands[(leader + offset) % 4]
            legal = [c for c in hand if trick and c // 13 == trick[0] // 13] or hand
            card = legal[_CHOICES[decisions & 0xFFFF] % len(legal)]
            hand.remove(card)
            trick.append(card)
            decisions += 1
        led = trick[0] // 13
        best = max(
            range(4),
            key=lambda i: (trick[i] // 13 == trump, trick[i] // 13 == led, trick[i] % 13),
        )
        leader = (leader + best) % 4
    return decisions


def measure(play_one: Callable[[int], int], seconds: float) -> float:
    """Median over 3 runs of CPU µs per decision."""
    runs = []
    for _ in range(3):
        decisions, seed = 0, 0
        started = time.process_time()
        while time.process_time() - started < seconds / 3:
            decisions += play_one(seed)
            seed += 1
        runs.append((time.process_time() - started) * 1e6 / decisions)
    return statistics.median(runs)


def playout(game: Game) -> Callable[[int], int]:
    """One random game from ``seed``; returns its number of decisions."""

    def play_one(seed: int) -> int:
        state = game.new_state(seed)
        choices, index = _CHOICES, seed * 7919
        current_seat, legal_actions, apply = (
            state.current_seat,
            state.legal_actions,
            state.apply,
        )
        while current_seat() >= 0:
            legal = legal_actions()
            apply(legal[choices[index & 0xFFFF] % len(legal)])
            index += 1
        return index - seed * 7919

    return play_one


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="game name (repeatable); default all")
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per figure")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--quick", action="store_true", help="a short smoke run (0.3 s a figure)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.3
    base = measure(lambda seed: baseline_hand(random.Random(seed)), args.seconds)
    rows = [{"game": "baseline (naive 4p trick-taking)", "us_per_decision": base, "ratio": 1.0}]
    print(f"{'game':36} {'µs/decision':>12} {'× baseline':>11}")
    print(f"{rows[0]['game']:36} {base:12.3f} {1.0:11.2f}")
    for game_type in game_types():
        if args.game and game_type.name not in args.game:
            continue
        seats = sorted({game_type.min_seats, min(4, game_type.max_seats), game_type.max_seats})
        configs: list[tuple[int, dict[str, object]]] = [(n, {}) for n in seats]
        configs += [
            (game_type.min_seats, extra) for extra in WHOLE_GAME_OPTIONS.get(game_type.name, ())
        ]
        for num_seats, options in configs:
            game = make_game(game_type.name, num_seats, options)
            cost = measure(playout(game), args.seconds)
            label = " ".join(f"{k}={v}" for k, v in options.items())
            row = {
                "game": f"{game_type.name} {num_seats}p {label}".strip(),
                "us_per_decision": cost,
                "ratio": cost / base,
            }
            rows.append(row)
            print(f"{row['game']:36} {cost:12.3f} {cost / base:11.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
