"""Tournaments: a fixed event over duplicate sets, scored into a crosstable (pure; no I/O).

An operator runs a tournament between named entrants of one game: a **round robin** seats
every group of ``seats`` entrants at a table once (for two seats: every pairing), a **Swiss**
tournament plays ``rounds`` rounds, each seating entrants of close scores together (who have
met least). Every table plays ``sets`` duplicate sets (one deal per set, replayed once per seat
rotation, ``arena.matchmaking.plan_set``). Every seed, seating and deal comes from the
tournament's seed, so the same seed plays the same event again (and the same results, with
deterministic bots).

Results are scored as a duplicate ladder scores a set (``arena.duplicate_scoring``): per seat
of a deal, the entrants that held those cards compared. Each pairing's score is A's share of
its comparisons with B (a win 1, a tie 1/2), and its 95 % confidence interval comes from the
per-set scores (sets are independent deals): a normal interval on their mean, with n - 1
degrees of freedom read from a t table. Where the interval holds 1/2 the pairing is not
significant (shaded in the ACPC's tables; marked here). The standings order entrants by
their mean score over every pairing.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.duplicate_scoring import Rotation, seat_comparisons
from arena.matchmaking import PlannedMatch, plan_set

FORMATS = ("round-robin", "swiss")
MAX_ENTRANTS = 64
MAX_SETS = 1000
MAX_TABLES = 5000
"""Bounds of one tournament (a round robin of 4-seat tables grows as entrants⁴)."""

_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
"""Two-sided 95 % Student t quantiles by degrees of freedom (1.96 from 30 on)."""


def t95(degrees: int) -> float:
    """The two-sided 95 % t quantile for ``degrees`` of freedom (≥ 1)."""
    if degrees in _T95:
        return _T95[degrees]
    if degrees < 20:
        return 2.23 - (degrees - 10) * 0.015
    return 2.09 if degrees < 30 else 1.96


class TournamentError(ValueError):
    """A tournament that cannot be planned as asked."""


@dataclass(frozen=True)
class TournamentPlan:
    """What an operator asked for."""

    game: str
    seats: int
    entrants: tuple[str, ...]
    format: str = "round-robin"
    sets: int = 2
    """Duplicate sets per table."""
    rounds: int = 3
    """Swiss rounds (round robin: ignored)."""
    seed: int = 1

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise TournamentError(f"format must be one of {', '.join(FORMATS)}")
        if len(set(self.entrants)) != len(self.entrants):
            raise TournamentError("entrant names must be distinct")
        if not self.seats <= len(self.entrants) <= MAX_ENTRANTS:
            raise TournamentError(
                f"a tournament of {self.seats}-seat tables needs {self.seats} to "
                f"{MAX_ENTRANTS} entrants (got {len(self.entrants)})"
            )
        if not 1 <= self.sets <= MAX_SETS:
            raise TournamentError(f"sets per table must be between 1 and {MAX_SETS}")
        if self.format == "swiss" and not 1 <= self.rounds <= 100:
            raise TournamentError("Swiss rounds must be between 1 and 100")
        if self.format == "round-robin" and math.comb(len(self.entrants), self.seats) > MAX_TABLES:
            raise TournamentError(f"a round robin of more than {MAX_TABLES} tables: use swiss")


@dataclass(frozen=True)
class PlannedSet:
    """One duplicate set of a table: its matches (one per seat rotation)."""

    round: int
    table: int
    index: int
    matches: tuple[PlannedMatch, ...]


def round_robin_tables(entrants: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Every group of ``seats`` entrants once, in a fixed order."""
    return list(itertools.combinations(entrants, seats))


def swiss_tables(
    entrants: Sequence[str],
    seats: int,
    scores: Mapping[str, float],
    met: Mapping[frozenset[str], int],
    rng: random.Random,
) -> list[tuple[str, ...]]:
    """One Swiss round: entrants by score (best first, ties in a seeded random order) seated
    greedily, each table filled from the best unseated entrant with the next ones that have
    met it least; entrants left over (fewer than a table) sit out the round."""
    order = sorted(entrants, key=lambda e: (-scores.get(e, 0.0), rng.random()))
    tables = []
    while len(order) >= seats:
        table = [order.pop(0)]
        while len(table) < seats:
            best = min(
                range(len(order)),
                key=lambda i: (sum(met.get(frozenset((order[i], t)), 0) for t in table), i),
            )
            table.append(order.pop(best))
        tables.append(tuple(table))
    return tables


def table_sets(
    plan: TournamentPlan, round_: int, table_index: int, table: Sequence[str]
) -> list[PlannedSet]:
    """The duplicate sets of one table, seeded by the tournament seed, round and table."""
    rng = random.Random(f"{plan.seed}/{round_}/{table_index}")
    return [
        PlannedSet(round_, table_index, index, tuple(plan_set(list(table), rng, duplicate=True)))
        for index in range(plan.sets)
    ]


@dataclass(frozen=True)
class SetResult:
    """A played duplicate set: its rated rotations (voided or failed ones left out)."""

    round: int
    table: int
    index: int
    rotations: tuple[Rotation, ...]


@dataclass(frozen=True)
class PairingScore:
    """A's result against B over their comparisons."""

    a: str
    b: str
    score: float
    """A's share of the comparisons (1 win, 1/2 tie)."""
    low: float
    high: float
    """95 % confidence interval of the score (from the per-set scores)."""
    comparisons: int
    sets: int

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 1/2 (a real difference at 95 %)."""
        return self.sets >= 2 and not self.low <= 0.5 <= self.high


def pair_scores_of_set(rotations: Sequence[Rotation]) -> dict[tuple[str, str], list[float]]:
    """Each ordered pair's comparison results in one set: 1, 1/2 or 0 per seat where both
    held the cards (pushes compare nothing, as in the ladder)."""
    results: dict[tuple[str, str], list[float]] = {}
    for ranks in seat_comparisons(rotations):
        for a, b in itertools.permutations(ranks, 2):
            value = 1.0 if ranks[a] < ranks[b] else 0.5 if ranks[a] == ranks[b] else 0.0
            results.setdefault((a, b), []).append(value)
    return results


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95 % interval (clipped to [0, 1]) of per-set scores; one set: [0, 1]."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0, 1.0
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    half = t95(len(values) - 1) * math.sqrt(variance / len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def score_pairings(results: Iterable[SetResult]) -> dict[tuple[str, str], PairingScore]:
    """Every ordered pair of entrants that were compared: score and interval."""
    per_set: dict[tuple[str, str], list[float]] = {}
    counts: dict[tuple[str, str], int] = {}
    for result in results:
        for pair, values in pair_scores_of_set(result.rotations).items():
            per_set.setdefault(pair, []).append(sum(values) / len(values))
            counts[pair] = counts.get(pair, 0) + len(values)
    scores = {}
    for (a, b), values in per_set.items():
        mean, low, high = interval(values)
        scores[(a, b)] = PairingScore(a, b, mean, low, high, counts[(a, b)], len(values))
    return scores


@dataclass
class Crosstable:
    """The result of a tournament."""

    plan: TournamentPlan
    pairings: dict[tuple[str, str], PairingScore]
    sets_played: int
    sets_planned: int
    matches_played: int
    finished: bool
    """False if the deadline stopped it before every planned set was played."""
    standings: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.standings:
            means = {}
            for entrant in self.plan.entrants:
                mine = [p.score for (a, _), p in self.pairings.items() if a == entrant]
                means[entrant] = sum(mine) / len(mine) if mine else 0.0
            self.standings = sorted(means.items(), key=lambda item: (-item[1], item[0]))

    def to_json(self) -> dict[str, Any]:
        """Everything, for ``--json`` (and ``arena tournament show``)."""
        plan = self.plan
        return {
            "plan": {
                "game": plan.game,
                "seats": plan.seats,
                "entrants": list(plan.entrants),
                "format": plan.format,
                "sets": plan.sets,
                "rounds": plan.rounds,
                "seed": plan.seed,
            },
            "finished": self.finished,
            "sets_played": self.sets_played,
            "sets_planned": self.sets_planned,
            "matches_played": self.matches_played,
            "standings": [{"entrant": e, "score": round(s, 4)} for e, s in self.standings],
            "pairings": [pairing_json(p) for p in self.pairings.values()],
        }

    def csv_rows(self) -> list[list[str]]:
        """The crosstable as CSV rows: a header, then one row per ordered pairing."""
        rows = [["a", "b", "score", "low", "high", "significant", "comparisons", "sets"]]
        for entrant, _ in self.standings:
            for other, _ in self.standings:
                pairing = self.pairings.get((entrant, other))
                if pairing is not None:
                    rows.append(
                        [
                            entrant,
                            other,
                            f"{pairing.score:.4f}",
                            f"{pairing.low:.4f}",
                            f"{pairing.high:.4f}",
                            str(pairing.significant).lower(),
                            str(pairing.comparisons),
                            str(pairing.sets),
                        ]
                    )
        return rows


def pairing_json(pairing: PairingScore) -> dict[str, Any]:
    """A pairing's JSON form."""
    return {
        "a": pairing.a,
        "b": pairing.b,
        "score": round(pairing.score, 4),
        "low": round(pairing.low, 4),
        "high": round(pairing.high, 4),
        "significant": pairing.significant,
        "comparisons": pairing.comparisons,
        "sets": pairing.sets,
    }


def crosstable_from_json(data: Mapping[str, Any]) -> Crosstable:
    """A crosstable back from its ``to_json`` form."""
    plan_data = data["plan"]
    plan = TournamentPlan(
        plan_data["game"],
        int(plan_data["seats"]),
        tuple(plan_data["entrants"]),
        plan_data["format"],
        int(plan_data["sets"]),
        int(plan_data["rounds"]),
        int(plan_data["seed"]),
    )
    pairings = {
        (p["a"], p["b"]): PairingScore(
            p["a"], p["b"], p["score"], p["low"], p["high"], p["comparisons"], p["sets"]
        )
        for p in data["pairings"]
    }
    return Crosstable(
        plan,
        pairings,
        int(data["sets_played"]),
        int(data["sets_planned"]),
        int(data["matches_played"]),
        bool(data["finished"]),
        [(s["entrant"], float(s["score"])) for s in data["standings"]],
    )


class Tournament:
    """A tournament in progress: hands out the next round's sets and takes their results.

    The I/O shell (``arena.tournament_run``) plays each round's sets, reports each with
    ``record``, and asks for the next round until there is none or its deadline passes."""

    def __init__(self, plan: TournamentPlan) -> None:
        self.plan = plan
        self.results: list[SetResult] = []
        self.round = 0
        self._rng = random.Random(f"{plan.seed}/swiss")
        self._met: dict[frozenset[str], int] = {}
        self.sets_planned = 0
        self.matches_played = 0

    @property
    def rounds(self) -> int:
        """How many rounds the tournament has."""
        return 1 if self.plan.format == "round-robin" else self.plan.rounds

    def next_round(self) -> list[PlannedSet]:
        """The sets of the next round ([] once every round was handed out)."""
        if self.round >= self.rounds:
            return []
        self.round += 1
        if self.plan.format == "round-robin":
            tables = round_robin_tables(self.plan.entrants, self.plan.seats)
        else:
            scores = self.crosstable(finished=False).standings
            tables = swiss_tables(
                self.plan.entrants, self.plan.seats, dict(scores), self._met, self._rng
            )
        for table in tables:
            for a, b in itertools.combinations(table, 2):
                key = frozenset((a, b))
                self._met[key] = self._met.get(key, 0) + 1
        sets = [
            planned
            for index, table in enumerate(tables)
            for planned in table_sets(self.plan, self.round, index, table)
        ]
        self.sets_planned += len(sets)
        return sets

    def record(self, result: SetResult) -> None:
        """A played set's rotations."""
        self.results.append(result)
        self.matches_played += len(result.rotations)

    def crosstable(self, finished: bool) -> Crosstable:
        """The crosstable of the sets recorded so far."""
        ordered = sorted(self.results, key=lambda r: (r.round, r.table, r.index))
        return Crosstable(
            self.plan,
            score_pairings(ordered),
            len(self.results),
            self.sets_planned,
            self.matches_played,
            finished,
        )
