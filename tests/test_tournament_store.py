"""The tournaments' store on real SQLite and PostgreSQL: a set counts once, under its place in
the plan, and only while its tournament runs; names are unique; ends are final."""

from __future__ import annotations

import pytest

from arena.duplicate_scoring import Rotation
from arena.store.repository import Store, StoreError
from arena.store.tournaments import Tournaments, TournamentState
from arena.tournament import SetResult
from cardarena.arena.v1 import arena_service_pb2 as pb

RESULT = SetResult(1, 0, 0, (Rotation(("a/x", "b/y"), (1, 2), (90.0, 72.0)),))


def test_a_set_is_stored_once_and_only_while_its_tournament_runs(store: Store) -> None:
    tournaments = Tournaments(store.db, clock=lambda: 1_000)
    row = tournaments.create(pb.TournamentConfig(name="cup", entrants=["x", "y"]))
    assert tournaments.get("cup") == tournaments.get(row.tournament_id) == row
    with pytest.raises(StoreError) as taken:
        tournaments.create(pb.TournamentConfig(name="cup"))
    assert taken.value.code == "ALREADY_EXISTS"
    with pytest.raises(StoreError) as missing:
        tournaments.get("nothing")
    assert missing.value.code == "NOT_FOUND"

    assert tournaments.record_set(row.tournament_id, RESULT)
    other = SetResult(1, 0, 0, (Rotation(("a/x", "b/y"), (2, 1), (10.0, 99.0)),))
    assert not tournaments.record_set(row.tournament_id, other), "that set is stored"
    assert tournaments.played_sets(row.tournament_id) == [RESULT], "kept as first stored"
    tournaments.planned(row.tournament_id, 3)
    tournaments.planned(row.tournament_id, 2)
    assert tournaments.get("cup").sets_planned == 3, "never lowered"

    assert tournaments.end(row.tournament_id, TournamentState.STOPPED)
    assert not tournaments.end(row.tournament_id, TournamentState.FINISHED), "ends once"
    ended = tournaments.get("cup")
    assert (ended.state, ended.finished_at_us) == (TournamentState.STOPPED, 1_000)
    late = SetResult(1, 1, 0, RESULT.rotations)
    assert not tournaments.record_set(row.tournament_id, late), "stopped: nothing more counts"
    assert [r.tournament_id for r in tournaments.listed(TournamentState.RUNNING)] == []
    assert [r.tournament_id for r in tournaments.listed()] == [row.tournament_id]
