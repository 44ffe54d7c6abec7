"""The bots the referee talks to: a pool of endpoints, one channel each, over unary calls
(``referee.bot_endpoint``) or one multiplexed stream (``referee.bot_stream``), closed again
when no match needs them. The endpoint's own names are re-exported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cardarena.bot.v1 import bot_service_pb2
from netkit.tls import ClientTls
from referee import bot_stream
from referee.aio_bridge import await_aio
from referee.bot_endpoint import (
    CONNECT_TIMEOUT_MS,
    MAX_CONCURRENT_CALLS_PER_ENDPOINT,
    MAX_INFO_CHARS,
    MAX_RESPONSE_BYTES,
    SERVICE,
    STREAM_SCHEMES,
    TLS_SCHEME,
    BotEndpoint,
    CallResult,
    Refused,
    RefusedEndpoint,
    classify,
    malformed,
    open_channel,
    read_info,
)

__all__ = [
    "CONNECT_TIMEOUT_MS",
    "MAX_CONCURRENT_CALLS_PER_ENDPOINT",
    "MAX_INFO_CHARS",
    "MAX_RESPONSE_BYTES",
    "SERVICE",
    "STREAM_SCHEMES",
    "TLS_SCHEME",
    "BotEndpoint",
    "BotPool",
    "CallResult",
    "Refused",
    "RefusedEndpoint",
    "classify",
    "malformed",
    "open_channel",
    "read_info",
]


@dataclass
class _Kept:
    """An endpoint in the pool with what decides when its channel closes."""

    endpoint: BotEndpoint
    last_used: float
    holders: int = 0
    forgotten: bool = False


class BotPool:
    """Every endpoint the referee talks to, each with exactly one channel, closed again when it
    is no longer needed.

    A channel closes once nothing holds it (``holding``: a match being played) and no call is
    in flight, and either it was ``forget``-ed (its bot retired, was rejected or moved) or it
    has not been used for ``sweep``'s ``max_idle_s``. The next ``get`` opens a new one.
    Closing is started at once on the host loop and awaited by ``close``.

    ``tls`` is what ``tls://`` endpoints are verified against and the client certificate the
    referee presents to them (None: gRPC's default roots, no client certificate).
    """

    def __init__(
        self,
        max_concurrent_calls: int = MAX_CONCURRENT_CALLS_PER_ENDPOINT,
        tls: ClientTls | None = None,
        clock: Callable[[], float] = time.monotonic,
        heartbeat_s: tuple[float, float] | None = None,
    ) -> None:
        self._kept: dict[str, _Kept] = {}
        self._heartbeat_s = heartbeat_s
        self.outbound_dial: Any = None
        """How to reach an ``outbound://`` bot attached to another arena process (set by the
        arena: ``arena.bot_relay``); None: only bots attached here are reached."""
        self._max_concurrent_calls = max_concurrent_calls
        self._tls = None if tls is None else tls.credentials()
        self._clock = clock
        self._closing: set[asyncio.Task[None]] = set()

    def get(self, target: str | Refused) -> BotEndpoint:
        """The endpoint for ``target``, opening its channel on first use (or after it closed);
        a ``Refused`` seat gets one that never connects."""
        if isinstance(target, Refused):
            return RefusedEndpoint(target)
        kept = self._kept.get(target)
        if kept is None:
            kept = self._kept[target] = _Kept(self._open(target), self._clock())
        kept.last_used, kept.forgotten = self._clock(), False
        return kept.endpoint

    def _open(self, target: str) -> BotEndpoint:
        if target.startswith(STREAM_SCHEMES):  # issue 20: a bot on one multiplexed stream
            extra: dict[str, Any] = {"outbound_dial": self.outbound_dial}
            if self._heartbeat_s is not None:
                extra["heartbeat_s"] = self._heartbeat_s
            return bot_stream.open_stream_bot(
                target, self._max_concurrent_calls, self._tls, **extra
            )
        return BotEndpoint(target, self._max_concurrent_calls, self._tls)

    @contextlib.contextmanager
    def holding(self, targets: Iterable[str | Refused]) -> Iterator[list[BotEndpoint]]:
        """The endpoints of ``targets``, kept open until the block ends (however long it is
        since their last call): what a match holds while it is played."""
        endpoints = [self.get(target) for target in targets]
        held = [self._kept[e.target] for e in endpoints if not isinstance(e, RefusedEndpoint)]
        for kept in held:
            kept.holders += 1
        try:
            yield endpoints
        finally:
            now = self._clock()
            for kept in held:
                kept.holders -= 1
                kept.last_used = now

    def forget(self, target: str) -> None:
        """No bot needs ``target`` any more: close its channel now, or once the matches
        holding it end (at the next ``sweep``). A later ``get`` opens it again."""
        kept = self._kept.get(target)
        if kept is not None:
            kept.forgotten = True
            self._close_if_unused(target, kept)

    def keep_only(self, targets: Iterable[str]) -> None:
        """Forget every endpoint not in ``targets`` (the endpoints some bot still needs)."""
        wanted = set(targets)
        for target in [t for t in self._kept if t not in wanted]:
            self.forget(target)

    def sweep(self, max_idle_s: float) -> int:
        """Close the channels forgotten or idle for ``max_idle_s`` that nothing uses now;
        returns how many closed."""
        now = self._clock()
        closed = 0
        for target, kept in list(self._kept.items()):
            if kept.forgotten or now - kept.last_used >= max_idle_s:
                closed += self._close_if_unused(target, kept)
        return closed

    def last_info(self, target: str) -> bot_service_pb2.GetInfoResponse | None:
        """``target``'s last good GetInfo answer while its channel is open (not a use)."""
        kept = self._kept.get(target)
        return None if kept is None else kept.endpoint.info

    def peek(self, target: str) -> BotEndpoint | None:
        """``target``'s endpoint if it is open now (not a use: nothing is opened)."""
        kept = self._kept.get(target)
        return None if kept is None else kept.endpoint

    def connected(self, target: str) -> bool:
        """Whether ``target``'s stream is open now (False for unary endpoints; not a use)."""
        kept = self._kept.get(target)
        return kept is not None and bool(getattr(kept.endpoint, "connected", False))

    def targets(self) -> list[str]:
        """Every endpoint with an open channel."""
        return list(self._kept)

    def _close_if_unused(self, target: str, kept: _Kept) -> bool:
        if kept.holders or kept.endpoint.calls_in_flight or kept.endpoint.keep_open:
            return False
        del self._kept[target]
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            kept.endpoint.close_channel()
        )
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return True

    async def close(self) -> None:
        """Close every channel (and wait for those already closing)."""
        kept, self._kept = list(self._kept.values()), {}
        for entry in kept:
            await entry.endpoint.close()
        if self._closing:
            pending = list(self._closing)
            await await_aio(lambda: asyncio.gather(*pending))
