"""Our engines next to OpenSpiel's: random playouts per second and CPU µs per decision.

Rows, all measured in this run (CPU time of this process, median of 3 runs each):

- ``baseline``: the plain pure-Python 4-player trick-taking loop of ``benchmarks/engine.py``
  (bids with the hook rule, follow suit, trump); every ratio is against it;
- our ``oh-hell`` and ``mau-mau`` engines at 4 seats, random playouts of whole matches through
  ``legal_actions`` + ``apply`` (``benchmarks/engine.py``'s loop);
- OpenSpiel's ``oh_hell`` (players=4) and ``crazy_eights`` (players=4) driven from a Python loop
  the way a Python referee would drive them: ``is_chance_node`` / ``chance_outcomes`` (a uniform
  pick: every chance event of these games is uniform) / ``legal_actions`` / ``apply_action``;
- for reference, the same OpenSpiel games played entirely in C++ (``pyspiel.evaluate_bots``
  with uniform random bots, one Python call per game).

A "decision" is a player's action (OpenSpiel's chance actions, its deal, are not counted as
decisions but their cost is included, as our engines' deals are). Playouts differ in size: one
of ours is a whole match (several deals), one of OpenSpiel's is one deal, so compare µs per
decision across engines and playouts per second only within a row. Targets: our engines at most
1.5 µs per decision, and faster per decision than OpenSpiel driven from Python on Oh Hell.

OpenSpiel is the optional ``bench`` extra (``pip install 'card-arena[bench]'``); without it the
OpenSpiel rows are skipped with a note.

    python benchmarks/openspiel_compare.py
    python benchmarks/openspiel_compare.py --seconds 3 --json /tmp/compare.json
    python benchmarks/openspiel_compare.py --quick      # a smoke run for CI
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.engine import baseline_hand, playout
from referee.games.registry import make_game

TARGET_US = 1.5
OURS = {"oh-hell": "oh_hell", "mau-mau": "crazy_eights"}
"""Our game -> the OpenSpiel game it is compared with."""
SEATS = 4


def measure(play_one: Callable[[int], float], seconds: float) -> tuple[float, float]:
    """Median over 3 runs of (CPU µs per decision, playouts per CPU second)."""
    per_decision, per_second = [], []
    for _ in range(3):
        decisions, games = 0.0, 0
        started = time.process_time()
        while (elapsed := time.process_time() - started) < seconds / 3 or games == 0:
            decisions += play_one(games)
            games += 1
        per_decision.append(elapsed * 1e6 / decisions)
        per_second.append(games / elapsed)
    return statistics.median(per_decision), statistics.median(per_second)


def openspiel_python_loop(game: Any) -> Callable[[int], int]:
    """One random game of an OpenSpiel game driven from Python; returns its decisions."""

    def play_one(seed: int) -> int:
        rng = random.Random(seed)
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
                decisions += 1
        return decisions

    return play_one


def openspiel_cpp_loop(pyspiel: Any, game: Any) -> Callable[[int], float]:
    """One random game played in C++ (``evaluate_bots``); decisions estimated from a sample."""
    players = game.num_players()
    sample = openspiel_python_loop(game)
    mean_decisions = sum(sample(seed) for seed in range(200)) / 200

    def play_one(seed: int) -> float:
        bots = [pyspiel.make_uniform_random_bot(p, seed * 8 + p) for p in range(players)]
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
        return mean_decisions

    return play_one


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per figure")
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.15
    try:
        pyspiel: Any = importlib.import_module("pyspiel")
    except ImportError:
        pyspiel = None
    base_us, base_rate = measure(lambda seed: baseline_hand(random.Random(seed)), args.seconds)
    rows: list[dict[str, Any]] = [
        {"engine": "baseline pure Python 4p", "us_per_decision": base_us, "playouts_s": base_rate}
    ]
    notes = []
    for ours, theirs in OURS.items():
        us, rate = measure(playout(make_game(ours, SEATS)), args.seconds)
        rows.append({"engine": f"ours {ours} {SEATS}p", "us_per_decision": us, "playouts_s": rate})
        if pyspiel is None:
            notes.append(f"OpenSpiel {theirs}: skipped, open-spiel is not installed")
            continue
        game = pyspiel.load_game(theirs, {"players": SEATS})
        us, rate = measure(openspiel_python_loop(game), args.seconds)
        rows.append(
            {
                "engine": f"OpenSpiel {theirs} {SEATS}p, Python loop",
                "us_per_decision": us,
                "playouts_s": rate,
                "openspiel_python": ours,
            }
        )
        us, rate = measure(openspiel_cpp_loop(pyspiel, game), args.seconds)
        rows.append(
            {
                "engine": f"OpenSpiel {theirs} {SEATS}p, all C++",
                "us_per_decision": us,
                "playouts_s": rate,
            }
        )
    for row in rows:
        row["ratio"] = row["us_per_decision"] / base_us
    print(f"{'engine':40} {'µs/decision':>12} {'× baseline':>11} {'playouts/s':>11}")
    for row in rows:
        print(
            f"{row['engine']:40} {row['us_per_decision']:12.3f} {row['ratio']:11.2f} "
            f"{row['playouts_s']:11.0f}"
        )
    verdicts = []
    for ours in OURS:
        mine = next(r for r in rows if r["engine"] == f"ours {ours} {SEATS}p")
        verdict = "meets" if mine["us_per_decision"] <= TARGET_US else "MISSES"
        line = f"ours {ours}: {verdict} the {TARGET_US} µs target"
        other = next((r for r in rows if r.get("openspiel_python") == ours), None)
        if other is not None:
            speedup = other["us_per_decision"] / mine["us_per_decision"]
            line += f"; {speedup:.2f}x OpenSpiel's speed per decision from Python"
        verdicts.append(line)
    for line in verdicts + notes:
        print(line)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "notes": notes}, indent=2))


if __name__ == "__main__":
    main()
