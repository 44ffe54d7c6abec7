"""Resources follow bots: the referee's channels close when their bots retire or go idle, never
under a match or a call, and 200 registered-then-retired bots leave no file descriptor open."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio
from prometheus_client import CollectorRegistry

from arena.endpoint_guard import GuardPolicy, parse_networks
from arena.endpoint_resolver import EndpointGuard
from arena.ladder import Arena, ArenaConfig
from arena.local_bots import LOOPBACK, start_server, stop_bot
from arena.metrics import Metrics
from arena.store.repository import Store
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2
from referee.bot_client import BotPool
from tests.helpers import ROOT, misbehaving_bot, random_bots, run_on_bridge
from tests.stores import open_store


def loopback_guard() -> EndpointGuard:
    """The endpoint guard of a local arena: bots on loopback may play."""
    return EndpointGuard(GuardPolicy(allowed_networks=parse_networks(LOOPBACK)))


def open_fds() -> int:
    """File descriptors this process has open now."""
    return len(os.listdir("/proc/self/fd"))


async def fds_down_to(limit: int) -> int:
    """Wait (a bounded while) for this process's descriptors to drop to ``limit``: a closed
    channel lets go of its socket on gRPC's own threads, a moment later."""
    with trio.move_on_after(20):
        while open_fds() > limit:
            await trio.sleep(0.05)
    return open_fds()


@contextmanager
def many_endpoints(count: int) -> Iterator[list[str]]:
    """``count`` bot endpoints served by one other process."""
    command = [sys.executable, "-m", "tests.bots.many_ports", str(count)]
    process = start_server("many-ports", command, cwd=str(ROOT))
    try:
        yield process.address.split(",")
    finally:
        stop_bot(process.process)


def test_idle_and_forgotten_channels_close_but_never_a_held_one() -> None:
    now = [0.0]

    async def scenario(address: str) -> None:
        pool = BotPool(clock=lambda: now[0])
        try:
            first = pool.get(address)
            assert (await first.get_info(5)).fault is None
            now[0] = 299.0
            assert pool.sweep(max_idle_s=300) == 0 and pool.targets() == [address]
            now[0] = 300.0
            assert pool.sweep(max_idle_s=300) == 1 and pool.targets() == []
            second = pool.get(address)
            assert second is not first, "a closed channel is opened again on use"
            with pool.holding([address]) as (held,):
                assert held is second
                now[0] = 10_000.0
                pool.forget(address)
                assert pool.sweep(max_idle_s=300) == 0, "a match holds it"
                assert (await held.get_info(5)).fault is None, "and it still works"
            assert pool.targets() == [address], "forgotten, closed at the next sweep"
            assert pool.sweep(max_idle_s=300) == 1 and pool.targets() == []
            pool.get(address)
            pool.forget(address)
            assert pool.targets() == [], "nothing holds it: closed at once"
        finally:
            await pool.close()

    with random_bots(1) as (bot,):
        run_on_bridge(lambda _: scenario(bot.address))


def test_a_channel_with_a_call_in_flight_is_not_closed() -> None:
    async def scenario(address: str) -> None:
        pool = BotPool()
        try:
            endpoint = pool.get(address)
            async with trio.open_nursery() as nursery:
                # A request the bot can read: it then never answers ("hang").
                request = bot_service_pb2.ChooseActionRequest(legal_actions=[game_pb2.Action()])
                nursery.start_soon(endpoint.choose_action, request, 30.0)
                await trio.sleep(0.5)  # the call is under way (it would last 30 s)
                assert endpoint.calls_in_flight == 1
                pool.forget(address)
                assert pool.sweep(max_idle_s=0) == 0 and pool.targets() == [address]
                nursery.cancel_scope.cancel()
            assert endpoint.calls_in_flight == 0
            assert pool.sweep(max_idle_s=300) == 1 and pool.targets() == []
        finally:
            await pool.close()

    with misbehaving_bot("hang", "--listen", "127.0.0.1:0") as bot:
        run_on_bridge(lambda _: scenario(bot.address))


def test_200_bots_registered_and_retired_leave_no_descriptor_open(tmp_path: Path) -> None:
    """Half retire through the API process (``forget`` at once), half through another
    process (the store only): the next health sweep notices and closes their channels."""

    async def scenario(store: Store, addresses: list[str], ids: list[str], token: str) -> None:
        pool = BotPool()
        metrics = Metrics(["oh-hell"], CollectorRegistry())
        arena = Arena(store, pool, metrics, "127.0.0.1:1", ArenaConfig(), loopback_guard())
        try:
            warm = pool.get(addresses[0])  # gRPC's own descriptors (pollers, wakeups) first
            assert (await warm.get_info(5)).fault is None
            pool.forget(addresses[0])
            before = await fds_down_to(open_fds() - 1)  # that one connection closed

            await arena.sweep_once()  # probes all 200: a connection each
            assert sorted(pool.targets()) == sorted(f"ipv4:{a}" for a in addresses)
            opened = open_fds()
            assert opened >= before + 200, "every probe opened a connection"

            for bot_id, address in zip(ids[:100], addresses[:100], strict=True):
                store.set_bot_state(bot_id, token, "retired")
                arena.forget_endpoint(address)  # what ArenaService.SetBotState does
            assert len(pool.targets()) == 100
            assert await fds_down_to(opened - 100) <= opened - 100

            for bot_id in ids[100:]:
                store.set_bot_state(bot_id, token, "retired")
            await arena.sweep_once()
            assert pool.targets() == []
            assert await fds_down_to(before) <= before, "back to where it was"
        finally:
            await pool.close()

    with many_endpoints(200) as addresses, open_store("sqlite", tmp_path) as store:
        token = None
        ids = []
        for index, address in enumerate(addresses):
            bot, new_token = store.register_bot(
                "alice", token, f"b{index}", "oh-hell", address, "1"
            )
            token = token or new_token
            ids.append(bot.bot_id)
            store.set_state_by_arena(bot.bot_id, "active", "", 0)
        assert token is not None
        run_on_bridge(lambda _: scenario(store, addresses, ids, token))
