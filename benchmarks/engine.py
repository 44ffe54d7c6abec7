"""Engine cost per decision: random playouts in-process, for every registered game.

Each figure is CPU µs per decision (legal_actions + apply, deals included) and its ratio to a
plain pure-Python trick-taking loop measured in the same run (the machine is shared and noisy,
so compare ratios across runs, not raw µs).

Pinochle is also split by decision kind (issue 4: card play at most 1.5 µs, the rest reported
apart): phase 1 / phase 2 leads and follows (a phase-1 follow ends the trick, decides whether the
winner gets a meld turn and draws), meld, dix exchange, draw (ending the meld turn), declaring
out, the last card of a hand (it also scores the hand and deals the next) and a new game
(``random.Random(seed)`` and the first deal, per game). "card play, all" is the figure the
target is about. In the JSON these rows are the ``kinds`` of each Pinochle row.

How: timing each decision with its own pair of ``process_time_ns`` calls would cost more than
the decision (0.25 µs a call back to back, 1-2 µs after other work), so ``measure_kinds`` plays
64 random games side by side. Each round it works out every game's next action and its kind on
a shallow copy of the state (untimed), then times, kind by kind, one batch of
``legal_actions()`` + ``apply()`` over every game whose next decision is of that kind. An empty
batch timed among them each round gives the timer's cost in place, which is subtracted once per
batch. Batches run colder than one game in a tight loop: "every decision" comes out 5-10 %
above the whole-game figure of the same options, so the split errs on the slow side.

    python benchmarks/engine.py                 # every game, every default seat count
    python benchmarks/engine.py --game king --seconds 3
    python benchmarks/engine.py --game pinochle # whole games, then the split by kind
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.games.api import Game, State
from referee.games.pinochle import (
    DECLARE_OUT,
    DIX_BASE,
    DRAW,
    MELD_BASE,
    PHASE_MELD,
    PHASE_STOCK,
    TRICKS_PER_HAND,
    PinochleState,
)
from referee.games.registry import GAMES, game_types, make_game

_CHOICE_RNG = random.Random(0)
CHOICES = [_CHOICE_RNG.getrandbits(30) for _ in range(1 << 16)]
"""Pre-drawn random numbers, so the random player's own draws cost almost nothing."""


WHOLE_GAME_OPTIONS = {entry.name: entry.whole_game_options for entry in GAMES}
"""Option sets measured besides the defaults, as each game registers them."""


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
            card = legal[CHOICES[decisions & 0xFFFF] % len(legal)]
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
        runs.append((time.process_time() - started) * 1e6 / max(decisions, 1))
    return statistics.median(runs)


def playout(game: Game) -> Callable[[int], int]:
    """One random game from ``seed``; returns its number of decisions."""

    def play_one(seed: int) -> int:
        state = game.new_state(seed)
        choices, index = CHOICES, seed * 7919
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


CARD_PLAY = ("phase 1 lead", "phase 1 follow", "phase 2 lead", "phase 2 follow")
"""The kinds the 1.5 µs target is about."""
MELD_TURN = ("meld", "dix exchange", "draw (end the meld turn)")
OTHER = ("declare out", "last card of a hand (+ scoring, next deal)")
NEW_GAME = "new game (Random(seed) + first deal)"


def pinochle_kind(state: State, action: int) -> str:
    """What a Pinochle decision is, from the state before it and the action chosen."""
    assert isinstance(state, PinochleState)
    if action == DECLARE_OUT:
        return "declare out"
    if state.phase == PHASE_MELD:
        return (
            MELD_TURN[0] if action < DIX_BASE else MELD_TURN[1] if action < DRAW else MELD_TURN[2]
        )
    assert action < MELD_BASE
    if state.phase == PHASE_STOCK:
        return CARD_PLAY[1] if state.lead >= 0 else CARD_PLAY[0]
    if state.lead < 0:
        return CARD_PLAY[2]
    return OTHER[1] if len(state.completed) == TRICKS_PER_HAND - 1 else CARD_PLAY[3]


Batch = list[tuple[Callable[[], Sequence[int]], Callable[[int], None], int]]


def measure_kinds(
    game: Game, classify: Callable[[State, int], str], seconds: float, tables: int = 64
) -> dict[str, tuple[int, float]]:
    """CPU ns per decision by kind: {kind: (decisions, ns)}, over ``seconds`` of timed batches.

    ``tables`` random games are played side by side; each round every game makes one decision,
    batched by kind (see the module docstring). Finished games are replaced by new ones, timed
    as one batch of ``new_state`` calls. Each round also times one empty batch, at a rotating
    place among the others: a timer pair costs about 0.25 µs back to back but 1-2 µs after other
    work, so the overhead is measured where the batches are, and subtracted once per batch.
    """
    timer, choices = time.process_time_ns, CHOICES
    live = [game.new_state(seed) for seed in range(tables)]
    next_seed, index, rounds, timed, budget = tables, 0, 0, 0, seconds * 1e9
    counts: dict[str, int] = {}
    batches_of: dict[str, int] = {}
    spent: dict[str, int] = {}
    empty: Batch = []
    while timed < budget:
        by_kind: dict[str, Batch] = {}
        for state in live:
            legal = copy.copy(state).legal_actions()  # the same list, leaving ``state`` as it was
            pick = choices[index & 0xFFFF] % len(legal)
            index += 1
            kind = classify(state, legal[pick])
            by_kind.setdefault(kind, []).append((state.legal_actions, state.apply, pick))
        batches = list(by_kind.items())
        batches.insert(rounds % (len(batches) + 1), ("", empty))
        rounds += 1
        for kind, batch in batches:
            start = timer()
            for legal_actions, apply, pick in batch:
                apply(legal_actions()[pick])
            elapsed = timer() - start
            counts[kind] = counts.get(kind, 0) + len(batch)
            batches_of[kind] = batches_of.get(kind, 0) + 1
            spent[kind] = spent.get(kind, 0) + elapsed
            timed += elapsed
        ended = [slot for slot, state in enumerate(live) if state.current_seat() < 0]
        if ended:
            seeds = range(next_seed, next_seed + len(ended))
            next_seed += len(ended)
            new_state = game.new_state
            start = timer()
            fresh = [new_state(seed) for seed in seeds]
            elapsed = timer() - start
            for slot, state in zip(ended, fresh, strict=True):
                live[slot] = state
            counts[NEW_GAME] = counts.get(NEW_GAME, 0) + len(ended)
            batches_of[NEW_GAME] = batches_of.get(NEW_GAME, 0) + 1
            spent[NEW_GAME] = spent.get(NEW_GAME, 0) + elapsed
            timed += elapsed
    overhead = spent.pop("") / batches_of.pop("")
    del counts[""]
    return {kind: (n, spent[kind] - batches_of[kind] * overhead) for kind, n in counts.items()}


def pinochle_kind_rows(
    options: dict[str, object], seconds: float, base: float
) -> list[dict[str, object]]:
    """Median over 3 runs of µs per decision by kind; aggregate rows for card play and melds."""
    game = make_game("pinochle", 2, options)
    runs = [measure_kinds(game, pinochle_kind, seconds / 3) for _ in range(3)]
    decisions = sum(n for run in runs for kind, (n, _) in run.items() if kind != NEW_GAME)
    groups: list[tuple[str, tuple[str, ...]]] = [
        (kind, (kind,)) for kind in (*CARD_PLAY, *MELD_TURN, *OTHER, NEW_GAME)
    ]
    groups += [("card play, all", CARD_PLAY), ("meld turn, all", MELD_TURN)]
    rows: list[dict[str, object]] = []
    for name, kinds in groups:
        per_run = [[run[kind] for kind in kinds if kind in run] for run in runs]
        if not all(per_run):
            continue
        us = statistics.median(
            sum(ns for _, ns in found) / sum(n for n, _ in found) / 1000 for found in per_run
        )
        count = sum(n for found in per_run for n, _ in found)
        rows.append(
            {
                "kind": name,
                "us_per_decision": us,
                "ratio": us / base,
                "share": count / decisions if name != NEW_GAME else None,
                "target_us": 1.5 if kinds == CARD_PLAY else None,
            }
        )
    overall = statistics.median(
        sum(ns for _, ns in run.values())
        / sum(n for kind, (n, _) in run.items() if kind != NEW_GAME)
        / 1000
        for run in runs
    )
    rows.append(
        {
            "kind": "every decision (new games included)",
            "us_per_decision": overall,
            "ratio": overall / base,
            "share": 1.0,
            "target_us": None,
        }
    )
    return rows


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
    by_kind: list[tuple[dict[str, object], list[dict[str, object]]]] = []
    for game_type in game_types():
        if args.game and game_type.name not in args.game:
            continue
        seats = sorted({game_type.min_seats, min(4, game_type.max_seats), game_type.max_seats})
        configs: list[tuple[int, dict[str, object]]] = [(n, {}) for n in seats]
        configs += [
            (game_type.min_seats, dict(extra))
            for extra in WHOLE_GAME_OPTIONS.get(game_type.name, ())
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
            if game_type.name == "pinochle":
                kinds = pinochle_kind_rows(options, args.seconds * 2, base)
                by_kind.append((row, kinds))
                row["kinds"] = kinds
    for row, kinds in by_kind:
        print(f"\n{row['game']}, by decision kind (whole games in one loop: {row['ratio']:.2f}):")
        print(f"{'kind':44} {'share':>6} {'µs/decision':>12} {'× baseline':>11}")
        for kind in kinds:
            share = f"{kind['share']:6.1%}" if kind["share"] is not None else f"{'':6}"
            print(
                f"{kind['kind']:44} {share} {kind['us_per_decision']:12.3f} {kind['ratio']:11.2f}"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
