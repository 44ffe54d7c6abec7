"""A trivial bot server: answers a random legal action, optionally after a delay.

    python -m benchmarks.servers.bot [--delay-ms 50:200] [--ports 4] [--cpu 1]

``--delay-ms A:B`` sleeps a uniform A..B ms before each answer (no CPU used while waiting);
GetInfo, StartMatch and EndMatch answer at once.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.servers import common
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]


class TrivialBot(bot_service_pb2_grpc.BotServiceServicer):
    """Plays a random legal action after a random delay."""

    def __init__(self, low_ms: float, high_ms: float, seed: int) -> None:
        self.low_s, self.high_s = low_ms / 1000, high_ms / 1000
        self.rng = random.Random(seed)

    async def Play(
        self, request_iterator: Any, context: Context
    ) -> AsyncIterator[bot_service_pb2.PlayResponse]:
        """No Play stream (yet): the referee falls back to the unary calls."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this bot serves the unary calls only")
        yield bot_service_pb2.PlayResponse()  # never reached: abort raises

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
    args = parser.parse_args()
    low, _, high = args.delay_ms.partition(":")
    common.pin(args.cpu)
    bot = TrivialBot(float(low), float(high or low), args.seed)

    async def serve() -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        bot_service_pb2_grpc.add_BotServiceServicer_to_server(bot, server)
        await common.serve_until_stopped(server, args.ports, args.max_seconds)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
