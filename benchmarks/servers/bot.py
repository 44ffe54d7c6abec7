"""A trivial bot server: answers a random legal action, optionally after a delay.

    python -m benchmarks.servers.bot [--delay-ms 50:200] [--ports 4] [--cpu 1]
    python -m benchmarks.servers.bot --connect HOST:PORT --bot-ids b0,b1 [--cpu 1]

``--delay-ms A:B`` sleeps a uniform A..B ms before each answer (no CPU used while waiting);
GetInfo, StartMatch and EndMatch answer at once. It serves the unary calls and ``Play`` (one
stream per referee, every match on it; answers ready together go out as one batch, or one a
message with ``--one-per-write``); with ``--connect`` it serves nothing and instead
dials ``ArenaService.ConnectBot`` at HOST:PORT once per bot id (a bot behind NAT), dialling
again while the other side is not up yet.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.servers import common
from cardarena.arena.v1 import arena_service_pb2, arena_service_pb2_grpc
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]

EMPTY_ANSWERS = {"start_match": "started", "end_match": "ended", "ping": "pong"}
"""The stream requests answered by an empty message, and the answer's field."""


class TrivialBot(bot_service_pb2_grpc.BotServiceServicer):
    """Plays a random legal action after a random delay."""

    def __init__(self, low_ms: float, high_ms: float, seed: int, batch: bool = True) -> None:
        self.low_s, self.high_s = low_ms / 1000, high_ms / 1000
        self.batch = batch
        """Whether answers ready together are written as one stream message."""
        self.rng = random.Random(seed)

    async def Play(self, request_iterator: Any, context: Context) -> None:  # type: ignore[override]
        """Every match on one stream."""

        async def write(messages: list[bot_service_pb2.BotMessage]) -> None:
            await context.write(bot_service_pb2.PlayResponse(messages=messages))

        async def messages() -> AsyncIterator[bot_service_pb2.RefereeMessage]:
            async for request in request_iterator:
                for message in request.messages:
                    yield message

        await self.play(messages(), write)

    async def play(
        self,
        messages: AsyncIterator[bot_service_pb2.RefereeMessage],
        write: Callable[[list[bot_service_pb2.BotMessage]], Awaitable[None]],
    ) -> None:
        """Answer a stream's messages; with a delay, each decision on its own task. Answers
        are written in batches (whatever is ready when the previous write is done: the
        answers to one batch of requests travel together), or one a message."""
        outbox: list[bot_service_pb2.BotMessage] = []
        ready = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        def send(reply: bot_service_pb2.BotMessage) -> None:
            outbox.append(reply)
            ready.set()

        async def writer() -> None:
            while True:
                await ready.wait()
                ready.clear()
                while outbox:
                    batch = outbox[:] if self.batch else outbox[:1]
                    del outbox[: len(batch)]
                    await write(batch)

        async def later(reply: bot_service_pb2.BotMessage) -> None:
            await asyncio.sleep(self.rng.uniform(self.low_s, self.high_s))
            send(reply)

        writing = asyncio.ensure_future(writer())
        try:
            async for message in messages:
                reply = self._reply(message)
                if reply is None:
                    continue
                if self.high_s > 0 and message.WhichOneof("body") == "choose_action":
                    task = asyncio.ensure_future(later(reply))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                else:
                    send(reply)
        finally:
            writing.cancel()

    def _reply(self, message: bot_service_pb2.RefereeMessage) -> bot_service_pb2.BotMessage | None:
        """The answer to one message (None: a message that needs none)."""
        body = message.WhichOneof("body")
        reply = bot_service_pb2.BotMessage(id=message.id)
        if body == "choose_action":
            legal = message.choose_action.legal_actions
            reply.action.action.CopyFrom(legal[self.rng.randrange(len(legal))])
        elif body == "get_info":
            reply.info.name, reply.info.version = "bench-trivial", "1"
        elif body in EMPTY_ANSWERS:
            getattr(reply, EMPTY_ANSWERS[body]).SetInParent()
        else:
            return None
        return reply

    async def connect(self, arena: str, bot_id: str) -> None:
        """Dial ConnectBot as ``bot_id`` and answer on it; dial again whenever it ends."""
        async with grpc.aio.insecure_channel(arena) as channel:
            stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
            while True:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self._connected(stub, bot_id)
                await asyncio.sleep(0.2)

    async def _connected(
        self, stub: arena_service_pb2_grpc.ArenaServiceAsyncStub, bot_id: str
    ) -> None:
        call: Any = stub.ConnectBot(metadata=(("authorization", "Bearer bench"),))

        async def write(messages: list[bot_service_pb2.BotMessage]) -> None:
            await call.write(arena_service_pb2.ConnectBotRequest(messages=messages))

        async def messages() -> AsyncIterator[bot_service_pb2.RefereeMessage]:
            while (response := await call.read()) is not grpc.aio.EOF:
                assert isinstance(response, arena_service_pb2.ConnectBotResponse)
                for message in response.messages:
                    yield message

        await write([bot_service_pb2.BotMessage(hello=bot_service_pb2.Hello(bot_id=bot_id))])
        await self.play(messages(), write)

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return bot_service_pb2.GetInfoResponse(name="bench-trivial", version="1")

    async def StartMatch(
        self, request: bot_service_pb2.StartMatchRequest, context: Context
    ) -> bot_service_pb2.StartMatchResponse:
        return bot_service_pb2.StartMatchResponse()

    async def EndMatch(
        self, request: bot_service_pb2.EndMatchRequest, context: Context
    ) -> bot_service_pb2.EndMatchResponse:
        return bot_service_pb2.EndMatchResponse()

    async def ChooseAction(
        self, request: bot_service_pb2.ChooseActionRequest, context: Context
    ) -> bot_service_pb2.ChooseActionResponse:
        rng = self.rng
        if self.high_s > 0:
            await asyncio.sleep(rng.uniform(self.low_s, self.high_s))
        legal = request.legal_actions
        return bot_service_pb2.ChooseActionResponse(action=legal[rng.randrange(len(legal))])


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_arguments(parser)
    parser.add_argument("--delay-ms", default="0", help="A or A:B milliseconds before answers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--connect", help="dial ConnectBot at HOST:PORT instead of serving")
    parser.add_argument("--bot-ids", default="b0", help="with --connect: comma-separated ids")
    parser.add_argument(
        "--one-per-write", action="store_true", help="stream answers one a message, unbatched"
    )
    args = parser.parse_args()
    low, _, high = args.delay_ms.partition(":")
    common.pin(args.cpu)
    bot = TrivialBot(float(low), float(high or low), args.seed, batch=not args.one_per_write)

    async def serve() -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        bot_service_pb2_grpc.add_BotServiceServicer_to_server(bot, server)
        await common.serve_until_stopped(server, args.ports, args.max_seconds)

    async def connect() -> None:
        print("READY", flush=True)
        ids = args.bot_ids.split(",")
        dialling = asyncio.gather(*(bot.connect(args.connect, bot_id) for bot_id in ids))
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(dialling, args.max_seconds)

    asyncio.run(connect() if args.connect else serve())


if __name__ == "__main__":
    main()
