"""Bots over one multiplexed stream (issue 20): every call of every match of a bot on one
bidirectional gRPC stream, each message tagged with an id.

``StreamBot`` is a ``BotEndpoint`` to the runner (the same four calls, the same ``CallResult``s
and faults), so the runner, the ladder and the time control do not know which transport a bot
uses. A stream is opened either way:

- ``stream://host:port`` (or ``stream+tls://host:port``): the referee dials the bot's
  ``BotService.Play`` and redials with back-off when the stream drops;
- ``outbound://BOT_ID``: the bot dialled the arena (``ArenaService.ConnectBot``) and the
  arena's handler ``attach``-es the stream to the bot's ``StreamBot``.

Time control is unchanged: a decision is timed from the referee queueing its request to the
answer arriving, round trip included; an answer that arrives after the deadline is discarded
(the bot is sent a ``withdrawal``) and the decision is a TIMEOUT. A stream that drops keeps its
requests pending: if the bot is back before a request's deadline, the request is sent again
(same id) and its answer counts; if not, the decision is UNREACHABLE. What a bot sends that
answers nothing (an unknown, finished or withdrawn id, a duplicate answer) is counted and
dropped; more than ``MAX_UNSOLICITED`` closes the stream as a flood. A message over
``MAX_MESSAGE_BYTES``, or one that does not parse, closes the stream and fails the requests
in flight with that fault. All of it touches only this bot's stream.

The transport half (``Link``) runs on the asyncio host loop, where every grpc.aio object
lives; it wakes the waiting trio tasks through the trio token, many at once
(``referee.stream_wake``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from cardarena.bot.v1 import bot_service_pb2
from referee.bot_endpoint import (
    MAX_RESPONSE_BYTES,
    STREAM_SCHEMES,
    BotEndpoint,
    CallResult,
    classify,
    malformed,
    open_channel,
    read_info,
    reader_of,
)
from referee.codec.untrusted import MalformedResponseError, bounded, parse_strictly
from referee.codec.wire import varint
from referee.match import Fault, FaultKind
from referee.stream_wake import Slots, Waiter, Waker, current_waker

log = logging.getLogger("referee.stream")

STREAM_SCHEME = "stream://"
"""A bot serving ``BotService.Play`` in plaintext: ``stream://host:port``."""
STREAM_TLS_SCHEME = "stream+tls://"
"""The same over TLS: ``stream+tls://host:port`` (verified as ``tls://`` endpoints are)."""
OUTBOUND_SCHEME = "outbound://"
"""A bot that dials the arena: ``outbound://BOT_ID``; it has no address."""

MAX_MESSAGE_BYTES = MAX_RESPONSE_BYTES
"""Largest message a bot may send on its stream (as a unary answer)."""

MAX_BATCH_BYTES = 32 * 1024
"""The referee writes at most about this much per gRPC message (a batch of frames)."""


class Outbox:
    """What is queued for one stream's writer, taken as one gRPC message at a time: frames
    concatenate into one batch (a repeated field), so one write carries every message queued
    since the last (up to about ``MAX_BATCH_BYTES``). A list and a future, not an
    ``asyncio.Queue``, whose put and get cost more than a frame's own work."""

    __slots__ = ("_frames", "_ready", "_size")

    def __init__(self) -> None:
        self._frames: list[bytes] = []
        self._size = 0
        self._ready: asyncio.Future[None] | None = None
        """The writer waiting for a frame, if it is."""

    def put(self, data: bytes) -> None:
        """Queue one frame; wakes the writer waiting in ``batch``."""
        self._frames.append(data)
        self._size += len(data)
        ready, self._ready = self._ready, None
        if ready is not None and not ready.done():
            ready.set_result(None)

    async def batch(self) -> bytes:
        """The next gRPC message: the frames queued (waiting for one if none is), the first
        and then more while the message is under ``MAX_BATCH_BYTES``."""
        while not self._frames:
            self._ready = asyncio.get_running_loop().create_future()
            await self._ready
        frames = self._frames
        if len(frames) == 1 or self._size - len(frames[-1]) < MAX_BATCH_BYTES:
            self._frames, self._size = [], 0  # the usual case: all of them
            return frames[0] if len(frames) == 1 else b"".join(frames)
        size = count = 0
        while count < len(frames) and (count == 0 or size < MAX_BATCH_BYTES):
            size += len(frames[count])
            count += 1
        taken = frames[:count]
        del frames[:count]
        self._size -= size
        return b"".join(taken)


MAX_UNSOLICITED = 64
"""Messages answering nothing in flight a stream may carry before it is closed as a flood."""

HEARTBEAT_INTERVAL_S = 10.0
"""How often the referee pings an open stream."""

HEARTBEAT_TIMEOUT_S = 20.0
"""A stream whose bot has not answered a ping for this long is closed (as a dropped one)."""

REDIAL_BACKOFF_S = (0.05, 2.0)
"""First and longest wait before the referee dials a dropped ``stream://`` bot again."""

PLAY_METHOD = "/cardarena.bot.v1.BotService/Play"

_NEVER = math.inf
_CLOCK_RESOLUTION_S = time.get_clock_info("monotonic").resolution
"""How early asyncio runs a timer (its ``_clock_resolution``): a deadline this close is due."""

# RefereeMessage field numbers (proto/cardarena/bot/v1/bot_service.proto).
GET_INFO, START_MATCH, CHOOSE_ACTION, END_MATCH, WITHDRAWAL, PING = 2, 3, 4, 5, 6, 7

ANSWERS = {
    GET_INFO: "info",
    START_MATCH: "started",
    CHOOSE_ACTION: "action",
    END_MATCH: "ended",
    PING: "pong",
}
"""Which BotMessage body answers each RefereeMessage body."""

_BODY_TAGS = {body: varint(body << 3 | 2) for body in (*ANSWERS, WITHDRAWAL)}
"""Each RefereeMessage body's field tag (length-delimited)."""


def is_stream_target(target: str) -> bool:
    """Whether ``target`` names a bot reached over a stream (dialled or dialling out)."""
    return target.startswith(STREAM_SCHEMES)


def frame(message_id: int, body_field: int, body: bytes) -> bytes:
    """The bytes of a ``PlayRequest`` (equally a ``ConnectBotResponse`` or ``RelayBotRequest``:
    the same layout; frames concatenated are one batch) holding one ``RefereeMessage`` with
    ``message_id`` and ``body`` (a serialized message) in field ``body_field``. Built by hand
    so a ChooseActionRequest's cached bytes are not parsed again."""
    inner = b"".join((b"\x08", varint(message_id), _BODY_TAGS[body_field], varint(len(body)), body))
    return b"\x0a" + varint(len(inner)) + inner


def withdrawal(message_id: int, request_id: int, reason: str) -> bytes:
    """A ``withdrawal`` of ``request_id``, framed."""
    body = bot_service_pb2.Withdrawal(request_id=request_id, reason=reason).SerializeToString()
    return frame(message_id, WITHDRAWAL, body)


class StreamRefused(Exception):
    """A stream the arena will not attach (a second one for a bot that has one open)."""


class _Pending:
    """A request sent (or waiting to be sent again) on a bot's stream."""

    __slots__ = ("answer", "answered", "deadline", "expired", "fault", "frame", "raw", "waiter")

    def __init__(self, frame: bytes, answer: str) -> None:
        self.frame = frame
        self.answer = answer
        self.deadline = _NEVER
        """When the request expires, in the host loop's time."""
        self.waiter = Waiter()
        self.raw: bytes | None = None
        self.fault: Fault | None = None
        self.answered = False
        """Set on the host loop as the answer (or fault) arrives, before the trio task wakes."""
        self.expired = False
        """Set on the host loop when the deadline passes first: a later answer is discarded."""


Write = Callable[[bytes], Awaitable[Any]]
Read = Callable[[], Awaitable[Any]]


class Link:
    """One open stream, on the asyncio host loop: a writer task fed by a queue, a reader
    task handing each message to ``StreamBot.deliver``, a heartbeat. ``close`` (or the
    stream ending) calls ``StreamBot.lost`` once."""

    def __init__(
        self,
        bot: StreamBot,
        write: Write,
        read: Read,
        cancel: Callable[[], Any] | None,
        *,
        start: bool = True,
    ) -> None:
        self.bot = bot
        self._write, self._read, self._cancel = write, read, cancel
        self.relayed = False
        """Whether this stream goes to another arena process (``RelayBot``), not the bot."""
        self._outbox = Outbox()
        self.received = 0
        self.unsolicited = 0
        self.pings: dict[int, None] = {}
        """Pings not answered yet (a pong for another id answers nothing)."""
        self.withdrawn: dict[int, None] = {}
        """Requests withdrawn on this stream, most recent last: a late answer is no flood."""
        self.last_heard = time.monotonic()
        self.status_lost = False
        """Whether the stream ended without the server's status (``SPURIOUS_INTERNAL``)."""
        self.closed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        if start:
            self._start()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks += [
            loop.create_task(self._writer()),
            loop.create_task(self._reader()),
            loop.create_task(self._heartbeat()),
        ]

    @classmethod
    def opening(cls, bot: StreamBot, open_call: Callable[[], Awaitable[Any]]) -> Link:
        """A link whose call ``open_call`` makes first (None: nowhere to open it, a drop);
        what is sent meanwhile waits in the queue. Used for relays to another process."""

        async def never(*_: object) -> None:
            raise AssertionError("the link is not open yet")

        link = cls(bot, never, never, None, start=False)
        link.relayed = True

        async def start() -> None:
            try:
                call = await open_call()
            except Exception as error:
                log.info("no relay to %s: %r", bot.target, error)
                call = None
            if call is None:
                link.close(None)
                return
            link._write, link._read, link._cancel = call.write, call.read, call.cancel
            if link.closed.is_set():
                call.cancel()
                return
            link._start()

        link._tasks.append(asyncio.get_running_loop().create_task(start()))
        return link

    def send(self, data: bytes) -> None:
        """Queue ``data`` (a framed RefereeMessage) for writing."""
        if not self.closed.is_set():
            self._outbox.put(data)

    async def _writer(self) -> None:
        try:
            while True:
                await self._write(await self._outbox.batch())
        except grpc.aio.AioRpcError as error:
            self.status_lost = _status_lost(error)
            self.close(_stream_fault(error))
        except Exception as error:  # the call ended under the write: a drop, whatever it says
            log.debug("write on the stream to %s failed: %r", self.bot.target, error)
            self.close(None)

    async def _reader(self) -> None:
        try:
            while True:
                raw = await self._read()
                if raw is grpc.aio.EOF or raw is None:
                    self.close(None)
                    return
                if not isinstance(raw, bytes) or len(raw) > MAX_MESSAGE_BYTES:
                    size = len(raw) if isinstance(raw, bytes) else 0
                    self.close(
                        Fault(
                            FaultKind.RESPONSE_TOO_LARGE,
                            f"a {size}-byte message on the stream (most {MAX_MESSAGE_BYTES})",
                        )
                    )
                    return
                self.received += 1
                self.last_heard = time.monotonic()
                fault = self.bot.deliver(self, raw)
                if fault is not None:
                    self.close(fault)
                    return
        except grpc.aio.AioRpcError as error:
            self.status_lost = _status_lost(error)
            self.close(_stream_fault(error))
        except Exception as error:  # the call ended under the read: a drop
            log.debug("read on the stream to %s failed: %r", self.bot.target, error)
            self.close(None)

    async def _heartbeat(self) -> None:
        interval, patience = self.bot.heartbeat_s
        while True:
            await asyncio.sleep(interval)
            if time.monotonic() - self.last_heard > patience:
                self.close(None)  # a silent stream is a dropped one: pending requests wait
                return
            ping_id = self.bot.next_id()
            _bounded_add(self.pings, ping_id)
            self.send(frame(ping_id, PING, b""))

    def close(self, fault: Fault | None) -> None:
        """End the stream (``fault``: what the bot did wrong, failing its requests at once;
        None: it dropped, its requests wait for a reconnect until their deadlines)."""
        if self.closed.is_set():
            return
        self.closed.set()
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        if self._cancel is not None:
            self._cancel()
        self.bot.lost(self, fault)


MAX_REMEMBERED = 4096
"""Ids of pings or withdrawn requests a stream remembers (the oldest are forgotten)."""


def _bounded_add(ids: dict[int, None], message_id: int) -> None:
    ids[message_id] = None
    if len(ids) > MAX_REMEMBERED:
        del ids[next(iter(ids))]


SPURIOUS_INTERNAL = "Internal error from Core"
"""What grpc.aio reports, in place of the status the server sent, for a write that fails as
the call ends (grpc/grpc#36066): for a bot that does not serve Play, about one stream in five
says this instead of UNIMPLEMENTED. The status is lost, so the stream counts as dropped and is
dialled again (up to ``STATUS_RETRIES`` times before it first opens), which then ends with the
server's own status."""

STATUS_RETRIES = 3


def _status_lost(error: BaseException) -> bool:
    """Whether ``error`` ended a stream without the server's status (``SPURIOUS_INTERNAL``)."""
    return (
        isinstance(error, grpc.aio.AioRpcError)
        and error.code() == grpc.StatusCode.INTERNAL
        and error.details() == SPURIOUS_INTERNAL
    )


def _stream_fault(error: BaseException) -> Fault | None:
    """What a stream's end means: None for a drop (the bot may come back), else a fault."""
    if not isinstance(error, grpc.aio.AioRpcError):
        return None
    code = error.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return None
    if _status_lost(error):
        return None
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return Fault(FaultKind.UNREACHABLE, "the bot does not serve BotService.Play")
    return classify(error)


class StreamBot(BotEndpoint):
    """A bot reached over one stream: the four calls of ``BotEndpoint``, multiplexed.

    ``dial`` (for ``stream://`` bots) opens the stream whenever a request is to be sent and
    none is open; without it (``outbound://`` bots) requests wait for ``attach``."""

    def __init__(
        self,
        target: str,
        max_concurrent_calls: int,
        dial: Callable[[StreamBot], Link] | None = None,
        heartbeat_s: tuple[float, float] = (HEARTBEAT_INTERVAL_S, HEARTBEAT_TIMEOUT_S),
        close_transport: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:  # no unary channel: the stream is the transport
        self.target = target
        self.info: bot_service_pb2.GetInfoResponse | None = None
        self.heartbeat_s = heartbeat_s
        self._dial = dial
        self.outbound = target.startswith(OUTBOUND_SCHEME)
        """A bot that dials in; ``dial`` (if any) reaches it through another arena process."""
        self._relays: set[_Relay] = set()
        self._relayed: dict[int, tuple[_Relay, int]] = {}
        """Requests forwarded for other arena processes: our id → (relay, their id)."""
        self._close_transport = close_transport
        self._slots = Slots(max_concurrent_calls)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._link: Link | None = None
        self._ever_connected = False
        self._status_retries = 0
        self._backoff_s = REDIAL_BACKOFF_S[0]
        self._redial: asyncio.TimerHandle | None = None
        self._closing = False
        self._waker: Waker | None = None
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = _NEVER
        """When ``_deadline_timer`` fires (loop time): the earliest deadline set since."""
        self.unsolicited_total = 0
        """Messages that answered nothing in flight, over every stream of this bot."""
        self.connections = 0
        """Streams opened (dialled or attached) so far."""

    # -- the trio side ----------------------------------------------------------------------

    def next_id(self) -> int:
        """A message id not used on this bot's streams before."""
        return next(self._ids)

    @property
    def connected(self) -> bool:
        """Whether a stream is open now."""
        return self._link is not None

    @property
    def directly_connected(self) -> bool:
        """Whether the bot's own stream is open to this process (not a relay)."""
        return self._link is not None and not self._link.relayed

    @property
    def keep_open(self) -> bool:
        """A bot that dialled in stays attached while its stream is open, used or not."""
        return self.outbound and self.directly_connected

    async def _exchange(self, body_field: int, body: bytes, timeout_s: float) -> CallResult:
        # A free slot is taken without a trio checkpoint; a full stream waits its turn, its
        # clock not started.
        if not self._slots.try_take():
            await self._slots.wait_for_one()
        try:
            if self._waker is None:
                self._waker = current_waker()
            message_id = self.next_id()
            pending = _Pending(frame(message_id, body_field, body), ANSWERS[body_field])
            self._pending[message_id] = pending
            started = time.perf_counter_ns()
            loop = asyncio.get_running_loop()
            pending.deadline = loop.time() + timeout_s
            self._arm_deadline(loop, pending.deadline)
            try:
                self._send(pending.frame)
                await pending.waiter.wait()
            finally:
                del self._pending[message_id]
            elapsed_us = (time.perf_counter_ns() - started) // 1000
        finally:
            self._slots.give_back()
        if pending.answered:
            return CallResult(pending.raw, pending.fault, elapsed_us)
        if self._link is not None:
            _bounded_add(self._link.withdrawn, message_id)
            self._link.send(withdrawal(self.next_id(), message_id, "the time ran out"))
            timeout = Fault(FaultKind.TIMEOUT, "no answer before the deadline")
            return CallResult(None, timeout, elapsed_us)
        detail = "the stream was down and not back before the deadline"
        return CallResult(None, Fault(FaultKind.UNREACHABLE, detail), elapsed_us)

    def _arm_deadline(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Have ``_expire_due`` run by ``deadline`` (loop time), a pending request's. One
        asyncio timer per bot, set for the earliest deadline of its requests and not cancelled
        when that request is answered (``_expire_due`` then finds nothing to expire and sets
        the next): a timer per request cost a heap entry, a cancel and the heap's clean-up on
        every decision."""
        if deadline < self._deadline_at:
            if self._deadline_timer is not None:
                self._deadline_timer.cancel()
            self._deadline_at = deadline
            self._deadline_timer = loop.call_at(deadline, self._expire_due)

    def _expire_due(self) -> None:
        """The timer of ``_arm_deadline`` fired: expire each request whose deadline came (by
        asyncio's rule for a timer being due) and set the timer for the earliest left."""
        self._deadline_timer, self._deadline_at = None, _NEVER
        due_before = asyncio.get_running_loop().time() + _CLOCK_RESOLUTION_S
        earliest = _NEVER
        for pending in self._pending.values():
            if pending.answered or pending.expired:
                continue
            if pending.deadline < due_before:
                self._expire(pending)
            else:
                earliest = min(earliest, pending.deadline)
        if earliest < _NEVER:
            self._arm_deadline(asyncio.get_running_loop(), earliest)

    def _send(self, data: bytes) -> None:
        if self._link is not None:
            self._link.send(data)
        elif self._dial is not None and self._redial is None and not self._closing:
            self._open(self._dial)

    def _open(self, dial: Callable[[StreamBot], Link]) -> None:
        self._redial = None
        self._link = dial(self)
        self.connections += 1
        self._resend()

    def _resend(self) -> None:
        assert self._link is not None
        for pending in list(self._pending.values()):
            if not pending.answered and not pending.expired:
                self._link.send(pending.frame)

    async def _parsed(
        self, body_field: int, body: bytes, timeout_s: float, read: Callable[[object], Any]
    ) -> CallResult:
        result = await self._exchange(body_field, body, timeout_s)
        if result.fault is not None:
            return result
        try:
            return CallResult(read(result.response), None, result.elapsed_us)
        except MalformedResponseError as error:
            return CallResult(None, malformed(error), result.elapsed_us)

    async def get_info(self, timeout_s: float) -> CallResult:
        """The bot's name and version, asked on its stream (its health check)."""
        result = await self._parsed(GET_INFO, b"", timeout_s, read_info)
        if result.fault is None:
            self.info = result.response
        return result

    async def start_match(
        self, request: bot_service_pb2.StartMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot a match starts."""
        return await self._parsed(
            START_MATCH,
            request.SerializeToString(),
            timeout_s,
            reader_of(bot_service_pb2.StartMatchResponse),
        )

    def choose_action(  # not async: the exchange itself is awaited, one frame fewer a move
        self, request: bot_service_pb2.ChooseActionRequest | bytes, timeout_s: float
    ) -> Coroutine[Any, Any, CallResult]:
        """Ask for a move; the response is the ChooseActionResponse's bytes, as unary."""
        if not isinstance(request, bytes):
            request = request.SerializeToString()
        return self._exchange(CHOOSE_ACTION, request, timeout_s)

    async def end_match(
        self, request: bot_service_pb2.EndMatchRequest, timeout_s: float
    ) -> CallResult:
        """Tell the bot how the match ended."""
        return await self._parsed(
            END_MATCH,
            request.SerializeToString(),
            timeout_s,
            reader_of(bot_service_pb2.EndMatchResponse),
        )

    async def call(self, make_call: Callable[[], Awaitable[Any]]) -> CallResult:
        """Not used for a stream bot: its calls are messages."""
        raise NotImplementedError("a stream bot has no unary calls")

    @property
    def calls_in_flight(self) -> int:
        """Requests in flight (or waiting their turn) on this bot's stream."""
        return self._slots.in_use

    # -- the asyncio side (called on the host loop) ----------------------------------------

    def attach(self, write: Write, read: Read, cancel: Callable[[], Any] | None = None) -> Link:
        """Adopt a stream the bot opened; ``StreamRefused`` if one is open already."""
        if self._link is not None and self._link.relayed:
            self._link.close(None)  # the bot came here: no need to go through another process
        if self._link is not None:
            raise StreamRefused("this bot already has a stream open")
        if self._closing:
            raise StreamRefused("the referee is shutting down")
        self._link = Link(self, write, read, cancel)
        self.connections += 1
        self._resend()
        return self._link

    def deliver(self, link: Link, raw: bytes) -> Fault | None:
        """One batch of messages from the bot; a fault closes the stream."""
        try:
            messages = bot_service_pb2.PlayResponse.FromString(raw).messages
        except DecodeError:
            return Fault(FaultKind.MALFORMED_RESPONSE, f"{len(raw)} bytes that are no BotMessage")
        if not messages:
            return self._unsolicited(link)
        for message in messages:
            fault = self._deliver_one(link, message)
            if fault is not None:
                return fault
        return None

    def _unsolicited(self, link: Link) -> Fault | None:
        link.unsolicited += 1
        self.unsolicited_total += 1
        if link.unsolicited > MAX_UNSOLICITED:
            return Fault(
                FaultKind.TRANSPORT_ERROR,
                f"more than {MAX_UNSOLICITED} messages answering nothing in flight",
            )
        return None

    def _deliver_one(self, link: Link, message: bot_service_pb2.BotMessage) -> Fault | None:
        pending = self._pending.get(message.id)
        if pending is None:
            return self._deliver_no_pending(link, message)
        body = message.WhichOneof("body")
        if pending.expired:
            return None  # too late: the decision is a timeout already
        if pending.answered or body in ("hello", "pong"):
            return self._unsolicited(link)
        if body == "failure":
            detail = bounded(f"the bot failed: {message.failure.detail}")
            pending.fault = Fault(FaultKind.TRANSPORT_ERROR, detail)
        elif body != pending.answer:
            pending.fault = Fault(
                FaultKind.MALFORMED_RESPONSE,
                bounded(f"answered a {pending.answer} request with {body or 'nothing'}"),
            )
        else:
            pending.raw = getattr(message, body).SerializeToString()
        self._wake(pending)
        self._ever_connected = True
        self._backoff_s = REDIAL_BACKOFF_S[0]
        return None

    def _deliver_no_pending(self, link: Link, message: bot_service_pb2.BotMessage) -> Fault | None:
        """A message for no request of ours pending: a relayed request's answer, a pong, a late
        answer to a withdrawn request, or unsolicited. (Ids are never reused, and a request
        leaves ``_pending`` before it is withdrawn, so a pending one is none of these.)"""
        message_id = message.id
        relayed = self._relayed.pop(message_id, None)
        if relayed is not None:
            relayed[0].answer(relayed[1], message)
            return None
        if message.WhichOneof("body") == "pong" and link.pings.pop(message_id, 0) is None:
            return None  # heard from: that is all a pong says
        if link.withdrawn.pop(message_id, 0) is None:
            return None  # a late answer to a request withdrawn: discarded
        return self._unsolicited(link)

    def _expire(self, pending: _Pending) -> None:
        pending.expired = True
        if self._waker is not None:
            self._waker.wake_soon(pending.waiter)

    def _wake(self, pending: _Pending) -> None:
        pending.answered = True
        if self._waker is not None:
            self._waker.wake_soon(pending.waiter)

    def lost(self, link: Link, fault: Fault | None) -> None:
        """``link`` ended: fail the pending requests now if the bot is at fault (or was never
        reachable), else keep them for a reconnect; dial again if this bot is dialled."""
        if self._link is link:
            self._link = None
        if not link.relayed:
            for relay in list(self._relays):
                relay.close()  # the other processes look for the bot again
        if fault is None and not self._ever_connected and not self.outbound and self._dial:
            if link.status_lost and self._status_retries < STATUS_RETRIES:
                self._status_retries += 1  # dial again to learn why the stream failed
            else:
                fault = Fault(FaultKind.UNREACHABLE, "the stream could not be opened")
        if fault is not None:
            for pending in self._pending.values():
                if not pending.answered and not pending.expired:
                    pending.fault = fault
                    self._wake(pending)
            log.info("stream to %s closed: %s", self.target, fault.detail)
            return
        if self._dial is not None and self._pending and not self._closing:
            self._schedule_redial()

    def _schedule_redial(self) -> None:
        if self._redial is not None or self._dial is None:
            return
        delay, self._backoff_s = self._backoff_s, min(self._backoff_s * 2, REDIAL_BACKOFF_S[1])
        dial = self._dial

        def again() -> None:
            self._redial = None
            if self._link is None and self._pending and not self._closing:
                self._open(dial)

        self._redial = asyncio.get_running_loop().call_later(delay, again)

    def open_relay(self, write: Write) -> _Relay:
        """Forward another arena process's requests on this bot's stream (``RelayBot``)."""
        relay = _Relay(self, write)
        self._relays.add(relay)
        return relay

    def close_channel(self) -> Coroutine[Any, Any, None]:
        """Close the stream (and the channel of a dialled bot): an asyncio awaitable."""
        self._closing = True
        if self._redial is not None:
            self._redial.cancel()
            self._redial = None
        if self._link is not None:
            self._link.close(Fault(FaultKind.UNREACHABLE, "the referee closed the stream"))
        if self._close_transport is not None:
            return self._close_transport()
        return _nothing()


MAX_RELAYED = 4096
"""Requests one relay may have in flight on the bot's stream."""


class _Relay:
    """Another arena process's requests on a bot's stream here: each sent under an id of this
    stream, its answer sent back under the other process's id (``RelayBot``)."""

    def __init__(self, bot: StreamBot, write: Write) -> None:
        self.bot = bot
        self._write = write
        self._outbox = Outbox()
        self._ours: dict[int, int] = {}
        """Their id → ours, for the requests in flight."""
        self.closed = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._writer())

    def forward(self, raw: bytes) -> None:
        """One message from the other process; anything wrong ends the relay."""
        try:
            messages = bot_service_pb2.PlayRequest.FromString(raw).messages
        except DecodeError:
            self.close()
            return
        if len(raw) > MAX_MESSAGE_BYTES:
            self.close()
            return
        for message in messages:
            self._forward_one(message)

    def _forward_one(self, message: bot_service_pb2.RefereeMessage) -> None:
        link = self.bot._link
        body = message.WhichOneof("body")
        if body == "ping":
            self._send(bot_service_pb2.BotMessage(id=message.id, pong=bot_service_pb2.Pong()))
            return
        if link is None or link.relayed or len(self._ours) >= MAX_RELAYED:
            self.close()
            return
        if body == "withdrawal":
            ours = self._ours.pop(message.withdrawal.request_id, None)
            if ours is not None:
                self.bot._relayed.pop(ours, None)
                _bounded_add(link.withdrawn, ours)
                link.send(withdrawal(self.bot.next_id(), ours, message.withdrawal.reason))
            return
        ours = self.bot.next_id()
        self._ours[message.id] = ours
        self.bot._relayed[ours] = (self, message.id)
        message.id = ours
        link.send(bot_service_pb2.PlayRequest(messages=[message]).SerializeToString())

    def answer(self, theirs: int, message: bot_service_pb2.BotMessage) -> None:
        """The bot answered a relayed request."""
        self._ours.pop(theirs, None)
        message.id = theirs
        self._send(message)

    def _send(self, message: bot_service_pb2.BotMessage) -> None:
        if not self.closed.is_set():
            self._outbox.put(bot_service_pb2.PlayResponse(messages=[message]).SerializeToString())

    async def _writer(self) -> None:
        try:
            while True:
                await self._write(await self._outbox.batch())
        except Exception:  # the other process went away
            self.close()

    def close(self) -> None:
        """Stop relaying: what is in flight is withdrawn from the bot."""
        if self.closed.is_set():
            return
        self.closed.set()
        if self._task is not asyncio.current_task():
            self._task.cancel()
        link = self.bot._link
        for ours in self._ours.values():
            self.bot._relayed.pop(ours, None)
            if link is not None and not link.relayed:
                _bounded_add(link.withdrawn, ours)
        self._ours.clear()
        self.bot._relays.discard(self)


async def _nothing() -> None:
    return None


def open_stream_bot(
    target: str,
    max_concurrent_calls: int,
    tls: grpc.ChannelCredentials | None,
    heartbeat_s: tuple[float, float] = (HEARTBEAT_INTERVAL_S, HEARTBEAT_TIMEOUT_S),
    outbound_dial: Callable[[StreamBot], Link] | None = None,
) -> StreamBot:
    """A ``StreamBot`` for a stream target: ``outbound://`` waits for its bot to attach (or,
    with ``outbound_dial``, reaches it through the arena process it is attached to), a
    ``stream://`` or ``stream+tls://`` one gets its channel opened and dials on first use."""
    if target.startswith(OUTBOUND_SCHEME):
        return StreamBot(target, max_concurrent_calls, outbound_dial, heartbeat_s)
    address = target.removeprefix(STREAM_SCHEME)
    if target.startswith(STREAM_TLS_SCHEME):
        address = "tls://" + target.removeprefix(STREAM_TLS_SCHEME)
    channel = open_channel(address, tls)
    method: Any = channel.stream_stream(  # type: ignore[call-arg]  # the stubs lack the flag
        PLAY_METHOD,
        request_serializer=None,
        response_deserializer=None,
        _registered_method=True,
    )

    def dial(bot: StreamBot) -> Link:
        call = method()
        return Link(bot, call.write, call.read, call.cancel)

    return StreamBot(target, max_concurrent_calls, dial, heartbeat_s, channel.close)


CONNECT_SERVICE = "cardarena.arena.v1.ArenaService"
CONNECT_METHOD = "ConnectBot"

HELLO_TIMEOUT_S = 10.0
"""Time a bot that dialled in has to send its hello."""

Accept = Callable[[str, "grpc.aio.ServicerContext[bytes, bytes]"], Awaitable[StreamBot]]
"""Given the bot id of a hello and the call, the ``StreamBot`` to attach (or abort the call)."""


def read_hello(raw: object) -> str:
    """The bot id of a stream's first message; ``MalformedResponseError`` if it is no hello."""
    if not isinstance(raw, bytes) or len(raw) > MAX_MESSAGE_BYTES:
        raise MalformedResponseError("the first message must be a hello")
    messages = parse_strictly(raw, bot_service_pb2.PlayResponse).messages
    if len(messages) != 1:
        raise MalformedResponseError("the first message must be a hello, alone")
    message = messages[0]
    if message.WhichOneof("body") != "hello" or not message.hello.bot_id:
        raise MalformedResponseError("the first message must be a hello naming the bot")
    return message.hello.bot_id


def connect_bot_handler(
    accept: Accept,
    opened: Callable[[str], Awaitable[None]] | None = None,
    closed: Callable[[str], Awaitable[None]] | None = None,
) -> grpc.RpcMethodHandler[bytes, bytes]:
    """``ArenaService.ConnectBot`` in bytes: read the hello, ``accept`` it, attach the stream
    to the bot's ``StreamBot`` until it ends (``opened`` and ``closed`` are told the bot id).
    A second stream for a bot is ALREADY_EXISTS."""

    async def connect_bot(requests: Any, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        try:
            raw = await asyncio.wait_for(context.read(), HELLO_TIMEOUT_S)
            bot_id = read_hello(raw)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no hello in time")
        except MalformedResponseError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        bot = await accept(bot_id, context)
        await context.send_initial_metadata(())  # before the link writes anything
        try:
            link = bot.attach(context.write, context.read)
        except StreamRefused as error:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(error))
        try:
            if opened is not None:
                await opened(bot_id)
            await link.closed.wait()
        finally:
            link.close(None)  # the call ended (the bot went away): its requests wait for it
            if closed is not None:
                await asyncio.shield(closed(bot_id))

    return grpc.stream_stream_rpc_method_handler(connect_bot)
