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
- ``unparseable``: answers bytes that do not parse as a ChooseActionResponse.
- ``other-type``: answers the bytes of another message (a GetInfoResponse).
- ``unknown-field``: a valid answer with a field the contract does not define after it.
- ``unknown-inner-field``: a valid answer with an undefined field inside its action.
- ``other-game``: a well-formed action of another game (King in an Oh Hell match).
- ``rude-status``: fails with PERMISSION_DENIED and 3,500 characters of details, escapes
  and control characters among them.

The server takes and sends bytes (a generic handler), so a mode may answer bytes that no
generated stub would send.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

import grpc
import grpc.aio
from google.protobuf.message import Message

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, game_pb2, king_pb2, oh_hell_pb2
from referee.codec.wire import length_delimited, varint
from tests.bots.serving import serve_until_terminated

Context = grpc.aio.ServicerContext[object, object]
Answer = bot_service_pb2.ChooseActionResponse | bytes

UNDEFINED_FIELD = varint((1000 << 3) | 2) + varint(3) + b"xyz"
"""A length-delimited field numbered 1000, which no message of the contract defines."""


def huge_response(action: game_pb2.Action) -> bot_service_pb2.ChooseActionResponse:
    """A valid answer padded with a 200 KB unknown field (field 1000, length-delimited)."""
    padding = length_delimited(varint((1000 << 3) | 2), b"x" * 200_000)
    response = bot_service_pb2.ChooseActionResponse(action=action)
    response.MergeFromString(padding)
    return response


class Misbehaving:
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
    ) -> Answer:
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
        elif mode == "unparseable":
            return b"\xff\xff\xff\xff"
        elif mode == "other-type":
            return bot_service_pb2.GetInfoResponse(name="a bot", version="1").SerializeToString()
        elif mode == "unknown-field":
            return bot_service_pb2.ChooseActionResponse(action=first).SerializeToString() + (
                UNDEFINED_FIELD
            )
        elif mode == "unknown-inner-field":
            action = first.SerializeToString() + UNDEFINED_FIELD
            return length_delimited(varint((1 << 3) | 2), action)
        elif mode == "other-game":
            king = king_pb2.KingAction(trump=cards_pb2.SUIT_HEARTS)
            return bot_service_pb2.ChooseActionResponse(action=game_pb2.Action(king=king))
        elif mode == "rude-status":
            details = "\x1b[2J\x1b[31mPWNED\n\x07" + "é" * 500 + "x" * 3000
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, details)
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


def _serialize(answer: Answer) -> bytes:
    return answer if isinstance(answer, bytes) else answer.SerializeToString()


def bytes_handlers(bot: Misbehaving) -> grpc.GenericRpcHandler:
    """The bot's methods behind a generic handler whose answers may be raw bytes."""
    methods: dict[str, tuple[Callable[..., Awaitable[object]], type[Message]]] = {
        "GetInfo": (bot.GetInfo, bot_service_pb2.GetInfoRequest),
        "StartMatch": (bot.StartMatch, bot_service_pb2.StartMatchRequest),
        "ChooseAction": (bot.ChooseAction, bot_service_pb2.ChooseActionRequest),
        "EndMatch": (bot.EndMatch, bot_service_pb2.EndMatchRequest),
    }
    return grpc.method_handlers_generic_handler(
        "cardarena.bot.v1.BotService",
        {
            name: grpc.unary_unary_rpc_method_handler(
                method, request_deserializer=request.FromString, response_serializer=_serialize
            )
            for name, (method, request) in methods.items()
        },
    )


async def serve(mode: str, after: int, times: int, sleep_ms: int, listen: str) -> None:
    bot = Misbehaving(mode, after, times, sleep_ms)
    await serve_until_terminated(bytes_handlers(bot), listen)


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
