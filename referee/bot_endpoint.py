"""One bot endpoint: its gRPC channel and calls, every failure turned into a ``Fault``.

Channels are ``grpc.aio`` objects living on the host loop of ``aio_bridge``; every call goes
through ``aio_bridge.await_aio`` so a cancelled trio scope cancels the RPC. A bot's answer is
capped at ``MAX_RESPONSE_BYTES`` and parsed strictly (``referee.codec.untrusted``); every gRPC
status becomes a fault whose detail is bounded; a connection that cannot be made fails within
``CONNECT_TIMEOUT_MS``; keepalive stays within what a default gRPC server accepts.
An endpoint written ``tls://host:port`` gets a TLS channel with the pool's credentials.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, NamedTuple

import grpc
import grpc.aio
import trio
from google.protobuf.message import Message

from cardarena.bot.v1 import bot_service_pb2
from referee.aio_bridge import await_aio
from referee.codec.untrusted import MalformedResponseError, bounded, parse_strictly
from referee.match import Fault, FaultKind

MAX_RESPONSE_BYTES = 64 * 1024
"""Largest answer a bot may send; a move is a few dozen bytes."""

MAX_CONCURRENT_CALLS_PER_ENDPOINT = 256
"""Calls in flight to one bot endpoint at once; more wait their turn (their clock not started)."""

CONNECT_TIMEOUT_MS = 2_000
"""Longest a connection attempt may take, TCP and HTTP/2 handshake both (gRPC's default: 20 s)."""

MAX_INFO_CHARS = 128
"""Longest name or version a bot may state in GetInfo (it is kept in every match record)."""

CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
    # A default gRPC server rejects pings more often than every 5 minutes (doc/keepalive.md).
    ("grpc.keepalive_time_ms", 300_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # One subchannel per channel, so each bot endpoint gets its own connection.
    ("grpc.use_local_subchannel_pool", 1),
    # No transparent retries: a server that answers each connection with SETTINGS then GOAWAY
    # had every call retried on a new connection at once, in a loop that kept a referee core
    # busy until the deadline (benchmarks/transport_pathology.py). The call fails instead.
    ("grpc.enable_retries", 0),
    # gRPC core takes this as the connect timeout too: a server that accepts and never sends
    # its SETTINGS fails the call (UNREACHABLE) after this long, not at the call's deadline.
    ("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS),
)


SERVICE = "/cardarena.bot.v1.BotService/"

STREAM_SCHEMES = ("stream://", "stream+tls://", "outbound://")
"""Targets of bots reached over one multiplexed stream (``referee.bot_stream``)."""

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


class CallResult(NamedTuple):
    """What came back from one call: a response or a fault, and how long it took.

    ``response`` is the parsed message, except for ``choose_action``: the answer's bytes as the
    bot sent them (None when the stream carried no whole message), which the game's codec
    decodes (``GameCodec.decode_answer``). A named tuple, not a frozen dataclass: one is made
    per decision, and a frozen dataclass's ``__init__`` costs twice as much.
    """

    response: Any
    fault: Fault | None
    elapsed_us: int


_OVER_LIMITS = ("larger than max", "metadata size exceeds")
"""What gRPC says when an answer's message or its headers are over the client's limits."""


def classify(error: grpc.aio.AioRpcError, connected: bool = True) -> Fault:
    """The fault a gRPC error stands for; ``connected``: the channel was READY at the end.

    A deadline that passed while the channel was still connecting is the bot's address not
    answering (UNREACHABLE), not a bot too slow to move.
    """
    code, details = error.code(), bounded(error.details() or "") or "(no details)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        if not connected:
            return Fault(FaultKind.UNREACHABLE, "no connection before the deadline")
        return Fault(FaultKind.TIMEOUT, "no answer before the deadline")
    if code == grpc.StatusCode.UNAVAILABLE:
        return Fault(FaultKind.UNREACHABLE, details)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and any(s in details for s in _OVER_LIMITS):
        return Fault(FaultKind.RESPONSE_TOO_LARGE, details)
    name = code.name if isinstance(code, grpc.StatusCode) else f"status {code}"
    return Fault(FaultKind.TRANSPORT_ERROR, bounded(f"{name}: {details}"))


def malformed(error: MalformedResponseError) -> Fault:
    """The fault for bytes that are not the answer asked for."""
    return Fault(FaultKind.MALFORMED_RESPONSE, bounded(str(error)))


def read_info(raw: object) -> bot_service_pb2.GetInfoResponse:
    """A GetInfo answer, strictly parsed, its name and version short enough to record."""
    info = parse_strictly(raw, bot_service_pb2.GetInfoResponse)
    for name, value in (("name", info.name), ("version", info.version)):
        if len(value) > MAX_INFO_CHARS or not value.isprintable():
            raise MalformedResponseError(
                f"the {name} must be at most {MAX_INFO_CHARS} printable characters"
            )
    return info


def reader_of(message_type: type[Message]) -> Callable[[object], Message]:
    """A strict parser of a bot's answer of ``message_type`` (StartMatch's, EndMatch's)."""
    return lambda raw: parse_strictly(raw, message_type)


Method = grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]


class BotEndpoint:
    """One bot address: a reused channel, a limit on concurrent calls, every call in bytes.

    Calls send and receive bytes (no serializer in grpc.aio: its deserializer hands back None
    for bytes it cannot parse, and logs a traceback each time), so every answer is checked here
    and what is not the message asked for becomes a ``MALFORMED_RESPONSE`` fault.
    """

    def __init__(
        self, target: str, max_concurrent_calls: int, tls: grpc.ChannelCredentials | None = None
    ) -> None:
        self.target = target
        self._channel = open_channel(target, tls)
        self._get_info = self._method("GetInfo")
        self._start_match = self._method("StartMatch")
        self._choose_action = self._method("ChooseAction")
        self._end_match = self._method("EndMatch")
        self._limiter = trio.CapacityLimiter(max_concurrent_calls)

    def _method(self, name: str) -> Method:
        return self._channel.unary_unary(  # type: ignore[call-arg]  # the stubs lack the flag
            SERVICE + name,
            request_serializer=None,
            response_deserializer=None,
            _registered_method=True,  # as the generated stub: a call handle made once
        )
        self.info: bot_service_pb2.GetInfoResponse | None = None
        """The bot's last good answer to GetInfo (None: none yet)."""

    async def call(self, make_call: Callable[[], Awaitable[Any]]) -> CallResult:
        """Run one RPC and time it; failures come back as a ``Fault``, never as an exception."""
        async with self._limiter:
            started = time.perf_counter_ns()
            try:
                response = await await_aio(make_call)
            except grpc.aio.AioRpcError as error:
                return CallResult(None, self._fault(error), _since_us(started))
            return CallResult(response, None, _since_us(started))

    def _fault(self, error: grpc.aio.AioRpcError) -> Fault:
        connected = True
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            connected = self._channel.get_state() == grpc.ChannelConnectivity.READY
        return classify(error, connected)

    async def _parsed_call(
        self, method: Method, request: bytes, timeout_s: float, read: Callable[[object], Any]
    ) -> CallResult:
        result = await self.call(lambda: method(request, timeout=timeout_s))
        if result.fault is not None:
            return result
        try:
            return CallResult(read(result.response), None, result.elapsed_us)
        except MalformedResponseError as error:
            return CallResult(None, malformed(error), result.elapsed_us)

    async def get_info(self, timeout_s: float) -> CallResult:
        """The bot's name and version (its health check); a good answer is kept in ``info``."""
        result = await self._parsed_call(self._get_info, b"", timeout_s, read_info)
        if result.fault is None:
            self.info = result.response
        return result

    async def start_match(
        self, request: bot_service_pb2.StartMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot a match starts."""
        return await self._parsed_call(
            self._start_match,
            request.SerializeToString(),
            timeout_s,
            reader_of(bot_service_pb2.StartMatchResponse),
        )

    async def choose_action(
        self, request: bot_service_pb2.ChooseActionRequest | bytes, timeout_s: float
    ) -> CallResult:
        """Ask the bot for its move (a request message or its bytes); deadline ``timeout_s``.

        The response is the answer's bytes (or None): see ``CallResult``.
        """
        if not isinstance(request, bytes):
            request = request.SerializeToString()
        call = self._choose_action
        return await self.call(lambda: call(request, timeout=timeout_s))

    async def end_match(
        self, request: bot_service_pb2.EndMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot how the match ended."""
        return await self._parsed_call(
            self._end_match,
            request.SerializeToString(),
            timeout_s,
            reader_of(bot_service_pb2.EndMatchResponse),
        )

    @property
    def keep_open(self) -> bool:
        """Whether the pool must keep this endpoint open even when unused (a bot that dialled
        in over a stream; see ``referee.bot_stream``)."""
        return False

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


def _no_call(request: bytes, timeout: float) -> Any:
    raise AssertionError("a refused endpoint is never called")


class RefusedEndpoint(BotEndpoint):
    """A ``Refused`` seat: no channel, and every call answers UNREACHABLE at once."""

    def __init__(self, refused: Refused) -> None:  # no channel: nothing to connect to
        self.target = refused.label
        self._refusal = Fault(FaultKind.UNREACHABLE, refused.detail)
        never: Any = _no_call  # ``call`` below never runs what it is given
        self._get_info = self._start_match = self._choose_action = self._end_match = never

    async def call(self, make_call: Callable[[], Awaitable[Any]]) -> CallResult:
        """A fault; ``make_call`` is never run."""
        return CallResult(None, self._refusal, 0)

    async def close(self) -> None:
        """Nothing to close."""
