"""Shared test helpers: real bot processes and running trio code on the gRPC bridge."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TypeVar

from arena.local_bots import BotProcess, start_bot, start_server, stop_bot
from arena.store.coordination import Coordination
from arena.store.db import open_database
from cardarena.game.v1 import record_pb2
from referee import aio_bridge
from referee.bot_client import BotPool
from referee.runner import MatchSpec, play_match

ROOT = Path(__file__).resolve().parent.parent

POLLING_LIMITS = ("--limit-peer-requests", "10000/s")
"""``arena serve`` options for a test that polls and probes faster than the per-address limit a
public arena keeps (20 calls/s). A test of the limits passes its own after them (later flags
win)."""
T = TypeVar("T")


@contextmanager
def server_process(module: str, kind: str, *args: str) -> Iterator[BotProcess]:
    """``python -m tests.bots.MODULE *args`` (it prints ``LISTENING``) for the block."""
    command = [sys.executable, "-m", f"tests.bots.{module}", *args]
    bot = start_server(kind, command, cwd=str(ROOT))
    try:
        yield bot
    finally:
        stop_bot(bot.process)


def misbehaving_bot(mode: str, *args: str) -> AbstractContextManager[BotProcess]:
    """A ``tests.bots.misbehaving`` server process for the duration of the block."""
    return server_process("misbehaving", mode, mode, *args)


def fuzzing_bot(seed: int, *args: str) -> AbstractContextManager[BotProcess]:
    """A ``tests.bots.fuzzing`` server process (random and mutated answers) for the block."""
    return server_process("fuzzing", f"fuzzing-{seed}", "--seed", str(seed), *args)


def transport_server(mode: str) -> AbstractContextManager[BotProcess]:
    """A ``tests.bots.transport`` server (a connection unusable for gRPC) for the block."""
    return server_process("transport", mode, mode)


@contextmanager
def random_bots(count: int, seed: int = 0) -> Iterator[list[BotProcess]]:
    """``count`` sample random bots, each its own process."""
    bots = [start_bot("random", seed + i) for i in range(count)]
    try:
        yield bots
    finally:
        for bot in bots:
            stop_bot(bot.process)


def run_on_bridge(fn: Callable[[BotPool], Awaitable[T]]) -> T:
    """Run ``fn(pool)`` under trio on the asyncio host, closing the pool afterwards."""

    async def main() -> T:
        pool = BotPool()
        try:
            return await fn(pool)
        finally:
            await pool.close()

    return aio_bridge.run(main)


def play(spec: MatchSpec) -> record_pb2.MatchRecord:
    """Play one match over real gRPC and return its record."""
    return run_on_bridge(lambda pool: play_match(spec, pool))


def registered_address(database_url: str, worker_id: str) -> str | None:
    """The API address the live arena process ``worker_id`` registered (None: not alive)."""
    database = open_database(database_url)
    try:
        workers = Coordination(database).workers()
    finally:
        database.close()
    return next((w.address for w in workers if w.worker_id == worker_id and w.alive), None)
