"""A tournament played by one of two real ``arena serve`` processes on one PostgreSQL database
is listed and watched through either, as ladder matches are: the other process relays the
playing process's public moves, and withholds a rotation while another of its deal is
unfinished."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import psycopg
import pytest

from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from tests.stores import postgres_available
from tests.test_ladder_e2e import ADMIN
from tests.test_watch_anywhere import WORKERS, Arena, all_pages, moves_of, two_processes, watched

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


def tournament_rows(arena: Arena) -> list[tuple[str, str, str]]:
    """(match id, status, claimed by) of the tournament matches in the queue."""
    with psycopg.connect(arena.url) as connection:
        return connection.execute(
            "SELECT match_id, status, COALESCE(claimed_by, '') FROM matches "
            "WHERE kind = 'tournament'"
        ).fetchall()


def rotation(match_id: str) -> int:
    """The rotation's index in its set (ids end ``.ROTATION-ATTEMPT``)."""
    return int(match_id.rsplit("-", 1)[0].rsplit(".", 1)[1])


def test_a_tournament_is_listed_and_watched_alike_through_either_process(
    tmp_path: Path,
) -> None:
    with two_processes(tmp_path, []) as arena:
        settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
        settings.options["deal_style"].string_value = "short_low"
        config = pb.TournamentConfig(
            name="relayed",
            settings=settings,
            entrants=arena.bots,
            sets=3,
            deadline_us=time.time_ns() // 1000 + 600_000_000,
            move_time_ms=2000,
            time_bank_ms=10_000,
            concurrency=2,
        )
        admin = arena.client("alpha", ADMIN)
        created = admin.call("CreateTournament", pb.CreateTournamentRequest(config=config))
        tournament_id = created.tournament.tournament_id
        withheld: set[str] = set()
        listed_by: set[str] = set()
        watched_alike = False
        deadline = time.monotonic() + 180
        while not (watched_alike and withheld == listed_by == set(WORKERS)):
            assert time.monotonic() < deadline, f"withheld via {withheld}, listed {listed_by}"
            for match_id, status, holder in tournament_rows(arena):
                if status != "playing" or not holder:
                    continue
                for name in WORKERS:  # listed by both, whichever plays it
                    request = pb.ListMatchesRequest(phase=pb.MATCH_PHASE_PLAYING)
                    for listed in all_pages(arena.client(name), request):
                        if listed.match_id == match_id:
                            assert listed.tournament_id == tournament_id
                            assert listed.kind == "tournament"
                            listed_by.add(name)
                if rotation(match_id) < 2:  # the set's last rotation has not been played
                    for name in WORKERS:
                        outcome = watched(arena.client(name), match_id)
                        if isinstance(outcome, grpc.RpcError) and (
                            outcome.code() == grpc.StatusCode.FAILED_PRECONDITION
                        ):
                            assert "withheld" in (outcome.details() or "")
                            withheld.add(name)
                        else:
                            assert not moves_of(outcome), f"live moves leaked via {name}"
                elif not watched_alike:
                    here, there = arena.client(holder), arena.client(arena.other(holder))
                    with ThreadPoolExecutor(2) as pool:
                        local = pool.submit(watched, here, match_id)
                        relayed = pool.submit(watched, there, match_id)
                        local_events, relayed_events = local.result(), relayed.result()
                    moves = moves_of(relayed_events)
                    if moves and moves_of(local_events):
                        assert relayed_events == local_events, "the same through either"
                        assert [m.index for m in moves] == list(range(len(moves)))
                        assert isinstance(relayed_events, list)
                        assert all(e.HasField("move") for e in relayed_events), "moves only"
                        watched_alike = True
            time.sleep(0.05)
