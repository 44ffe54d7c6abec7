"""A match's life in the ladder with a real store and real bots: EndMatch only after the result
is committed, a new id for every replay (after a crash, a release, a lost lease), and matches
that keep failing for a reason that is not a bot's fault parked for an operator, who lists,
requeues and voids them through the API and the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from prometheus_client import CollectorRegistry

from arena import ladder as ladder_module
from arena import server as server_module
from arena.client import ArenaClient
from arena.endpoint_guard import GuardPolicy
from arena.endpoint_resolver import EndpointGuard
from arena.ladder import Arena, ArenaConfig
from arena.metrics import Metrics
from arena.server import ServeOptions, serve
from arena.store.repository import Store
from botkit.bot import Bot
from botkit.server import start_server
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, options_pb2, record_pb2
from referee import aio_bridge, runner
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool
from referee.match import Match, MoveLog
from tests.helpers import ROOT, random_bots
from tests.stores import open_store, postgres_available, postgres_url

ADMIN = "admin-secret"


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres" and not postgres_available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL at 127.0.0.1:5432 is not reachable in CI")
        pytest.skip("no PostgreSQL server reachable")
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path) -> Iterator[Store]:
    with open_store(backend, tmp_path) as opened:
        yield opened


def quick_settings() -> options_pb2.GameSettings:
    settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
    settings.options["deal_style"].string_value = "short_low"
    return settings


def ladder_config(name: str = "life") -> pb.LadderConfig:
    return pb.LadderConfig(
        name=name, settings=quick_settings(), move_time_ms=2000, time_bank_ms=5000, concurrency=1
    )


@dataclass
class Recording:
    """What every recording bot was told: (endpoint, "start"/"end", match id, status, ranks)."""

    events: list[tuple[str, str, str, int, tuple[int, ...]]] = field(default_factory=list)

    def bot(self, name: str) -> Bot:
        def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
            return request.legal_actions[0]

        def on_start(request: bot_service_pb2.StartMatchRequest) -> None:
            self.events.append((name, "start", request.match_id, 0, ()))

        def on_end(request: bot_service_pb2.EndMatchRequest) -> None:
            ranks = tuple(request.outcome.ranks)
            self.events.append((name, "end", request.match_id, int(request.status), ranks))

        return Bot(choose, name=name, on_start=on_start, on_end=on_end)

    def ids(self, kind: str) -> list[str]:
        return [match_id for _, what, match_id, *_ in self.events if what == kind]


def check_announcements(store: Store, recording: Recording) -> None:
    """No bot was told two outcomes for one id; every outcome told is the stored one (or the
    match was aborted, and its id is gone: it was replayed under another)."""
    with store.db.transaction() as tx:
        rows = tx.all("SELECT match_id, status FROM matches")
    status = dict(rows)
    ends = [e for e in recording.events if e[1] == "end"]
    assert ends, "some outcome was announced"
    told = [(bot, match_id) for bot, _, match_id, *_ in ends]
    assert len(told) == len(set(told)), "an id announced twice to one bot"
    for _, _, match_id, told_status, ranks in ends:
        assert any(e[1:3] == ("start", match_id) for e in recording.events), "EndMatch alone"
        if told_status == record_pb2.MATCH_STATUS_ABORTED:
            assert match_id not in status, "an aborted id is never played to an end"
            continue
        assert status.get(match_id) == "finished", f"{match_id} announced but not stored"
        record = store.match_record(match_id)
        assert (record.status, tuple(record.outcome.ranks)) == (told_status, ranks)


LOOPBACK_GUARD = EndpointGuard(GuardPolicy(allow_private=True))
"""The recording bots listen on loopback."""


class Harness:
    """Three recording bots (real gRPC servers on the host loop) entered in a ladder."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.recording = Recording()
        self.servers: list[Any] = []
        self.pool = BotPool()
        self.config = ArenaConfig(
            worker_id="w", workers=1, schedule_interval_s=0.05, housekeeping_interval_s=0.2, seed=3
        )

    async def start(self) -> None:
        for index in range(3):  # each its own owner: one owner's bots never meet
            bot = self.recording.bot(f"rec{index}")
            server, address = await await_aio(lambda bot=bot: start_server(bot))  # type: ignore[misc]
            self.servers.append(server)
            row, _ = self.store.register_bot(
                f"ann{index}", None, f"rec{index}", "oh-hell", address, "1"
            )
            self.store.set_state_by_arena(row.bot_id, "active", "", 0)
        self.store.create_ladder(ladder_config())

    async def close(self) -> None:
        await self.pool.close()
        for server in self.servers:
            await await_aio(lambda server=server: server.stop(0.5))  # type: ignore[misc]

    def arena(self, config: ArenaConfig | None = None) -> Arena:
        metrics = Metrics(["oh-hell"], CollectorRegistry())
        return Arena(self.store, self.pool, metrics, "h:1", config or self.config, LOOPBACK_GUARD)

    async def run_until(self, arena: Arena, done: Callable[[], bool]) -> None:
        """Run ``arena`` until ``done()``, then stop it gracefully."""
        async with trio.open_nursery() as nursery:
            await nursery.start(arena.run)
            with trio.fail_after(120):
                while not done():
                    await trio.sleep(0.05)
            arena.stop.set()

    def finished_with_seed(self, seed: int) -> list[str]:
        with self.store.db.transaction() as tx:
            rows = tx.all(
                "SELECT match_id FROM matches WHERE status = 'finished' AND seed = ?", (seed,)
            )
        return [row[0] for row in rows]

    def row(self, match_id: str) -> Any:
        with self.store.db.transaction() as tx:
            return tx.one(
                "SELECT status, claimed_by, seed, failures FROM matches WHERE match_id = ?",
                (match_id,),
            )


def run_harness(store: Store, scenario: Callable[[Harness], Awaitable[None]]) -> Harness:
    harness = Harness(store)

    async def main() -> None:
        await harness.start()
        try:
            await scenario(harness)
        finally:
            await harness.close()

    aio_bridge.run(main)
    return harness


def intercept(
    arena: Arena, name: str, before: Callable[[tuple[Any, ...]], Awaitable[None]]
) -> list[tuple[Any, ...]]:
    """Call ``before(args)`` ahead of the first store call ``name`` the arena makes."""
    real = arena.db
    seen: list[tuple[Any, ...]] = []

    async def db(fn: Callable[..., Any], *args: Any) -> Any:
        if getattr(fn, "__name__", "") == name and not seen:
            seen.append(args)
            await before(args)
        return await real(fn, *args)

    arena.db = db  # type: ignore[method-assign]
    return seen


def test_a_crash_between_play_and_commit_replays_under_a_new_id_and_tells_one_outcome(
    store: Store,
) -> None:
    async def scenario(h: Harness) -> None:
        first = h.arena()
        crash = trio.CancelScope()

        async def die(args: tuple[Any, ...]) -> None:  # the process dies: nothing after this
            crash.cancel()
            await trio.sleep_forever()

        seen = intercept(first, "record_results", die)
        with crash:
            await first.run()
        record = seen[0][0][0]  # the first of the result writer's first batch
        crashed = record.match_id
        assert h.row(crashed)[:2] == ("playing", "w"), "the result was never committed"
        assert h.recording.ids("start").count(crashed) == 3
        assert crashed not in h.recording.ids("end"), "nobody was told the lost outcome"

        again = h.arena()  # restarted with the same worker id: recovers what it held
        await h.run_until(again, lambda: bool(h.finished_with_seed(record.seed)))
        (replayed,) = h.finished_with_seed(record.seed)
        assert replayed != crashed and h.row(crashed) is None
        assert h.recording.ids("end").count(replayed) == 3
        assert h.row(replayed)[3] == 1, "the interrupted attempt is counted"

    harness = run_harness(store, scenario)
    check_announcements(store, harness.recording)


def test_a_match_released_at_shutdown_is_told_aborted_and_replayed_under_a_new_id(
    store: Store,
) -> None:
    async def scenario(h: Harness) -> None:
        first = h.arena()
        stopped: list[str] = []
        on_move = first._on_move

        def stop_mid_match(live: Any, match: Match, move: MoveLog) -> None:
            on_move(live, match, move)
            if move.index == 1 and not stopped:
                stopped.append(next(iter(first.live)))
                first.stop.set()

        first._on_move = stop_mid_match  # type: ignore[method-assign]
        async with trio.open_nursery() as nursery:
            await nursery.start(first.run)
        (released,) = stopped
        assert h.row(released) is None, "the released match left under a new id"
        ends = [e for e in h.recording.events if e[1:3] == ("end", released)]
        assert [e[3] for e in ends] == [record_pb2.MATCH_STATUS_ABORTED] * 3
        with store.db.transaction() as tx:
            seed, failures = tx.one(
                "SELECT seed, failures FROM matches WHERE status = 'waiting' "
                "ORDER BY created_at_us LIMIT 1"
            )
        assert failures == 0, "a release at shutdown is not a failure"
        again = h.arena()
        await h.run_until(again, lambda: bool(h.finished_with_seed(seed)))
        assert released not in h.finished_with_seed(seed)

    harness = run_harness(store, scenario)
    check_announcements(store, harness.recording)


def test_a_worker_that_lost_its_lease_neither_records_nor_announces(store: Store) -> None:
    async def scenario(h: Harness) -> None:
        arena = h.arena()

        async def lease_runs_out(args: tuple[Any, ...]) -> None:
            with h.store.db.transaction() as tx:  # as if renewals had stalled past the lease
                tx.execute("UPDATE matches SET lease_until_us = 0 WHERE status = 'playing'")
            assert h.store.recover(None) == 1  # another process takes the match back

        seen = intercept(arena, "record_results", lease_runs_out)
        await h.run_until(arena, lambda: bool(seen) and len(set(h.recording.ids("end"))) >= 2)
        lost = seen[0][0][0]
        assert h.row(lost.match_id) is None
        assert lost.match_id not in h.recording.ids("end"), "a lost match is not announced"
        assert h.finished_with_seed(lost.seed), "its deal was played again"

    harness = run_harness(store, scenario)
    check_announcements(store, harness.recording)


# -- parking, through a real service ------------------------------------------------------------


def poison_first_deal(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The referee raises mid-match in every attempt at the first deal it plays (a fault of
    the arena, not of a bot); other deals play normally. Returns [the poisoned seed]."""
    real = runner.play_unannounced
    poisoned: list[int] = []

    async def play(spec: Any, pool: Any, on_move: Any, metrics: Any, stop: Any) -> Any:
        if not poisoned and spec.game.options.get("deal_style") == "short_low":  # the ladder's
            poisoned.append(spec.seed)
        if poisoned and spec.seed == poisoned[0]:

            def exploding(match: Match, move: MoveLog) -> None:
                on_move(match, move)
                if move.index == 2:
                    raise RuntimeError("injected referee failure")

            return await real(spec, pool, exploding, metrics, stop)
        return await real(spec, pool, on_move, metrics, stop)

    monkeypatch.setattr(ladder_module, "play_unannounced", play)
    return poisoned


def cli(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args, "--server", address, "--token", ADMIN],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_a_match_that_keeps_failing_is_parked_and_the_operator_requeues_or_voids_it(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = CollectorRegistry()
    monkeypatch.setattr(server_module, "Metrics", lambda games: Metrics(games, registry))
    poisoned = poison_first_deal(monkeypatch)
    with (
        postgres_url() if backend == "postgres" else _sqlite(tmp_path) as database,
        random_bots(3, seed=11) as bots,
    ):
        options = ServeOptions(
            listen="127.0.0.1:0",
            metrics_listen=None,
            database=database,
            admin_token=ADMIN,
            endpoint_policy=LOOPBACK_GUARD.policy,
            arena=ArenaConfig(
                workers=2, schedule_interval_s=0.05, housekeeping_interval_s=0.2, seed=5
            ),
        )

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                address = await nursery.start(serve, options)
                await trio.to_thread.run_sync(operate, address, [b.address for b in bots])
                nursery.cancel_scope.cancel()

        def operate(address: str, endpoints: list[str]) -> None:
            client = ArenaClient(address, timeout_s=10)
            for index, endpoint in enumerate(endpoints):  # one owner each: they may meet
                request = pb.RegisterBotRequest(
                    owner=f"ann{index}", name=f"r{index}", game="oh-hell", endpoint=endpoint
                )
                client.call("RegisterBot", request)
            client.token = ADMIN
            client.call("CreateLadder", pb.CreateLadderRequest(config=ladder_config()))

            def parked() -> Any:
                return client.call("ListParkedMatches", pb.ListParkedMatchesRequest())

            def finished() -> int:
                response = client.call("GetStandings", pb.GetStandingsRequest(ladder="life"))
                return int(response.ladder.matches_finished)

            wait(lambda: parked().total == 1, "the poisoned match parked")
            (match,) = parked().matches
            assert match.failures == 3 and match.failure_kind == pb.MATCH_FAILURE_KIND_PLAY
            assert "injected referee failure" in match.failure_detail
            done = finished()
            wait(lambda: finished() >= done + 2, "the ladder plays on")
            assert parked().total == 1, "only the poisoned deal is parked"
            failures = registry.get_sample_value("cardarena_match_failures_total", {"kind": "play"})
            assert failures == 3
            wait(
                lambda: (
                    registry.get_sample_value("cardarena_matches_parked", {"kind": "play"}) == 1
                ),
                "the parked gauge",
            )
            anonymous = ArenaClient(address, timeout_s=10)
            admin_calls: list[tuple[str, Any]] = [
                ("ListParkedMatches", pb.ListParkedMatchesRequest()),
                ("RequeueMatch", pb.RequeueMatchRequest(match_id=match.match_id)),
                ("VoidMatch", pb.VoidMatchRequest(match_id=match.match_id)),
            ]
            for method, request in admin_calls:
                with pytest.raises(grpc.RpcError) as denied:
                    anonymous.call(method, request, token="owner-token")
                assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

            listed = cli(address, "parked")
            assert listed.returncode == 0 and match.match_id in listed.stdout, listed
            requeued = cli(address, "requeue", match.match_id)
            assert requeued.returncode == 0, requeued
            wait(
                lambda: parked().total == 1 and parked().matches[0].match_id != match.match_id,
                "parked again after three more failures",
            )
            (again,) = parked().matches
            voided = cli(address, "void", again.match_id, "--reason", "breaks the referee")
            assert voided.returncode == 0, voided
            assert parked().total == 0
            record = client.call(
                "GetMatchRecord", pb.GetMatchRecordRequest(match_id=again.match_id)
            )
            assert record.record.status == record_pb2.MATCH_STATUS_VOIDED
            assert record.record.seed == poisoned[0]
            assert "breaks the referee" in record.record.status_detail
            unknown = cli(address, "void", "nope")
            assert unknown.returncode == 2 and "NOT_FOUND" in unknown.stdout

        aio_bridge.run(main)


def wait(condition: Callable[[], Any], what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


class _sqlite:
    """A SQLite file path, as a context manager like ``postgres_url``."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = str(tmp_path / "arena.sqlite3")

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        return None
