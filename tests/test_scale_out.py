"""Scale-out: two arena processes share one PostgreSQL database and one ladder.

Both play matches (claims with SKIP LOCKED leases), and every result is still counted exactly
once; killing one of them mid-ladder leaves its matches to be played again by the other.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, free_port, start_server, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
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

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


@contextmanager
def worker(url: str, name: str, tmp_path: Path) -> Iterator[BotProcess]:
    token_file = tmp_path / "admin"
    token_file.write_text(ADMIN)
    command = [
        sys.executable,
        "-m",
        "arena",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        f"127.0.0.1:{free_port()}",
        "--database-url",
        url,
        "--admin-token-file",
        str(token_file),
        "--worker-id",
        name,
        "--workers",
        "3",
    ]
    with (tmp_path / f"{name}.log").open("a") as log:
        process = start_server(name, command, cwd=str(ROOT), stderr=log.fileno())
        try:
            yield process
        finally:
            stop_bot(process.process, grace_s=15)


def counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as connection:
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
