"""Scale-out: two arena processes share one PostgreSQL database and one ladder.

Both play matches (claims with SKIP LOCKED leases), and every result is still counted exactly
once; killing one of them mid-ladder leaves its matches to be played again by the other.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trio
from prometheus_client import CollectorRegistry
from trio.testing import MockClock

from arena.client import ArenaClient
from arena.ladder import Arena, ArenaConfig
from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot
from arena.matchmaking import PlannedMatch
from arena.metrics import Metrics
from arena.ratings import INITIAL_SIGMA
from arena.store.db import open_database
from arena.store.repository import Store
from cardarena.arena.v1 import arena_service_pb2 as pb
from referee.bot_client import BotPool
from tests.helpers import ROOT, random_bots
from tests.stores import postgres_available, postgres_url
from tests.test_ladder_e2e import (
    ADMIN,
    finished,
    quick_ladder,
    register_all,
    wait_active,
    wait_for,
)
from tests.test_store import active_bots, finished_record, ladder_config

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


@contextmanager
def worker(url: str, name: str, tmp_path: Path, *extra: str) -> Iterator[BotProcess]:
    """An ``arena serve`` process on ``url`` as worker ``name`` (``extra``: more options),
    its log in ``tmp_path/NAME.log``; stopped gracefully at the end."""
    token_file = tmp_path / "admin"
    token_file.write_text(ADMIN)
    command = arena_serve_command(
        token_file, ["--database-url", url], 3, "--worker-id", name, *extra
    )
    with (tmp_path / f"{name}.log").open("a") as log:
        process = start_server(name, command, cwd=str(ROOT), stderr=log.fileno())
        try:
            yield process
        finally:
            stop_bot(process.process, grace_s=15)


def counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as connection:
        # One snapshot for every read below: the workers keep finishing matches meanwhile.
        connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        by_worker: dict[str, int] = dict(
            connection.execute(
                "SELECT claimed_by, COUNT(*) FROM matches WHERE status = 'finished' "
                "AND kind = 'ladder' GROUP BY claimed_by"
            ).fetchall()
        )
        records = connection.execute("SELECT COUNT(*) FROM records").fetchone()
        done = connection.execute(
            "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
        ).fetchone()
        assert records is not None and done is not None and records[0] == done[0]
        rated: dict[str, int] = dict(
            connection.execute(
                "SELECT s.bot_id, COUNT(*) FROM match_seats s JOIN matches m ON "
                "m.match_id = s.match_id WHERE m.kind = 'ladder' AND m.result_status IN (1, 2) "
                "GROUP BY s.bot_id"
            ).fetchall()
        )
        for bot_id, matches in connection.execute("SELECT bot_id, matches FROM entries"):
            assert matches == rated.get(bot_id, 0), f"{bot_id} rated {matches} times"
    return by_worker


def test_two_workers_share_a_ladder_and_count_every_result_once(tmp_path: Path) -> None:
    with (
        postgres_url() as url,
        random_bots(3, seed=77) as bots,
        worker(url, "alpha", tmp_path) as alpha,
        worker(url, "beta", tmp_path) as beta,
    ):
        client = ArenaClient(alpha.address, ADMIN, timeout_s=10)
        wait_active(client, register_all(client, bots))
        client.call("CreateLadder", quick_ladder("shared"))
        wait_for(
            lambda: set(counts(url)) >= {"alpha", "beta"},
            timeout_s=120,
            what="both workers finishing matches",
        )
        other = ArenaClient(beta.address, ADMIN, timeout_s=10)
        standings = other.call("GetStandings", pb.GetStandingsRequest(ladder="shared"))
        assert len(standings.standings) == 3, "both processes see the same ladder"
        beta.process.send_signal(signal.SIGKILL)
        beta.process.wait()
        before = finished(client, "shared")
        time.sleep(0.5)
        wait_for(lambda: finished(client, "shared") >= before + 4, timeout_s=120)
        counts(url)


def test_what_another_process_writes_reaches_this_ones_pool_within_its_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kept matchmaking pool (Arena._pool) against a second store on the same database:
    state changes arrive within pool_refresh_s, ratings and match counts within pool_catch_up_s.
    """
    config = ArenaConfig()
    with postgres_url() as url:
        here, there = open_database(url), open_database(url)
        try:
            theirs = Store(there)
            ids, token = active_bots(theirs, 6)
            ladder_id = theirs.create_ladder(ladder_config())
            with there.transaction() as tx:  # registered long ago, not within the grace period
                tx.execute("UPDATE bots SET state_changed_us = 0")

            async def direct(fn: Callable[..., Any], *args: Any) -> Any:
                return fn(*args)

            async def scenario() -> None:
                clock = trio.lowlevel.current_clock()
                assert isinstance(clock, MockClock)
                metrics = Metrics(["oh-hell"], CollectorRegistry())
                arena = Arena(Store(here), BotPool(), metrics, "127.0.0.1:1", config)
                monkeypatch.setattr(arena, "db", direct)
                pool = await arena._pool(ladder_id, "oh-hell")
                assert len(pool) == 6
                theirs.set_bot_state(ids[0], token, "paused")
                late = theirs.register_bot("alice", token, "late", "oh-hell", "h:1", "1")[0]
                theirs.set_state_by_arena(late.bot_id, "active", "passed validation", 0)
                theirs.enqueue(ladder_id, "ladder", [PlannedMatch(1, tuple(ids[1:4]))])
                claim = theirs.claim("there", 60)
                assert claim is not None
                result = finished_record(claim.match_id, [1, 2, 3], [3, 2, 1])
                ratings = theirs.record_result(result)
                assert ratings

                clock.jump(config.pool_refresh_s - 0.1)
                assert await arena._pool(ladder_id, "oh-hell") is pool and ids[0] in pool
                clock.jump(0.1)
                await arena._pool(ladder_id, "oh-hell")
                assert ids[0] not in pool and late.bot_id in pool, "within pool_refresh_s"
                assert pool.entrant(ids[1]).sigma == INITIAL_SIGMA, "ratings come later"

                clock.jump(config.pool_catch_up_s)
                assert await arena._pool(ladder_id, "oh-hell") is pool
                for bot_id in ids[1:4]:
                    entrant = pool.entrant(bot_id)
                    assert (entrant.sigma, entrant.scheduled) == (ratings[bot_id].sigma, 1)

            trio.run(scenario, clock=MockClock())
        finally:
            here.close()
            there.close()
