"""Tournaments: planning from a seed, pairing scores with intervals, exports, and a real run."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.duplicate_scoring import Rotation
from arena.matchmaking import PlannedMatch
from arena.store.tournaments import rotations_from_json, rotations_json
from arena.tournament import (
    Crosstable,
    PlannedSet,
    SetResult,
    Tournament,
    TournamentError,
    TournamentPlan,
    crosstable_from_json,
    interval,
    pair_scores_of_set,
    round_robin_tables,
    score_pairings,
    swiss_tables,
)
from arena.tournament_api import rotations_of
from cardarena.game.v1 import options_pb2, record_pb2
from tests.helpers import ROOT


def rot(seats: str, ranks: tuple[int, ...], scores: tuple[float, ...]) -> Rotation:
    return Rotation(tuple(seats), ranks, scores)


def test_plans_are_validated() -> None:
    def plan(**changes: Any) -> TournamentPlan:
        return replace(TournamentPlan("klaberjass", 2, ("a", "b"), "round-robin"), **changes)

    cases: list[tuple[dict[str, Any], str]] = [
        ({"entrants": ("a",)}, "needs 2 to"),
        ({"entrants": ("a", "a")}, "distinct"),
        ({"sets": 0}, "sets per table"),
        ({"format": "knockout"}, "format"),
        ({"format": "swiss", "rounds": 0}, "Swiss rounds"),
    ]
    for changes, message in cases:
        with pytest.raises(TournamentError, match=message):
            plan(**changes)


def test_a_round_robin_seats_every_group_once() -> None:
    assert round_robin_tables(["a", "b", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(round_robin_tables([str(i) for i in range(6)], 4)) == 15


def test_swiss_seats_close_scores_together_and_avoids_rematches() -> None:
    import random

    scores = {"a": 0.9, "b": 0.8, "c": 0.2, "d": 0.1}
    tables = swiss_tables(list(scores), 2, scores, {}, random.Random(1))
    assert tables == [("a", "b"), ("c", "d")]
    met = {frozenset(("a", "b")): 1, frozenset(("c", "d")): 1}
    assert swiss_tables(list(scores), 2, scores, met, random.Random(1)) == [("a", "c"), ("b", "d")]
    assert swiss_tables(["a", "b", "c"], 2, scores, {}, random.Random(1)) == [("a", "b")]


def test_the_same_seed_plans_the_same_event() -> None:
    def planned(seed: int, format: str) -> list[list[PlannedSet]]:
        plan = TournamentPlan("oh-hell", 3, tuple("abcd"), format, sets=2, rounds=2, seed=seed)
        tournament = Tournament(plan)
        rounds = []
        while sets := tournament.next_round():
            rounds.append(sets)
        return rounds

    for format in ("round-robin", "swiss"):
        assert planned(7, format) == planned(7, format)
        assert planned(7, format) != planned(8, format)
    first = planned(7, "round-robin")[0]
    assert len(first) == 4 * 2, "4 tables of 3 out of 4 entrants, 2 sets each"
    one_set = first[0].matches
    assert len({m.seed for m in one_set}) == 1 and len(one_set) == 3, "a deal per seat rotation"


def test_pair_scores_compare_who_held_the_same_cards() -> None:
    # a makes more of both seats than b (see tests/test_duplicate_scoring.py)
    rotations = [rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (400, 350))]
    assert pair_scores_of_set(rotations) == {("a", "b"): [1.0, 1.0], ("b", "a"): [0.0, 0.0]}
    pushes = [rot("ab", (1, 2), (10, 0)), rot("ba", (1, 2), (10, 0))]
    assert pair_scores_of_set(pushes) == {}


def test_intervals_and_significance() -> None:
    assert interval([1.0]) == (1.0, 0.0, 1.0), "one set: nothing known"
    mean, low, high = interval([1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    assert mean == 0.875 and low < mean < high <= 1.0
    win = [rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (400, 350))]
    loss = [rot("ab", (1, 2), (400, 350)), rot("ba", (1, 2), (500, 300))]
    results = [SetResult(1, 0, i, tuple(win)) for i in range(9)]
    clear = score_pairings(results)[("a", "b")]
    assert clear.score == 1.0 and clear.significant and clear.sets == 9
    mixed = score_pairings([*results[:5], *(SetResult(1, 0, 9 + i, tuple(loss)) for i in range(4))])
    assert not mixed[("a", "b")].significant and mixed[("a", "b")].score == pytest.approx(5 / 9)


def crosstable_of(results: list[SetResult]) -> Crosstable:
    plan = TournamentPlan("klaberjass", 2, ("a", "b", "c"), sets=3)
    return Crosstable(plan, score_pairings(results), len(results), 9, 2 * len(results), True)


def test_crosstable_exports_round_trip() -> None:
    win = (rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (400, 350)))
    results = [SetResult(1, 0, i, win) for i in range(3)]
    table = crosstable_of(results)
    assert [entrant for entrant, _ in table.standings] == ["a", "b", "c"]
    data = json.loads(json.dumps(table.to_json()))
    again = crosstable_from_json(data)
    assert again.to_json() == table.to_json()
    rows = table.csv_rows()
    assert rows[0][:3] == ["a", "b", "score"]
    assert rows[1][:3] == ["a", "b", "1.0000"] and rows[2][:3] == ["b", "a", "0.0000"]


def run_arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", "tournament", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_a_tournament_between_real_bot_processes(tmp_path: Path) -> None:
    """Three sample bots as their own gRPC processes, a round robin of 3 duplicate sets per
    pairing; the JSON, CSV and ``show`` agree."""
    out, table_csv = tmp_path / "t.json", tmp_path / "t.csv"
    result = run_arena(
        "run",
        "--game",
        "klaberjass",
        "--sample",
        "heur=klaberjass-heuristic",
        "--sample",
        "rnd1=random",
        "--sample",
        "rnd2=random",
        "--sets",
        "3",
        "--seed",
        "5",
        "--json",
        str(out),
        "--csv",
        str(table_csv),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    assert data["finished"] and data["sets_played"] == data["sets_planned"] == 9
    assert data["matches_played"] == 18
    assert data["standings"][0]["entrant"] == "heur"
    pairs = {(p["a"], p["b"]): p for p in data["pairings"]}
    assert set(pairs) == {
        (a, b) for a in ("heur", "rnd1", "rnd2") for b in ("heur", "rnd1", "rnd2") if a != b
    }
    for (a, b), pairing in pairs.items():
        assert pairing["score"] == pytest.approx(1 - pairs[(b, a)]["score"])
        assert pairing["low"] <= pairing["score"] <= pairing["high"]
    with open(table_csv, newline="") as written:
        assert len(list(csv.reader(written))) == 1 + 6
    assert "heur" in result.stdout and "sets" in result.stdout
    shown = run_arena("show", str(out))
    assert shown.returncode == 0 and "9/9 sets" in shown.stdout


def test_a_tournament_stops_at_its_deadline_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    result = run_arena(
        "run",
        "--game",
        "klaberjass",
        "--sample",
        "a=random",
        "--sample",
        "b=random",
        "--sets",
        "1000",
        "--deadline-s",
        "0.5",
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert not data["finished"] and data["sets_played"] < data["sets_planned"] == 1000
    assert "stopped at its deadline" in result.stdout


def test_a_mau_mau_set_keeps_its_lower_score_wins_from_the_records_to_the_store() -> None:
    settings = options_pb2.GameSettings(game="mau-mau", num_seats=2)
    planned = PlannedSet(0, 0, 0, (PlannedMatch(9, ("a", "b")), PlannedMatch(9, ("b", "a"))))
    records = [
        record_pb2.MatchRecord(
            settings=settings,
            status=record_pb2.MATCH_STATUS_COMPLETED,
            outcome=record_pb2.MatchOutcome(ranks=[2, 1], scores=scores),
        )
        for scores in ([300, 100], [500, 100])
    ]
    rotations = rotations_of(planned, list(records))
    assert [r.lower_score_wins for r in rotations] == [True, True]
    assert rotations_from_json(rotations_json(rotations)) == rotations
    old = '[{"seats":["a","b"],"ranks":[1,2],"scores":[5.0,1.0]}]'  # stored before the flag
    assert rotations_from_json(old) == (Rotation(("a", "b"), (1, 2), (5.0, 1.0)),)
