"""The bot's side of one multiplexed stream (issue 20): the same ``Bot`` answering
RefereeMessages with BotMessages, whether the referee dialled it (``BotService.Play``) or it
dialled the arena (``connect``: ``ArenaService.ConnectBot``, with reconnect and back-off).

Requests are answered one at a time in the order they came, as the unary server does (the
bot's function is synchronous); pings are answered at once by the reader; a request withdrawn
before its turn came is skipped. Answers are written in batches: whatever is ready when the
previous write is done goes as one message (the referee batches its requests the same way; a
stream message costs a fast bot more than its decision). ``time_left_s()`` inside ``choose``
counts down from the request's arrival: its move time plus what is left of its time bank.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
import grpc.aio

from botkit.bot import TIME_LEFT, Bot, ChooseFn, info_of
from cardarena.arena.v1 import arena_service_pb2, arena_service_pb2_grpc
from cardarena.bot.v1 import bot_service_pb2
from netkit.tls import ClientTls

log = logging.getLogger("botkit")

ReadFn = Callable[[], Awaitable[Sequence[bot_service_pb2.RefereeMessage] | None]]
"""The next batch of messages of a stream (None: it ended)."""
WriteFn = Callable[[Sequence[bot_service_pb2.BotMessage]], Awaitable[None]]
"""Write messages to the stream, as one batch."""

BACKOFF_S = (0.5, 30.0)
"""First and longest wait before ``connect`` dials again after losing the arena."""


def _answer(bot: Bot, message: bot_service_pb2.RefereeMessage, received: float) -> Any:
    """The BotMessage answering ``message`` (a request the bot's own code may fail on)."""
    body = message.WhichOneof("body")
    reply = bot_service_pb2.BotMessage(id=message.id)
    if body == "get_info":
        reply.info.CopyFrom(info_of(bot))
        return reply
    try:
        if body == "choose_action":
            request = message.choose_action
            clock = request.time_control
            deadline = received + (clock.move_time_ms + clock.time_bank_ms) / 1000
            token = TIME_LEFT.set(lambda: deadline - time.monotonic())
            try:
                reply.action.action.CopyFrom(bot.choose(request))
            finally:
                TIME_LEFT.reset(token)
        elif body == "start_match":
            if bot.on_start is not None:
                bot.on_start(message.start_match)
            reply.started.SetInParent()
        elif body == "end_match":
            if bot.on_end is not None:
                bot.on_end(message.end_match)
            reply.ended.SetInParent()
        else:
            return None  # a body this bot does not know (a newer referee): nothing to say
    except Exception as error:
        bot.errors += 1
        log.exception("%s raised on request %d", body, message.id)
        reply = bot_service_pb2.BotMessage(id=message.id)
        reply.failure.detail = f"bot {body} raised {error!r}"[:200]
    return reply


async def play_stream(bot: Bot, read: ReadFn, write: WriteFn) -> None:
    """Answer the referee's messages until the stream ends."""
    queue: collections.deque[tuple[bot_service_pb2.RefereeMessage, float]] = collections.deque()
    withdrawn: set[int] = set()
    ready = asyncio.Event()
    ended = finished = False
    outbox: list[bot_service_pb2.BotMessage] = []
    to_write = asyncio.Event()

    def send(reply: bot_service_pb2.BotMessage) -> None:
        outbox.append(reply)
        to_write.set()

    async def writer() -> None:
        while outbox or not finished:
            await to_write.wait()
            to_write.clear()
            while outbox:
                batch = outbox[:]
                outbox.clear()
                await write(batch)

    async def reader() -> None:
        nonlocal ended
        try:
            while (batch := await read()) is not None:
                for message in batch:
                    body = message.WhichOneof("body")
                    if body == "ping":
                        send(bot_service_pb2.BotMessage(id=message.id, pong=bot_service_pb2.Pong()))
                    elif body == "withdrawal":
                        withdrawn.add(message.withdrawal.request_id)
                    else:
                        queue.append((message, time.monotonic()))
                        ready.set()
        finally:
            ended = True
            ready.set()

    async def worker() -> None:
        nonlocal finished
        while True:
            await ready.wait()
            ready.clear()
            while queue:
                message, received = queue.popleft()
                if message.id in withdrawn:
                    withdrawn.discard(message.id)
                    continue
                reply = _answer(bot, message, received)
                if reply is not None:
                    send(reply)
                await asyncio.sleep(0)  # let the reader take pings and withdrawals
            withdrawn.clear()  # every withdrawal seen refers to a request answered or skipped
            if ended:
                finished = True  # the writer ends once the last answers are written
                to_write.set()
                return

    await asyncio.gather(reader(), worker(), writer())


async def play_served(bot: Bot, requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """``BotService.Play``: the referee dialled; answer on the call's own stream."""

    async def read() -> Sequence[bot_service_pb2.RefereeMessage] | None:
        request = await context.read()
        if request is grpc.aio.EOF:
            return None
        return request.messages  # type: ignore[no-any-return]

    async def write(messages: Sequence[bot_service_pb2.BotMessage]) -> None:
        await context.write(bot_service_pb2.PlayResponse(messages=messages))

    await context.send_initial_metadata(())
    await play_stream(bot, read, write)


class Refused(Exception):
    """The arena refused the bot for good (bad token, unknown bot): no point dialling again."""


FINAL_CODES = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNIMPLEMENTED,
)
"""Statuses that end ``connect``: dialling again would get the same answer."""


def arena_channel(arena: str, tls: ClientTls | None) -> grpc.aio.Channel:
    """A channel to the arena's API: TLS with ``tls``'s trust (None: plain text, for an
    arena on this machine or a private network only: the token would travel in clear)."""
    if tls is None:
        return grpc.aio.insecure_channel(arena)
    return grpc.aio.secure_channel(arena, tls.credentials())


async def connect_once(
    bot: Bot, arena: str, token: str, bot_id: str, tls: ClientTls | None = None
) -> bool:
    """One ConnectBot stream to ``arena`` until it ends; True if the arena ever spoke on it.

    ``Refused`` when the arena says no for good."""
    heard = False
    async with arena_channel(arena, tls) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
        call = stub.ConnectBot(metadata=(("authorization", f"Bearer {token}"),))

        async def read() -> Sequence[bot_service_pb2.RefereeMessage] | None:
            nonlocal heard
            response = await call.read()
            if response is grpc.aio.EOF:
                return None
            heard = True
            assert isinstance(response, arena_service_pb2.ConnectBotResponse)
            return response.messages

        async def write(messages: Sequence[bot_service_pb2.BotMessage]) -> None:
            await call.write(arena_service_pb2.ConnectBotRequest(messages=messages))

        try:
            await write([bot_service_pb2.BotMessage(hello=bot_service_pb2.Hello(bot_id=bot_id))])
            await play_stream(bot, read, write)
        except grpc.aio.AioRpcError as error:
            if error.code() in FINAL_CODES:
                raise Refused(f"{error.code().name}: {error.details()}") from None
            log.info("stream to the arena ended: %s %s", error.code().name, error.details())
    return heard


async def connect_async(
    bot: Bot,
    arena: str,
    token: str,
    bot_id: str,
    backoff_s: tuple[float, float] = BACKOFF_S,
    tls: ClientTls | None = None,
) -> None:
    """Stay connected to ``arena`` as ``bot_id``: dial again after each loss, waiting a
    random share of a back-off that doubles up to ``backoff_s[1]`` (reset once the arena
    spoke on a stream). Ends with ``Refused`` when the arena says no for good."""
    wait = backoff_s[0]
    while True:
        if await connect_once(bot, arena, token, bot_id, tls):
            wait = backoff_s[0]
        delay = wait * (0.5 + random.random() / 2)
        log.info("dialling %s again in %.1f s", arena, delay)
        await asyncio.sleep(delay)
        wait = min(wait * 2, backoff_s[1])


def connect(
    choose: ChooseFn | Bot,
    *,
    arena: str,
    token: str,
    bot_id: str,
    name: str = "bot",
    version: str = "0",
    tls: ClientTls | None = None,
) -> None:
    """Dial the arena at ``arena`` (host:port) as the registered bot ``bot_id`` (``token``:
    the bot's key or its owner's token) and play every match it is given, reconnecting with
    back-off, until SIGTERM or Ctrl-C. For bots behind NAT: no port to open, no address to
    register. ``tls``: dial over TLS (``ClientTls()`` trusts the usual roots), as any arena on
    the internet needs."""
    bot = choose if isinstance(choose, Bot) else Bot(choose=choose, name=name, version=version)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    async def main() -> None:
        task = asyncio.ensure_future(connect_async(bot, arena, token, bot_id, tls=tls))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, task.cancel)
        print(f"CONNECTING {arena}", flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
    except Refused as error:
        raise SystemExit(f"error: the arena refused the bot: {error}") from None
    except KeyboardInterrupt:
        sys.exit(0)
