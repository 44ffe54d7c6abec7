"""Bots that fail on purpose, each a real gRPC server process, for the referee's fault tests.

    python -m tests.bots.misbehaving MODE [--after N] [--sleep-ms MS] --listen 127.0.0.1:0

Every mode answers GetInfo and plays the first legal action for its first ``--after`` moves,
then misbehaves on the next ``--times`` moves (default: all of them), then plays legally again:

- ``sleep``: sleeps ``--sleep-ms`` before answering (past the deadline, or within the bank).
- ``crash``: the process exits abruptly (no answer, connection drops).
- ``garbage``: answers an Action of no game at all.
- ``empty``: answers with no action at all.
- ``illegal``: answers a well-formed action that is not among the legal ones.
- ``huge``: answers with a message over the referee's size cap.
- ``hang``: never answers.
- ``error``: the handler raises (the bot answers with an INTERNAL gRPC status).
- ``info-only``: answers GetInfo, but ChooseAction is unimplemented.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

import grpc
import grpc.aio

from botkit.server import SERVER_OPTIONS, add_port
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc
from cardarena.game.v1 import cards_pb2, game_pb2, oh_hell_pb2
from referee.codec.wire import length_delimited, varint

Context = grpc.aio.ServicerContext[object, object]


def huge_response(action: game_pb2.Action) -> bot_service_pb2.ChooseActionResponse:
    """A valid answer padded with a 200 KB unknown field (field 1000, length-delimited)."""
    padding = length_delimited(varint((1000 << 3) | 2), b"x" * 200_000)
    response = bot_service_pb2.ChooseActionResponse(action=action)
    response.MergeFromString(padding)
    return response


class Misbehaving(bot_service_pb2_grpc.BotServiceServicer):
    def __init__(self, mode: str, after: int, times: int, sleep_ms: int) -> None:
        self.mode, self.after, self.times, self.sleep_ms = mode, after, times, sleep_ms
        self.moves = 0

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return bot_service_pb2.GetInfoResponse(name=f"misbehaving-{self.mode}", version="1")

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
        self.moves += 1
        first = request.legal_actions[0]
        if not self.after < self.moves <= self.after + self.times:
            return bot_service_pb2.ChooseActionResponse(action=first)
        mode = self.mode
        if mode == "sleep":
            await asyncio.sleep(self.sleep_ms / 1000)
        elif mode == "crash":
            os._exit(3)
        elif mode == "garbage":
            return bot_service_pb2.ChooseActionResponse(action=game_pb2.Action())
        elif mode == "empty":
            return bot_service_pb2.ChooseActionResponse()
        elif mode == "illegal":
            return bot_service_pb2.ChooseActionResponse(action=_illegal(request))
        elif mode == "huge":
            return huge_response(first)
        elif mode == "hang":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                print("CANCELLED", flush=True)  # the referee's cancel reached the handler
                raise
        elif mode == "error":
            raise RuntimeError("bot bug")
        elif mode == "info-only":
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "ChooseAction not implemented")
        return bot_service_pb2.ChooseActionResponse(action=first)


def _illegal(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
    """An Oh Hell card that is not among the legal actions (or an absurd bid)."""
    legal = {a.SerializeToString() for a in request.legal_actions}
    for suit in range(1, 5):
        for rank in range(2, 15):
            action = game_pb2.Action(
                oh_hell=oh_hell_pb2.OhHellAction(
                    play=cards_pb2.Card(suit=suit, rank=rank)  # type: ignore[arg-type]
                )
            )
            if action.SerializeToString() not in legal:
                return action
    return game_pb2.Action(oh_hell=oh_hell_pb2.OhHellAction(bid=99))


async def serve(mode: str, after: int, times: int, sleep_ms: int, listen: str) -> None:
    server = grpc.aio.server(options=SERVER_OPTIONS)
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(
        Misbehaving(mode, after, times, sleep_ms), server
    )
    port = add_port(server, listen)
    await server.start()
    print(f"LISTENING {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(grace=0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--times", type=int, default=1_000_000)
    parser.add_argument("--sleep-ms", type=int, default=0)
    parser.add_argument("--listen", default="127.0.0.1:0")
    args = parser.parse_args()
    asyncio.run(serve(args.mode, args.after, args.times, args.sleep_ms, args.listen))
    sys.exit(0)


if __name__ == "__main__":
    main()
