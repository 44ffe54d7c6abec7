"""Machine instructions per engine decision, counted by valgrind (deterministic, unlike time).

Plays ``--games`` seeded random games of one game through the bare engine (``new_state``, then
``legal_actions`` + ``apply`` until the end, as ``engine.py`` does; or, with ``--stage``, one of
``decision_cost.py``'s stages: ``observe`` adds ``observe(seat)``, ``runner`` the runner's
``RequestEncoder.encode`` of every request) inside ``itertools.starmap``, so that callgrind
(``--toggle-collect=starmap_next``) counts just those calls. ``--warm`` games run first,
uncounted, then the collector is frozen (``gc.freeze``): else whether a full collection falls
in the count moves it by several percent. The same binary and inputs give the same count
(``PYTHONHASHSEED`` is fixed), so two versions of the code compare exactly: pass each source
tree to ``--trees`` (``git worktree add /tmp/base COMMIT``) and they are counted in one run.

    python benchmarks/instructions.py --game king                  # this tree
    python benchmarks/instructions.py --game king --trees /tmp/base .
    python benchmarks/instructions.py --game king --stage runner --trees /tmp/base .
    python benchmarks/instructions.py --quick                      # 2 games, no valgrind needed
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.decision_cost import Stage, stage_observe, stage_request  # noqa: E402
from benchmarks.engine import playout  # noqa: E402
from referee.games.api import Game  # noqa: E402
from referee.games.registry import make_game  # noqa: E402


def stage_runner(game: Game) -> Stage:
    """Engine + the runner's encoded request at every decision (``decision_cost.py``)."""
    return stage_request(game, runner=True)


STAGES: dict[str, Callable[[Game], Stage]] = {
    "engine": playout,
    "observe": stage_observe,
    "runner": stage_runner,
}


def play(game: str, seats: int, stage: str, games: int, warm: int) -> int:
    """Decisions in ``games`` seeded games (seeds 0..games-1), after ``warm`` others."""
    play_one = STAGES[stage](make_game(game, seats))
    for seed in range(games, games + warm):
        play_one(seed)
    # The start-up's objects out of the collector's way: else whether a full collection, which
    # walks every object, falls inside the count moves it by several percent with the imports.
    gc.collect()
    gc.freeze()
    return sum(itertools.starmap(play_one, ((seed,) for seed in range(games))))


def count(tree: Path, args: argparse.Namespace) -> tuple[int, int]:
    """(instructions, decisions) of the playouts of ``tree``'s code, under callgrind."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        command = [
            *("valgrind", "--tool=callgrind", "--collect-atstart=no"),
            *("--toggle-collect=starmap_next", f"--callgrind-out-file={out}"),
            *(sys.executable, str(tree / "benchmarks" / "instructions.py"), "--play"),
            *("--game", args.game, "--seats", str(args.seats)),
            *("--stage", args.stage, "--games", str(args.games), "--warm", str(args.warm)),
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree)}
        done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
        decisions = int(done.stdout.split()[-1])
        totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        if totals is None:
            raise SystemExit(f"{tree}: no totals in the callgrind output")
        return int(totals.group(1)), decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="king")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--stage", choices=STAGES, default="engine")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--trees", nargs="+", type=Path, default=[ROOT])
    parser.add_argument("--play", action="store_true", help="just play (what callgrind runs)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 games, no valgrind")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.play or args.quick:
        games = 2 if args.quick else args.games
        decisions = play(args.game, args.seats, args.stage, games, args.warm)
        print(f"decisions {decisions}")
        return
    counts = {str(tree): count(tree.resolve(), args) for tree in args.trees}
    per_decision = {tree: total / decisions for tree, (total, decisions) in counts.items()}
    first = per_decision[str(args.trees[0])]
    games = f"{args.games} seeded games"
    print(f"{args.game} {args.seats}p, {games}, {args.stage}: instructions per decision")
    for tree, figure in per_decision.items():
        print(f"  {tree}: {figure:,.0f} ({figure / first:.3f} × the first)")
    if args.json:
        rows = [
            {"tree": tree, "instructions": total, "decisions": decisions}
            for tree, (total, decisions) in counts.items()
        ]
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
