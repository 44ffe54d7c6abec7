"""Many arena processes on one PostgreSQL database act as one arena (issue 19): roles split
across processes, one scheduler per ladder with failover, takeover of a dead referee's
matches, unique worker ids, and readiness that turns false while a process drains.

Real ``arena serve`` processes and real bot processes; the database is read directly to
check what the processes must hold between them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.client import ArenaClient
from arena.local_bots import arena_serve_command
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import ROOT, misbehaving_bot, random_bots
from tests.stores import postgres_available, postgres_url
from tests.test_ladder_e2e import ADMIN, quick_ladder, register_all, wait_active, wait_for
from tests.test_match_lifecycle import cli
from tests.test_scale_out import counts, worker

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


def rows(url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return list(connection.execute(sql, params).fetchall())


def lease_holder(url: str, name: str) -> str | None:
    found = rows(
        url,
        "SELECT holder FROM leases WHERE name = %s AND until_us > "
        "EXTRACT(EPOCH FROM clock_timestamp()) * 1000000",
        (name,),
    )
    return str(found[0][0]) if found else None


@contextmanager
def cap_sampler(url: str, ladder: str, target: int, concurrency: int) -> Iterator[list[str]]:
    """Read the queue every 50 ms in one snapshot; yields the violations seen so far."""
    violations: list[str] = []
    done = threading.Event()

    def sample() -> None:
        with psycopg.connect(url) as connection:
            connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            while not done.is_set():
                with connection.transaction():
                    found = connection.execute(
                        "SELECT COUNT(*) FILTER (WHERE m.status IN ('waiting', 'playing')), "
                        "COUNT(*) FILTER (WHERE m.status = 'playing') FROM matches m "
                        "JOIN ladders l ON l.ladder_id = m.ladder_id WHERE l.name = %s",
                        (ladder,),
                    ).fetchone()
                assert found is not None
                queued, playing = found
                if queued > target:
                    violations.append(f"{queued} queued > target {target}")
                if playing > concurrency:
                    violations.append(f"{playing} playing > concurrency {concurrency}")
                time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield violations
    finally:
        done.set()
        thread.join(10)


def ladder_id_of(client: ArenaClient, name: str) -> str:
    ladders = client.call("ListLadders", pb.ListLaddersRequest()).ladders
    return str(next(ladder.ladder_id for ladder in ladders if ladder.config.name == name))


def validation_sets(url: str) -> dict[str, int]:
    """Validation matches per bot (each has one non-house seat)."""
    found: dict[str, int] = {}
    for (seats,) in rows(url, "SELECT seats FROM matches WHERE kind = 'validation'"):
        for bot in {s for s in str(seats).split(",") if s != "house:random"}:
            found[bot] = found.get(bot, 0) + 1
    return found


def test_api_scheduler_and_two_referees_as_four_processes(tmp_path: Path) -> None:
    ladder = quick_ladder("split")
    ladder.config.concurrency = 3
    with (
        postgres_url() as url,
        random_bots(4, seed=5) as bots,
        worker(url, "api", tmp_path, "--role", "api") as api,
        worker(url, "sched", tmp_path, "--role", "scheduler"),
        worker(url, "ref1", tmp_path, "--role", "referee"),
        worker(url, "ref2", tmp_path, "--role", "referee"),
    ):
        client = ArenaClient(api.address, ADMIN, timeout_s=10)
        ids = register_all(client, bots)
        wait_active(client, ids)
        assert validation_sets(url) == dict.fromkeys(ids, 2), "two validation matches each"
        with cap_sampler(url, "split", target=6, concurrency=3) as violations:
            client.call("CreateLadder", ladder)
            wait_for(
                lambda: set(counts(url)) == {"ref1", "ref2"} and sum(counts(url).values()) >= 12,
                timeout_s=180,
                what="both referees finishing matches",
            )
        assert violations == [], violations[:5]
        ladder_id = ladder_id_of(client, "split")
        assert lease_holder(url, f"ladder:{ladder_id}") == "sched"
        assert lease_holder(url, "validation") == "sched"
        played_by = {str(w) for (w,) in rows(url, "SELECT DISTINCT claimed_by FROM matches")}
        assert played_by <= {"ref1", "ref2", "None"}, "only referees play"
        workers = dict(rows(url, "SELECT worker_id, roles FROM workers"))
        assert workers == {"api": "", "sched": "scheduler", "ref1": "referee", "ref2": "referee"}
        listing = client.call("ListWorkers", pb.ListWorkersRequest())
        assert {w.worker_id: tuple(w.roles) for w in listing.workers if w.alive} == {
            "api": (),
            "sched": ("scheduler",),
            "ref1": ("referee",),
            "ref2": ("referee",),
        }
        assert (f"ladder:{ladder_id}", "sched") in {(x.name, x.holder) for x in listing.leases}
        with pytest.raises(grpc.RpcError) as denied:
            ArenaClient(api.address, None).call("ListWorkers", pb.ListWorkersRequest())
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        shown = cli(api.address, "workers")
        assert shown.returncode == 0 and "ref2" in shown.stdout, shown.stderr
        assert f"ladder:{ladder_id}" in shown.stdout and "sched" in shown.stdout


def test_the_scheduler_fails_over_and_a_dead_referees_matches_are_taken_over(
    tmp_path: Path,
) -> None:
    with (
        postgres_url() as url,
        random_bots(4, seed=9) as bots,
        worker(url, "a", tmp_path, "--health-interval-s", "2") as a,
        worker(url, "b", tmp_path, "--health-interval-s", "2") as b,
    ):
        client = ArenaClient(a.address, ADMIN, timeout_s=10)
        wait_active(client, register_all(client, bots))
        client.call("CreateLadder", quick_ladder("failover"))
        ladder_id = ladder_id_of(client, "failover")
        lease = f"ladder:{ladder_id}"
        holder = wait_for(lambda: lease_holder(url, lease), what="a scheduler")
        victim, survivor = (a, b) if holder == "a" else (b, a)
        survivor_id = "b" if holder == "a" else "a"
        wait_for(
            lambda: rows(
                url, "SELECT 1 FROM matches WHERE status = 'playing' AND claimed_by = %s", (holder,)
            ),
            timeout_s=60,
            what="the scheduler playing a match",
        )
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait()
        killed = time.monotonic()
        wait_for(lambda: lease_holder(url, lease) == survivor_id, timeout_s=30, what="failover")
        failover_s = time.monotonic() - killed
        wait_for(
            lambda: (
                not rows(
                    url,
                    "SELECT 1 FROM matches WHERE status = 'playing' AND claimed_by = %s",
                    (holder,),
                )
            ),
            timeout_s=30,
            what="the dead worker's matches taken over",
        )
        takeover_s = time.monotonic() - killed
        print(f"failover {failover_s:.1f} s, takeover {takeover_s:.1f} s after SIGKILL")
        before = sum(counts(url).values())
        other = ArenaClient(survivor.address, ADMIN, timeout_s=10)
        wait_for(lambda: sum(counts(url).values()) >= before + 3, timeout_s=120)
        interrupted = rows(
            url,
            "SELECT COUNT(*) FROM matches WHERE failure_kind = 'interrupted' "
            "AND failure_detail LIKE %s",
            (f"%{holder}%",),
        )
        assert interrupted[0][0] >= 1, "the requeued matches say whose they were"
        assert other.call("ListLadders", pb.ListLaddersRequest()).ladders[0].matches_finished
        counts(url)


def test_a_second_process_with_a_live_worker_id_refuses_to_start(tmp_path: Path) -> None:
    with postgres_url() as url, worker(url, "twin", tmp_path):
        token_file = tmp_path / "admin"
        command = arena_serve_command(token_file, ["--database-url", url], 1, "--worker-id", "twin")
        # The first one's pid is on this host and alive: a real second process, not a restart.
        second = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )
        assert second.returncode == 1
        assert "worker id 'twin' is in use by a live arena process" in second.stderr
        assert "Traceback" not in second.stderr


def health(channel: grpc.Channel, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        answer = stub.Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(service=service), timeout=2
        )
    except grpc.RpcError:
        return -1
    return int(answer.status)


def test_readiness_turns_false_while_draining_and_liveness_stays_true(tmp_path: Path) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    with (
        postgres_url() as url,
        misbehaving_bot("sleep", "--sleep-ms", "400") as slow,
        worker(url, "drain", tmp_path, "--shutdown-grace-s", "20") as process,
    ):
        client = ArenaClient(process.address, ADMIN, timeout_s=10)
        register_all(client, [slow])
        wait_for(  # its validation match: a move every 400 ms
            lambda: rows(url, "SELECT 1 FROM matches WHERE status = 'playing'"),
            what="a match in flight",
        )
        seen: set[tuple[int, int]] = set()
        with grpc.insecure_channel(process.address) as channel:
            assert (health(channel, ""), health(channel, "liveness")) == (serving, serving)
            process.process.send_signal(signal.SIGTERM)
            while process.process.poll() is None:
                seen.add((health(channel, ""), health(channel, "liveness")))
                time.sleep(0.01)
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
        assert (not_serving, serving) in seen, f"draining: not ready, still live ({seen})"
        assert rows(url, "SELECT draining FROM workers") == [], "a clean stop leaves no row"


def test_a_process_whose_own_lease_ran_out_stops_its_matches_and_registers_again(
    tmp_path: Path,
) -> None:
    """A stalled process (its lease ran out: another may have taken its matches) must not go
    on with the matches it was playing under their ids; it registers again and plays on."""
    with (
        postgres_url() as url,
        misbehaving_bot("sleep", "--sleep-ms", "200") as slow,
        worker(url, "stall", tmp_path, "--lease-s", "1") as process,
    ):
        client = ArenaClient(process.address, ADMIN, timeout_s=10)
        register_all(client, [slow])
        playing = wait_for(  # its validation match: a move every 200 ms
            lambda: rows(url, "SELECT match_id FROM matches WHERE status = 'playing'"),
            what="a match in flight",
        )[0][0]
        (before,) = rows(url, "SELECT incarnation FROM workers WHERE worker_id = 'stall'")[0]
        with psycopg.connect(url) as connection:
            connection.execute("UPDATE workers SET alive_until_us = 0")
        wait_for(
            lambda: rows(url, "SELECT 1 FROM workers WHERE incarnation <> %s", (before,)),
            timeout_s=30,
            what="registering again",
        )
        wait_for(
            lambda: not rows(url, "SELECT 1 FROM matches WHERE match_id = %s", (playing,)),
            timeout_s=30,
            what="the stalled match requeued under a new id",
        )
        wait_for(
            lambda: rows(url, "SELECT 1 FROM matches WHERE status = 'playing'"),
            timeout_s=30,
            what="playing again",
        )
    log = (tmp_path / "stall.log").read_text()
    assert "registration ran out before it was renewed" in log, log[-2000:]
    assert f"match {playing}: lease lost while playing; not recorded" in log, log[-2000:]
