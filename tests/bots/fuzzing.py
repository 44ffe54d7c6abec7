"""A bot that answers seeded random and mutated bytes: a real gRPC server process.

    python -m tests.bots.fuzzing --seed N --listen 127.0.0.1:0

Its handlers take and return raw bytes (a generic handler, no protobuf in the way), so it can
answer what no generated stub would let a bot send. Each call draws one behaviour from a
generator seeded by ``--seed`` and the call's number:

- a correct answer (one of the legal actions, copied) or, for the other calls, a valid reply;
- random bytes; a valid answer bit-flipped, truncated, extended, or with an unknown field;
- a message of another type (GetInfoResponse, the request echoed back) or an action of
  another game; an empty answer;
- a gRPC status other than OK with random details (long, non-ASCII, control characters);
- an answer over the referee's size cap.

GetInfo answers validly ``--info-valid`` of the time (default 0.7) so that some matches start.
It prints ``LISTENING host:port`` once it serves.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Awaitable, Callable

import grpc
import grpc.aio

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, game_pb2, king_pb2, mau_mau_pb2, oh_hell_pb2
from referee.codec.wire import length_delimited, varint
from tests.bots.serving import serve_until_terminated

Context = grpc.aio.ServicerContext[bytes, bytes]
SERVICE = "cardarena.bot.v1.BotService"

STATUS_CODES = [code for code in grpc.StatusCode if code != grpc.StatusCode.OK]
ANSWER_KINDS = (
    "correct",
    "random",
    "flip",
    "truncate",
    "extend",
    "unknown-field",
    "other-type",
    "echo",
    "other-game",
    "empty",
    "status",
    "oversize",
)
WEIGHTS = (6, 2, 2, 2, 2, 2, 1, 1, 2, 1, 3, 1)

OTHER_GAMES = [
    game_pb2.Action(oh_hell=oh_hell_pb2.OhHellAction(bid=1)),
    game_pb2.Action(king=king_pb2.KingAction(trump=cards_pb2.SUIT_HEARTS)),
    game_pb2.Action(mau_mau=mau_mau_pb2.MauMauAction(draw=mau_mau_pb2.MauMauDraw())),
]


def random_text(rng: random.Random) -> str:
    """Status details a hostile bot might send: long, non-ASCII, control characters."""
    alphabet = "abc \x00\x1b\n\t\u202e\u00e9\u4e2d\U0001f0a1%"
    return "".join(rng.choice(alphabet) for _ in range(rng.choice((0, 5, 300, 3000))))


def mutate(rng: random.Random, valid: bytes, kind: str) -> bytes:
    """``valid`` bit-flipped, truncated, extended or with an unknown field appended."""
    if kind == "flip":
        index = rng.randrange(len(valid))
        return valid[:index] + bytes([valid[index] ^ (1 << rng.randrange(8))]) + valid[index + 1 :]
    if kind == "truncate":
        return valid[: rng.randrange(len(valid))]
    if kind == "extend":
        return valid + rng.randbytes(rng.randint(1, 16))
    number = rng.randint(16, 5000)
    return valid + varint(number << 3 | 2) + varint(3) + b"xyz"


class Fuzzer:
    """The behaviours, drawn per call."""

    def __init__(self, seed: int, info_valid: float) -> None:
        self.seed, self.info_valid = seed, info_valid
        self.calls = 0

    def next_rng(self) -> random.Random:
        """The generator of the next call."""
        self.calls += 1
        return random.Random(f"{self.seed}:{self.calls}")

    async def answer(
        self, rng: random.Random, valid: bytes, request: bytes, context: Context
    ) -> bytes:
        kind = rng.choices(ANSWER_KINDS, WEIGHTS)[0]
        if kind == "correct":
            return valid
        if kind == "random":
            return rng.randbytes(rng.randint(1, 200))
        if kind in ("flip", "truncate", "extend", "unknown-field"):
            return mutate(rng, valid, kind) if valid else rng.randbytes(3)
        if kind == "other-type":
            return bot_service_pb2.GetInfoResponse(name="x", version="1").SerializeToString()
        if kind == "echo":
            return request
        if kind == "other-game":
            action = rng.choice(OTHER_GAMES)
            return bot_service_pb2.ChooseActionResponse(action=action).SerializeToString()
        if kind == "empty":
            return b""
        if kind == "status":
            await context.abort(rng.choice(STATUS_CODES), random_text(rng))
        return length_delimited(varint(1000 << 3 | 2), rng.randbytes(70_000))  # oversize

    async def choose_action(self, request: bytes, context: Context) -> bytes:
        rng = self.next_rng()
        parsed = bot_service_pb2.ChooseActionRequest.FromString(request)
        action = rng.choice(list(parsed.legal_actions))
        valid = bot_service_pb2.ChooseActionResponse(action=action).SerializeToString()
        return await self.answer(rng, valid, request, context)

    async def get_info(self, request: bytes, context: Context) -> bytes:
        rng = self.next_rng()
        valid = bot_service_pb2.GetInfoResponse(name="fuzzing", version="1").SerializeToString()
        if rng.random() < self.info_valid:
            return valid
        return await self.answer(rng, valid, request, context)

    async def notified(self, request: bytes, context: Context) -> bytes:
        """StartMatch and EndMatch: an empty reply, or anything else."""
        return await self.answer(self.next_rng(), b"", request, context)


Handler = Callable[[bytes, Context], Awaitable[bytes]]


def raw_handler(handler: Handler) -> grpc.RpcMethodHandler[bytes, bytes]:
    """A unary handler that sees and returns bytes."""
    return grpc.unary_unary_rpc_method_handler(handler)


async def serve(seed: int, info_valid: float, listen: str) -> None:
    fuzzer = Fuzzer(seed, info_valid)
    handlers = grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "GetInfo": raw_handler(fuzzer.get_info),
            "StartMatch": raw_handler(fuzzer.notified),
            "ChooseAction": raw_handler(fuzzer.choose_action),
            "EndMatch": raw_handler(fuzzer.notified),
        },
    )
    await serve_until_terminated(handlers, listen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--info-valid", type=float, default=0.7)
    parser.add_argument("--listen", default="127.0.0.1:0")
    args = parser.parse_args()
    asyncio.run(serve(args.seed, args.info_valid, args.listen))
    sys.exit(0)


if __name__ == "__main__":
    main()
