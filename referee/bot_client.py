"""Calling bots: one reused gRPC channel per endpoint, every failure turned into a ``Fault``.

Channels are ``grpc.aio`` objects living on the host loop of ``aio_bridge``; every call goes
through ``aio_bridge.await_aio`` so a cancelled trio scope cancels the RPC. A bot's answer is
capped at ``MAX_RESPONSE_BYTES``; keepalive stays within what a default gRPC server accepts.
An endpoint written ``tls://host:port`` gets a TLS channel with the pool's credentials.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
import trio

from botkit.tls import ClientTls
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc
from referee.aio_bridge import await_aio
from referee.match import Fault, FaultKind

MAX_RESPONSE_BYTES = 64 * 1024
"""Largest answer a bot may send; a move is a few dozen bytes."""

MAX_CONCURRENT_CALLS_PER_ENDPOINT = 256
"""Calls in flight to one bot endpoint at once; more wait their turn (their clock not started)."""

CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
    # A default gRPC server rejects pings more often than every 5 minutes (doc/keepalive.md).
    ("grpc.keepalive_time_ms", 300_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # One subchannel per channel, so each bot endpoint gets its own connection.
    ("grpc.use_local_subchannel_pool", 1),
)


CHOOSE_ACTION_METHOD = "/cardarena.bot.v1.BotService/ChooseAction"

TLS_SCHEME = "tls://"
"""An endpoint written ``tls://host:port`` is dialled with TLS, its host name verified."""


def open_channel(target: str, tls: grpc.ChannelCredentials | None = None) -> grpc.aio.Channel:
    """A channel to a bot endpoint: ``tls://host:port`` over TLS with ``tls`` (None: gRPC's
    default roots), anything else in plaintext. The host name stays in the target, so gRPC
    verifies the bot's certificate against it. ``tls://NAME@ADDRESS`` (what the arena's
    endpoint guard hands over: an address it checked, such as ``ipv4:1.2.3.4:443``) dials
    ADDRESS and verifies the certificate against NAME, so gRPC does no DNS of its own."""
    if target[: len(TLS_SCHEME)].lower() != TLS_SCHEME:
        return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
    credentials = tls or grpc.ssl_channel_credentials()
    name, at, address = target[len(TLS_SCHEME) :].rpartition("@")
    if not at:
        return grpc.aio.secure_channel(address, credentials, CHANNEL_OPTIONS)
    options = (*CHANNEL_OPTIONS, ("grpc.ssl_target_name_override", name))
    return grpc.aio.secure_channel(address, credentials, options)


def _since_us(started_ns: int) -> int:
    return (time.perf_counter_ns() - started_ns) // 1000


@dataclass(frozen=True)
class CallResult:
    """What came back from one call: a response or a fault, and how long it took."""

    response: Any
    fault: Fault | None
    elapsed_us: int


def classify(error: grpc.aio.AioRpcError) -> Fault:
    """The fault a gRPC error stands for."""
    code, details = error.code(), error.details() or ""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return Fault(FaultKind.TIMEOUT, "no answer before the deadline")
    if code == grpc.StatusCode.UNAVAILABLE:
        return Fault(FaultKind.UNREACHABLE, details)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details:
        return Fault(FaultKind.RESPONSE_TOO_LARGE, details)
    return Fault(FaultKind.TRANSPORT_ERROR, f"{code.name}: {details}")


class BotEndpoint:
    """One bot address: a reused channel, a stub and a limit on concurrent calls."""

    def __init__(
        self, target: str, max_concurrent_calls: int, tls: grpc.ChannelCredentials | None = None
    ) -> None:
        self.target = target
        self._channel = open_channel(target, tls)
        self.stub = bot_service_pb2_grpc.BotServiceStub(self._channel)
        # ChooseAction again, taking a request already serialized (``RequestEncoder``).
        self._choose_action_bytes: grpc.aio.UnaryUnaryMultiCallable[
            bytes, bot_service_pb2.ChooseActionResponse
        ] = self._channel.unary_unary(  # type: ignore[call-arg]  # the stubs lack the flag
            CHOOSE_ACTION_METHOD,
            request_serializer=None,
            response_deserializer=bot_service_pb2.ChooseActionResponse.FromString,
            _registered_method=True,  # as the generated stub: a call handle made once
        )
        self._limiter = trio.CapacityLimiter(max_concurrent_calls)
        self.info: bot_service_pb2.GetInfoResponse | None = None
        """The bot's last good answer to GetInfo (None: none yet)."""

    async def call(self, make_call: Callable[[], Awaitable[Any]]) -> CallResult:
        """Run one RPC and time it; failures come back as a ``Fault``, never as an exception."""
        async with self._limiter:
            started = time.perf_counter_ns()
            try:
                response = await await_aio(make_call)
            except grpc.aio.AioRpcError as error:
                return CallResult(None, classify(error), _since_us(started))
            return CallResult(response, None, _since_us(started))

    async def get_info(self, timeout_s: float) -> CallResult:
        """The bot's name and version (its health check); a good answer is kept in ``info``."""
        request = bot_service_pb2.GetInfoRequest()
        result = await self.call(lambda: self.stub.GetInfo(request, timeout=timeout_s))
        if result.fault is None and isinstance(result.response, bot_service_pb2.GetInfoResponse):
            self.info = result.response
        return result

    async def start_match(
        self, request: bot_service_pb2.StartMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot a match starts."""
        return await self.call(lambda: self.stub.StartMatch(request, timeout=timeout_s))

    async def choose_action(
        self, request: bot_service_pb2.ChooseActionRequest | bytes, timeout_s: float
    ) -> CallResult:
        """Ask the bot for its move (a request message or its bytes); deadline ``timeout_s``."""
        if isinstance(request, bytes):
            call = self._choose_action_bytes
            return await self.call(lambda: call(request, timeout=timeout_s))
        return await self.call(lambda: self.stub.ChooseAction(request, timeout=timeout_s))

    async def end_match(
        self, request: bot_service_pb2.EndMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot how the match ended."""
        return await self.call(lambda: self.stub.EndMatch(request, timeout=timeout_s))

    @property
    def calls_in_flight(self) -> int:
        """Calls to this endpoint in flight (or waiting their turn) now."""
        return int(self._limiter.borrowed_tokens + self._limiter.statistics().tasks_waiting)

    def close_channel(self) -> Coroutine[Any, Any, None]:
        """Close the channel: an asyncio awaitable, for the host loop."""
        return self._channel.close()

    async def close(self) -> None:
        """Close the channel (cancels calls still in flight)."""
        await await_aio(self.close_channel)


@dataclass(frozen=True)
class Refused:
    """A seat whose endpoint the caller (the arena's endpoint guard) refused to connect to:
    the referee never calls it, and every call to it is an UNREACHABLE fault with ``detail``
    (neutral words: the record is public)."""

    detail: str
    label: str = "(refused)"
    """What the match record shows as the seat's endpoint."""


class RefusedEndpoint(BotEndpoint):
    """A ``Refused`` seat: no channel, and every call answers UNREACHABLE at once."""

    def __init__(self, refused: Refused) -> None:  # no channel: nothing to connect to
        self.target = refused.label
        self._fault = Fault(FaultKind.UNREACHABLE, refused.detail)

    async def call(self, make_call: Callable[[], Awaitable[Any]]) -> CallResult:
        """A fault; ``make_call`` is never run."""
        return CallResult(None, self._fault, 0)

    async def choose_action(
        self, request: bot_service_pb2.ChooseActionRequest | bytes, timeout_s: float
    ) -> CallResult:
        """A fault (the base class would reach for the channel first)."""
        return CallResult(None, self._fault, 0)

    async def close(self) -> None:
        """Nothing to close."""


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
    ) -> None:
        self._kept: dict[str, _Kept] = {}
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
            endpoint = BotEndpoint(target, self._max_concurrent_calls, self._tls)
            kept = self._kept[target] = _Kept(endpoint, self._clock())
        kept.last_used, kept.forgotten = self._clock(), False
        return kept.endpoint

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

    def targets(self) -> list[str]:
        """Every endpoint with an open channel."""
        return list(self._kept)

    def _close_if_unused(self, target: str, kept: _Kept) -> bool:
        if kept.holders or kept.endpoint.calls_in_flight:
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
