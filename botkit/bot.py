"""What a bot is (its move function, name and hooks) and what it may ask about the call it is
answering: shared by the unary server (``botkit.server``) and the stream (``botkit.stream``)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc.aio

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2

Context = grpc.aio.ServicerContext[Any, Any]

CURRENT_CONTEXT: contextvars.ContextVar[Context | None] = contextvars.ContextVar(
    "botkit_context", default=None
)


TIME_LEFT: contextvars.ContextVar[Callable[[], float] | None] = contextvars.ContextVar(
    "botkit_time_left", default=None
)
"""Seconds left for the request being answered on a stream (``botkit.stream`` sets it)."""


def time_left_s() -> float | None:
    """Seconds left before the referee's deadline for the call being answered now.

    Call it from inside ``choose`` (or a hook). For a unary call it reads the gRPC deadline, so
    it already accounts for the time the request spent on the network; on a stream it counts
    from the request's arrival (its move time plus its time bank), so leave a margin for the
    way there too. None outside a call or when the caller set no deadline. Search bots should
    stop with a margin for the answer's way back.
    """
    stream_clock = TIME_LEFT.get()
    if stream_clock is not None:
        return stream_clock()
    context = CURRENT_CONTEXT.get()
    return None if context is None else context.time_remaining()


def caller_identities() -> tuple[str, ...]:
    """The names in the caller's client certificate, for the call being answered now.

    Only a bot served with ``client_ca`` (mutual TLS) sees them: the subject alternative names
    of the certificate the referee presented, which gRPC has already verified against that CA.
    Empty outside a call or on a channel without a client certificate.
    """
    context = CURRENT_CONTEXT.get()
    if context is None:
        return ()
    return tuple(name.decode(errors="replace") for name in context.peer_identities() or ())


ChooseFn = Callable[[bot_service_pb2.ChooseActionRequest], game_pb2.Action]
"""A bot's brain: the request for a move in, one of its legal actions out."""


@dataclass
class Bot:
    """A bot: its name and version, its move function and optional match hooks."""

    choose: ChooseFn
    name: str = "bot"
    version: str = "0"
    games: tuple[str, ...] = ()
    max_concurrent_matches: int = 0
    """The most matches the bot wants to play at once (announced in GetInfo; 0: no
    preference, the arena's cap applies)."""
    on_start: Callable[[bot_service_pb2.StartMatchRequest], None] | None = None
    on_end: Callable[[bot_service_pb2.EndMatchRequest], None] | None = None
    errors: int = field(default=0, init=False)


def info_of(bot: Bot) -> bot_service_pb2.GetInfoResponse:
    """What ``bot`` answers to GetInfo."""
    return bot_service_pb2.GetInfoResponse(
        name=bot.name,
        version=bot.version,
        games=bot.games,
        max_concurrent_matches=bot.max_concurrent_matches,
    )
