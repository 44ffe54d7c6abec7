"""Bots that misbehave on their Play stream (issue 20), each a real gRPC server process.

    python -m tests.bots.stream_misbehaving MODE [--after N] [--times N] [--sleep-ms MS] \\
        --listen 127.0.0.1:0

Every mode answers on the stream like a good bot (the first legal action) for its first
``--after`` decisions, misbehaves on the next ``--times`` (default: all), then behaves again:

- ``slow``: answers ``--sleep-ms`` late (each request on its own task, so the referee's
  withdrawal arrives first); GetInfo's version says ``withdrawn=N``, the withdrawals seen.
- ``duplicate``: answers every such decision twice.
- ``flood``: sends 200 answers with ids never asked for, and never answers the request.
- ``unknown-id``: answers with an id the referee never sent.
- ``huge``: answers with a 200 KB message (over the referee's 64 KB cap).
- ``garbage``: writes bytes that are no BotMessage.
- ``wrong-kind``: answers a decision with an ``info`` body.
- ``failure``: answers with a ``failure`` body.
- ``drop``: ends the stream on receiving the request (the referee dials again and sends it
  again, and the next stream answers it).

The server reads and writes bytes (a generic handler), so a mode may send what no generated
stub would. With ``--connect HOST:PORT --bot-id ID`` the bot serves nothing and dials
``ConnectBot`` there instead (a bot behind NAT), dialling again 0.1 s after each stream ends
(``drop`` then resumes on a new stream, as a bot whose connection broke).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio

from cardarena.bot.v1 import bot_service_pb2 as pb
from tests.bots.serving import serve_until_terminated

Context = grpc.aio.ServicerContext[bytes, bytes]


def _framed(message: pb.BotMessage) -> bytes:
    return pb.PlayResponse(messages=[message]).SerializeToString()


class StreamMisbehaving:
    """One misbehaviour, over every stream the referee opens."""

    def __init__(self, mode: str, after: int, times: int, sleep_ms: int) -> None:
        self.mode, self.after, self.times, self.sleep_s = mode, after, times, sleep_ms / 1000
        self.decisions = 0
        self.withdrawn = 0
        self.streams = 0

    def _good(self, message: pb.RefereeMessage) -> pb.BotMessage:
        body = message.WhichOneof("body")
        reply = pb.BotMessage(id=message.id)
        if body == "get_info":
            reply.info.name = f"stream-{self.mode}"
            reply.info.version = f"withdrawn={self.withdrawn} streams={self.streams}"
        elif body == "start_match":
            reply.started.SetInParent()
        elif body == "end_match":
            reply.ended.SetInParent()
        elif body == "ping":
            reply.pong.SetInParent()
        else:
            reply.action.action.CopyFrom(message.choose_action.legal_actions[0])
        return reply

    async def play(self, requests: AsyncIterator[bytes], context: Context) -> None:
        """The Play handler."""
        self.streams += 1
        tasks: set[asyncio.Task[None]] = set()

        async def late(reply: pb.BotMessage) -> None:
            await asyncio.sleep(self.sleep_s)
            await context.write(_framed(reply))

        async for raw in requests:
            for message in pb.PlayRequest.FromString(raw).messages:
                body = message.WhichOneof("body")
                if body == "withdrawal":
                    self.withdrawn += 1
                    continue
                reply = self._good(message)
                if body != "choose_action":
                    await context.write(_framed(reply))
                    continue
                index = self.decisions
                self.decisions += 1
                if not self.after <= index < self.after + self.times:
                    await context.write(_framed(reply))
                    continue
                mode = self.mode
                if mode == "drop":
                    return
                if mode == "slow":
                    task = asyncio.ensure_future(late(reply))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif mode == "duplicate":
                    await context.write(_framed(reply))
                    await context.write(_framed(reply))
                elif mode == "flood":
                    for offset in range(200):
                        await context.write(
                            _framed(pb.BotMessage(id=10**9 + offset, pong=pb.Pong()))
                        )
                elif mode == "unknown-id":
                    reply.id += 10**9
                    await context.write(_framed(reply))
                elif mode == "huge":
                    reply.failure.detail = "x" * 200_000
                    await context.write(_framed(reply))
                elif mode == "garbage":
                    await context.write(b"\xff\xff\xff\xff")
                elif mode == "wrong-kind":
                    await context.write(
                        _framed(pb.BotMessage(id=message.id, info=pb.GetInfoResponse(name="?")))
                    )
                elif mode == "failure":
                    await context.write(
                        _framed(pb.BotMessage(id=message.id, failure=pb.Failure(detail="x")))
                    )
                else:
                    raise SystemExit(f"unknown mode {mode}")


class _Dialled:
    """What ``play`` needs of a server context, for a ConnectBot call the bot made."""

    def __init__(self, call: Any) -> None:
        self.write = call.write


async def dial_out(bot: StreamMisbehaving, arena: str, bot_id: str) -> None:
    """Stay connected to ``arena``'s ConnectBot as ``bot_id``."""
    hello = pb.PlayResponse(messages=[pb.BotMessage(hello=pb.Hello(bot_id=bot_id))])
    async with grpc.aio.insecure_channel(arena) as channel:
        method: Any = channel.stream_stream(
            "/cardarena.arena.v1.ArenaService/ConnectBot",
            request_serializer=None,
            response_deserializer=None,
        )
        while True:
            call = method(metadata=(("authorization", "Bearer test"),))

            async def messages(call: Any = call) -> AsyncIterator[bytes]:
                while isinstance(raw := await call.read(), bytes):
                    yield raw

            try:
                await call.write(hello.SerializeToString())
                await bot.play(messages(), _Dialled(call))  # type: ignore[arg-type]
            except grpc.aio.AioRpcError:
                pass
            call.cancel()
            await asyncio.sleep(0.1)


def handlers(bot: StreamMisbehaving) -> grpc.GenericRpcHandler:
    """Play as bytes in, bytes out."""
    return grpc.method_handlers_generic_handler(
        "cardarena.bot.v1.BotService", {"Play": grpc.stream_stream_rpc_method_handler(bot.play)}
    )


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--times", type=int, default=1_000_000)
    parser.add_argument("--sleep-ms", type=int, default=0)
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--connect", help="dial ConnectBot at HOST:PORT instead of serving")
    parser.add_argument("--bot-id", default="misbehaving")
    args = parser.parse_args()
    bot = StreamMisbehaving(args.mode, args.after, args.times, args.sleep_ms)
    if args.connect:
        print("LISTENING -:0", flush=True)  # nothing to listen on: started, for the test helper
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(dial_out(bot, args.connect, args.bot_id))
        sys.exit(0)
    asyncio.run(serve_until_terminated(handlers(bot), args.listen))
    sys.exit(0)


if __name__ == "__main__":
    main()
