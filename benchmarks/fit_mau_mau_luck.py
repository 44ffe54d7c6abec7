"""Fit the weights of Mau-Mau's luck features (``referee.games.mau_mau.luck``) and write them.

Self-play of the fairness benchmark's close field (the heuristic bot, its restyled weak
version and two more heuristic bots, seats shuffled), with the options a duplicate ladder
plays (deal-seeded reshuffles). The deals are ``2**48 + i``: the benchmark's are 48-bit, so
the two never share a match. For every seat of every match: its final tally margin (its
tally minus the mean of the others) and its per-feature luck less the mean of the others'.
The weights are the ridge least-squares fit of the first on the second (ridge ``--ridge``:
the rank features of a draw sum to zero, so one direction is not identified). Half the
matches fit, the other half report how much of the margin's variance the luck explains
(out of sample); the table written is then fitted on all of them.

    python benchmarks/fit_mau_mau_luck.py --matches 1600 --write
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import fairness
from referee.games.mau_mau import LUCK_FEATURES, match_draws, seat_luck_features
from referee.games.registry import ENTRIES, make_game

VALUES = Path(__file__).resolve().parent.parent / "referee/games/mau_mau/luck_values.py"
FIRST_DEAL = 2**48
"""Above every deal the fairness benchmark draws (``getrandbits(48)``)."""

Row = tuple[list[float], float]
"""A seat's luck features less the others' mean, and its tally margin."""


def relative(values: Sequence[float], seat: int) -> float:
    """``values[seat]`` less the mean of the other seats'."""
    others = [v for i, v in enumerate(values) if i != seat]
    return values[seat] - sum(others) / len(others)


def match_rows(deal: int, seats: int, order: Sequence[str], bot_seed: int) -> list[Row]:
    """One self-play match's rows, a row a seat."""
    game = make_game("mau-mau", seats, ENTRIES["mau-mau"].duplicate_options)
    field = fairness.close_field("mau-mau", seats)
    played = fairness.play(game, deal, order, field, bot_seed)
    draws = match_draws(seats, game.options, deal, played.actions)
    features = seat_luck_features(draws, seats)
    scores = played.rotation.scores
    return [
        (
            [relative([f[k] for f in features], seat) for k in range(len(LUCK_FEATURES))],
            relative(scores, seat),
        )
        for seat in range(seats)
    ]


def set_rows(deal: int, seats: int, order: Sequence[str]) -> list[Row]:
    """One self-play duplicate set's rows (the benchmark's rotations of ``deal``): per seat
    and rotation, the margin and luck less their means over the rotations in that seat, what
    a duplicate seat comparison sees."""
    rotations = [
        match_rows(
            deal, seats, [order[(i + shift) % seats] for i in range(seats)], deal + shift * 97
        )
        for shift in range(seats)
    ]
    rows: list[Row] = []
    for seat in range(seats):
        held = [rotation[seat] for rotation in rotations]
        mean_x = [sum(x[k] for x, _ in held) / len(held) for k in range(len(LUCK_FEATURES))]
        mean_y = sum(y for _, y in held) / len(held)
        rows += [([a - b for a, b in zip(x, mean_x, strict=True)], y - mean_y) for x, y in held]
    return rows


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``x`` with ``matrix x = vector`` (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    a = [[*row, vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col] / a[col][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit(rows: Sequence[Row], ridge: float) -> list[float]:
    """Ridge least squares of the margin on the features (no intercept: both average 0)."""
    k = len(rows[0][0])
    gram = [[ridge * (i == j) for j in range(k)] for i in range(k)]
    moment = [0.0] * k
    for x, y in rows:
        for i in range(k):
            moment[i] += x[i] * y
            for j in range(k):
                gram[i][j] += x[i] * x[j]
    return solve(gram, moment)


def explained(rows: Sequence[Row], weights: Sequence[float]) -> float:
    """Share of the margins' variance (about 0) that the luck takes out: 1 − SSE / SS."""
    total = sum(y * y for _, y in rows)
    residual = sum((y - sum(w * f for w, f in zip(weights, x, strict=True))) ** 2 for x, y in rows)
    return 1 - residual / total


def write_table(weights: Sequence[float], source: str, share: float) -> None:
    """Write ``luck_values.py``."""
    lines = [
        '"""Fitted weights of Mau-Mau\'s luck features (``luck.LUCK_FEATURES``), in tally points.',
        "",
        f"Written by ``benchmarks/fit_mau_mau_luck.py`` from {source} of self-play (out of",
        f"sample the luck took {share:.1%} of the tally margins' variance); do not edit by hand.",
        '"""',
        "",
        "WEIGHTS: tuple[float, ...] = (",
        *(f"    {w:.3f},  # {name}" for w, name in zip(weights, LUCK_FEATURES, strict=True)),
        ")",
    ]
    VALUES.write_text("\n".join(lines) + "\n")


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000, help="plain matches")
    parser.add_argument("--sets", type=int, default=500, help="duplicate sets (4 matches each)")
    parser.add_argument("--fit-on", choices=("plain", "duplicate"), default="duplicate")
    parser.add_argument("--ridge", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1, help="shuffles the seats")
    parser.add_argument("--cache", type=Path, help="matches played (as fairness.py --cache)")
    parser.add_argument("--write", action="store_true", help=f"write {VALUES.name}")
    args = parser.parse_args()
    if args.cache and args.cache.exists():
        fairness.CACHE.update(json.loads(args.cache.read_text()))
    seats = ENTRIES["mau-mau"].demo_seats
    names = list(fairness.close_field("mau-mau", seats))
    rng = random.Random(args.seed)
    plain: list[list[Row]] = []
    for i in range(args.matches):
        order = rng.sample(names, len(names))
        plain.append(match_rows(FIRST_DEAL + i, seats, order, FIRST_DEAL + i))
    sets: list[list[Row]] = []
    for i in range(args.sets):
        order = rng.sample(names, len(names))
        sets.append(set_rows(FIRST_DEAL + args.matches + i, seats, order))
    if args.cache:
        args.cache.write_text(json.dumps(fairness.CACHE))
    for name, groups in (("plain", plain), ("duplicate", sets)):
        if len(groups) < 2:
            continue
        half = len(groups) // 2
        train = [row for group in groups[:half] for row in group]
        test = [row for group in groups[half:] for row in group]
        share = explained(test, fit(train, args.ridge))
        print(f"{name}: out of sample the luck takes {share:.1%} of the margins' variance")
    chosen = sets if args.fit_on == "duplicate" else plain
    half = len(chosen) // 2
    share = explained(
        [row for group in chosen[half:] for row in group],
        fit([row for group in chosen[:half] for row in group], args.ridge),
    )
    weights = fit([row for group in chosen for row in group], args.ridge)
    for w, name in zip(weights, LUCK_FEATURES, strict=True):
        print(f"  {name:26} {w:9.2f}")
    rows = len(chosen)
    if args.write:
        write_table(
            weights,
            f"{rows} {args.fit_on} {'sets' if args.fit_on == 'duplicate' else 'matches'}",
            share,
        )


if __name__ == "__main__":
    main()
