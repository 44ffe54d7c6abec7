"""The house bot: the arena's own opponent in a new bot's validation matches (``house:random``).

It answers a uniformly random legal action over the unary calls, served in-process on loopback
by ``arena serve`` (on the asyncio host loop, like every gRPC object there). It is the arena's
own, not a sample bot: the arena imports neither ``sample_bots`` nor ``botkit``.
"""

from __future__ import annotations

import random
from typing import Any

import grpc
import grpc.aio

from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc
from netkit.listen import SERVER_OPTIONS, add_port

Context = grpc.aio.ServicerContext[Any, Any]

NAME = "house-random"
VERSION = "1"


class HouseBot(bot_service_pb2_grpc.BotServiceServicer):
    """Picks among the legal actions it is sent with its own seeded RNG (None: from the OS)."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    async def Play(self, request_iterator: Any, context: Context) -> None:  # type: ignore[override]
        """Not served: the arena calls its house bot over the unary calls."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "the house bot answers unary calls")

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return bot_service_pb2.GetInfoResponse(name=NAME, version=VERSION)

    async def StartMatch(
        self, request: bot_service_pb2.StartMatchRequest, context: Context
    ) -> bot_service_pb2.StartMatchResponse:
        return bot_service_pb2.StartMatchResponse()

    async def ChooseAction(
        self, request: bot_service_pb2.ChooseActionRequest, context: Context
    ) -> bot_service_pb2.ChooseActionResponse:
        if not request.legal_actions:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no legal action was sent")
        return bot_service_pb2.ChooseActionResponse(action=self.rng.choice(request.legal_actions))

    async def EndMatch(
        self, request: bot_service_pb2.EndMatchRequest, context: Context
    ) -> bot_service_pb2.EndMatchResponse:
        return bot_service_pb2.EndMatchResponse()


async def start_house_bot(
    host: str = "127.0.0.1", seed: int | None = None
) -> tuple[grpc.aio.Server, str]:
    """Serve the house bot on a free port of ``host`` (on the running asyncio loop); the server
    and its host:port."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(HouseBot(seed), server)
    port = add_port(server, f"{host}:0")
    await server.start()
    return server, f"{host}:{port}"
