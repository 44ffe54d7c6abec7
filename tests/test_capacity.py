"""A per-bot limit on matches at once: announced by the bot, capped by the ladder, held by the
claim on SQLite and across processes on PostgreSQL, freed by whatever puts a match back."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import grpc
import pytest
from prometheus_client import CollectorRegistry

from arena.client import ArenaClient
from arena.ladder import Arena, ArenaConfig
from arena.local_bots import bot_command, free_port, start_server, stop_bot
from arena.matchmaking import PlannedMatch
from arena.metrics import Metrics
from arena.store.claims import (
    DEFAULT_MAX_MATCHES_PER_BOT,
    HOUSE_RANDOM,
    MAX_MATCHES_PER_BOT_LIMIT,
    match_limit,
)
from arena.store.db import open_database
from arena.store.repository import Store
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2
from referee.bot_client import BotPool
from tests.helpers import ROOT, random_bots, run_on_bridge
from tests.stores import open_store, postgres_available, postgres_url
from tests.test_bot_pool import loopback_guard
from tests.test_ladder_e2e import (
    ADMIN,
    arena_service,
    finished,
    quick_ladder,
    register_all,
    wait_active,
    wait_for,
)
from tests.test_store import active_bots, finished_record, ladder_config


@pytest.mark.parametrize(
    ("announced", "cap", "limit"),
    [
        (None, 0, 1),  # not heard yet: one match, the one that asks
        (None, 7, 1),
        (0, 0, DEFAULT_MAX_MATCHES_PER_BOT),  # no preference: the ladder's cap
        (0, 7, 7),
        (2, 0, 2),
        (2, 7, 2),
        (9, 3, 3),  # the ladder caps what the bot asks for
        (2**32 - 1, 0, DEFAULT_MAX_MATCHES_PER_BOT),
        (2**32 - 1, 2**32 - 1, MAX_MATCHES_PER_BOT_LIMIT),
    ],
)
def test_a_bots_limit_is_its_announcement_within_the_ladders_cap(
    announced: int | None, cap: int, limit: int
) -> None:
    assert match_limit(announced, cap) == limit


def playing(store: Store) -> Counter[str]:
    """Each bot's matches being played now, read straight from the queue."""
    with store.db.transaction() as tx:
        rows = tx.all("SELECT seats FROM matches WHERE status = 'playing'")
    return Counter(b for (seats,) in rows for b in set(seats.split(",")) - {HOUSE_RANDOM})


def test_a_match_waits_while_one_of_its_bots_is_at_its_limit(store: Store) -> None:
    (one, b, c), _ = active_bots(store, 3)
    store.set_announced_limits({one: 1})
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    for seats in ((one, b), (one, c), (b, c)):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(1, seats)])
    first = store.claim("w", 60)
    assert first is not None and first.seats == (one, b)
    second = store.claim("w", 60)
    assert second is not None and second.seats == (b, c), "the older match waits for `one`"
    assert store.claim("w", 60) is None
    assert store.record_result(finished_record(first.match_id, [1, 2], [1, 0])) is not None
    third = store.claim("w", 60)
    assert third is not None and third.seats == (one, c), "its slot is free again"


def test_the_ladders_cap_bounds_what_a_bot_announces(store: Store) -> None:
    (greedy, *others), _ = active_bots(store, 6)
    store.set_announced_limits({greedy: 10_000})
    config = ladder_config(seats=2)
    config.max_matches_per_bot = 2
    ladder_id = store.create_ladder(config)
    store.enter_active_bots(ladder_id, "oh-hell")
    for index, other in enumerate(others):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(index, (greedy, other))])
    claims = [store.claim("w", 60) for _ in range(len(others))]
    assert sum(claim is not None for claim in claims) == 2
    assert playing(store)[greedy] == 2
    with store.db.transaction() as tx:
        stored = tx.one("SELECT max_matches FROM bots WHERE bot_id = ?", (greedy,))[0]
    assert stored == MAX_MATCHES_PER_BOT_LIMIT, "a uint32 announcement is stored clamped"


def test_a_bot_not_heard_yet_plays_one_match_at_a_time(store: Store) -> None:
    newcomer, _ = store.register_bot("bob", None, "new", "oh-hell", "127.0.0.1:1", "1")
    seats = (newcomer.bot_id, HOUSE_RANDOM, HOUSE_RANDOM)
    store.enqueue(None, "validation", [PlannedMatch(1, seats), PlannedMatch(2, seats)])
    first = store.claim("w", 60)
    assert first is not None and store.claim("w", 60) is None
    store.set_announced_limits({newcomer.bot_id: 0})  # heard at the first match's start
    assert store.claim("w", 60) is not None


def test_release_and_expired_leases_free_a_bots_slots(store: Store) -> None:
    (one, b, c), _ = active_bots(store, 3)
    store.set_announced_limits({one: 1})
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    for seats in ((one, b), (one, c)):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(1, seats)])
    crashed = store.claim("crashed", -1)  # its worker died: the lease is already over
    assert crashed is not None and store.claim("w", 60) is None
    assert store.recover("w") == 1
    again = store.claim("w", 60)
    assert again is not None and again.seats == crashed.seats, "the crashed match, played again"
    assert again.match_id != crashed.match_id, "under a new id (issue 17: one outcome per id)"
    store.release(again.match_id, "w")
    assert playing(store)[one] == 0
    assert store.claim("w", 60) is not None and store.claim("w", 60) is None


def claim_side_by_side(stores: list[Store], threads: int) -> list[str]:
    """Claim until nothing is claimable from ``threads`` threads spread over ``stores``, all
    starting at once; every match id claimed."""
    claimed: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def worker(store: Store, name: str) -> None:
        start.wait()
        while (claim := store.claim(name, 60)) is not None:
            with lock:
                claimed.append(claim.match_id)

    running = [
        threading.Thread(target=worker, args=(stores[i % len(stores)], f"w{i}"))
        for i in range(threads)
    ]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return claimed


@pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)
def test_two_processes_claiming_at_once_never_exceed_a_bots_limit() -> None:
    """Two stores (two arena processes' worth) and eight threads claim from one queue in which
    every match has bot ``shared`` (limit 2) or ``loner`` (limit 1): each round, exactly the
    limit is claimed, whoever wins, and the other matches still go."""
    with postgres_url() as url:
        databases = [open_database(url), open_database(url)]
        try:
            stores = [Store(database) for database in databases]
            ids, _ = active_bots(stores[0], 10)
            shared, loner, others = ids[0], ids[1], ids[2:]
            stores[0].set_announced_limits({shared: 2, loner: 1})
            config = ladder_config(seats=2)
            config.max_matches_per_bot = 100
            ladder_id = stores[0].create_ladder(config)
            stores[0].enter_active_bots(ladder_id, "oh-hell")
            for round_ in range(3):
                for index, other in enumerate(others):
                    for bot in (shared, loner):
                        planned = [PlannedMatch(round_ * 100 + index, (bot, other))]
                        stores[0].enqueue(ladder_id, "ladder", planned)
                free = [(a, b) for a, b in zip(others[::2], others[1::2], strict=True)]
                for a, b in free:  # matches of neither, to show claims really ran side by side
                    stores[0].enqueue(ladder_id, "ladder", [PlannedMatch(round_, (a, b))])
                claimed = claim_side_by_side(stores, threads=8)
                now = playing(stores[1])
                assert (now[shared], now[loner]) == (2, 1), f"round {round_}: {now}"
                assert len(claimed) == len(set(claimed)) == 3 + len(free)
                for match_id in claimed:  # finish the round: every slot is free again
                    record = finished_record(match_id, [1, 2], [1, 0])
                    assert stores[round_ % 2].record_result(record) is not None
        finally:
            for database in databases:
                database.close()


# -- a real ladder with a bot that announces 1 --------------------------------------------------


def busiest(intervals: list[tuple[int, int]]) -> int:
    """The most of ``intervals`` (start, end) that overlap at one moment."""
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    most = now = 0
    for _, step in edges:  # at a tie an end comes first (-1 sorts before 1)
        now += step
        most = max(most, now)
    return most


def matches_by_endpoint(db: Path) -> dict[str, list[tuple[int, int]]]:
    """Every finished match's time span, for each endpoint that played in it."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        blobs = connection.execute("SELECT record FROM records").fetchall()
    spans: dict[str, list[tuple[int, int]]] = {}
    for (blob,) in blobs:
        record = record_pb2.MatchRecord.FromString(blob)
        # The record names the target the referee dialled (``ipv4:`` + the checked address).
        for endpoint in {seat.endpoint.removeprefix("ipv4:") for seat in record.seats}:
            spans.setdefault(endpoint, []).append((record.started_at_us, record.finished_at_us))
    return spans


def test_a_ladder_never_gives_a_bot_more_matches_at_once_than_it_announced(
    tmp_path: Path,
) -> None:
    limited_command = [*bot_command("random", 9), "--max-concurrent-matches", "1"]
    with (
        arena_service(tmp_path) as service,  # 4 workers
        random_bots(4, seed=3) as bots,
        contextlib.closing(ArenaClient(service.address, ADMIN, timeout_s=10)) as client,
    ):
        limited = start_server("random", limited_command)
        try:
            ids = register_all(client, [*bots, limited])
            wait_active(client, ids)
            created = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "arena",
                    "create-ladder",
                    "capped",
                    "--game",
                    "oh-hell",
                    "--seats",
                    "3",
                    "--option",
                    "deal_style=short_low",
                    "--concurrency",
                    "4",
                    "--max-matches-per-bot",
                    "3",
                    "--server",
                    service.address,
                    "--token",
                    ADMIN,
                ],
                cwd=str(ROOT),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert created.returncode == 0, created.stdout + created.stderr
            ladders = client.call("ListLadders", pb.ListLaddersRequest()).ladders
            assert [ladder.config.max_matches_per_bot for ladder in ladders] == [3]
            wait_for(lambda: finished(client, "capped") >= 20, timeout_s=180, what="20 matches")
            with contextlib.closing(sqlite3.connect(service.db)) as connection:
                announced = connection.execute(
                    "SELECT max_matches FROM bots WHERE endpoint = ?", (limited.address,)
                ).fetchone()[0]
        finally:
            stop_bot(limited.process)
    assert announced == 1
    spans = matches_by_endpoint(service.db)
    assert busiest(spans[limited.address]) == 1, "its validation and ladder matches one by one"
    others = [busiest(spans[bot.address]) for bot in bots]
    assert max(others) <= 3, f"the ladder's cap: {others}"
    assert max(others) >= 2, f"the other bots did play side by side: {others}"


def test_a_ladder_refuses_a_cap_over_the_limit(tmp_path: Path) -> None:
    with (
        arena_service(tmp_path) as service,
        contextlib.closing(ArenaClient(service.address, ADMIN, timeout_s=10)) as client,
    ):
        request = quick_ladder("too-many")
        request.config.max_matches_per_bot = MAX_MATCHES_PER_BOT_LIMIT + 1
        with pytest.raises(grpc.RpcError) as refused:
            client.call("CreateLadder", request)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "max_matches_per_bot" in str(refused.value.details())


# -- health probes with back-off -----------------------------------------------------------------


def test_a_pulled_bot_is_probed_with_back_off_and_restored_when_it_answers(
    tmp_path: Path,
) -> None:
    """Sweeps every 30 s of fake time against a bot that is down: probed at every sweep until
    it is pulled (3 failures), then after 60, 120, 240 s and at most every 300 s; back, it is
    restored at its next due probe, its announcement stored, and probed at every sweep again."""
    address = f"127.0.0.1:{free_port()}"
    config = ArenaConfig(
        health_interval_s=30, health_backoff_max_s=300, channel_idle_s=60, health_failures_to_pull=3
    )
    clock = [0.0]
    start_us = 1_000_000_000_000
    registry = CollectorRegistry()

    with open_store("sqlite", tmp_path) as store:
        bot, _ = store.register_bot("ann", None, "flaky", "oh-hell", address, "1")
        store.set_state_by_arena(bot.bot_id, "active", "passed validation", 0)

        async def sweeps(arena: Arena, until: int) -> list[int]:
            """Sweep every 30 s of fake time up to ``until``; the times the bot was probed."""
            probed = []
            while clock[0] <= until:
                before = probes()
                await arena.sweep_once(now=start_us + int(clock[0] * 1e6))
                if probes() > before:
                    probed.append(int(clock[0]))
                clock[0] += 30
            return probed

        def probes() -> float:
            return sum(
                registry.get_sample_value("cardarena_health_probes_total", {"result": r}) or 0
                for r in ("ok", "failed")
            )

        def pulled_gauge() -> float | None:
            return registry.get_sample_value("cardarena_bots_pulled")

        async def scenario(_: BotPool) -> None:
            pool = BotPool(clock=lambda: clock[0])
            metrics = Metrics(["oh-hell"], registry)
            arena = Arena(store, pool, metrics, "127.0.0.1:1", config, loopback_guard())
            try:
                down = await sweeps(arena, 1950)
                assert down == [0, 30, 60, 120, 240, 480, 780, 1080, 1380, 1680]
                gone = store.bot(bot.bot_id)
                assert (gone.state, gone.health_failures) == ("unhealthy", 10)
                assert pulled_gauge() == 1
                assert pool.targets() == [], "no channel kept open between probes 300 s apart"
                command = [*bot_command("random"), "--max-concurrent-matches", "3"]
                command[command.index("--listen") + 1] = address
                back = start_server("random", command)
                try:
                    assert await sweeps(arena, 2070) == [1980, 2010, 2040, 2070]
                finally:
                    stop_bot(back.process)
                restored = store.bot(bot.bot_id)
                assert (restored.state, restored.health_failures) == ("active", 0)
                assert pulled_gauge() == 0
                with store.db.transaction() as tx:
                    row = tx.one("SELECT max_matches FROM bots WHERE bot_id = ?", (bot.bot_id,))
                assert row[0] == 3, "the sweep stores what the bot announces"
            finally:
                await pool.close()

        run_on_bridge(scenario)


def test_probe_delay_doubles_from_the_pull_up_to_its_cap() -> None:
    arena = Arena.__new__(Arena)
    arena.config = ArenaConfig(health_interval_s=30, health_backoff_max_s=3600)
    delays = [arena.probe_delay_s(failures) for failures in range(1, 12)]
    assert delays == [30, 30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
