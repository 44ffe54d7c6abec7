"""A ``BotService`` gRPC server around a plain Python function."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio

from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc
from cardarena.game.v1 import game_pb2

log = logging.getLogger("botkit")

Context = grpc.aio.ServicerContext[Any, Any]

_CURRENT_CONTEXT: contextvars.ContextVar[Context | None] = contextvars.ContextVar(
    "botkit_context", default=None
)


def time_left_s() -> float | None:
    """Seconds left before the referee's deadline for the call being answered now.

    Call it from inside ``choose`` (or a hook). It reads the gRPC deadline, so it already
    accounts for the time the request spent on the network; None outside a call or when the
    caller set no deadline. Search bots should stop with a margin for the answer's way back.
    """
    context = _CURRENT_CONTEXT.get()
    return None if context is None else context.time_remaining()


RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")

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


class _Servicer(bot_service_pb2_grpc.BotServiceServicer):
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return bot_service_pb2.GetInfoResponse(
            name=self.bot.name,
            version=self.bot.version,
            games=self.bot.games,
            max_concurrent_matches=self.bot.max_concurrent_matches,
        )

    async def StartMatch(
        self, request: bot_service_pb2.StartMatchRequest, context: Context
    ) -> bot_service_pb2.StartMatchResponse:
        if self.bot.on_start is not None:
            await self._guarded(context, "on_start", self.bot.on_start, request)
        return bot_service_pb2.StartMatchResponse()

    async def ChooseAction(
        self, request: bot_service_pb2.ChooseActionRequest, context: Context
    ) -> bot_service_pb2.ChooseActionResponse:
        action = await self._guarded(context, "choose", self.bot.choose, request)
        return bot_service_pb2.ChooseActionResponse(action=action)

    async def EndMatch(
        self, request: bot_service_pb2.EndMatchRequest, context: Context
    ) -> bot_service_pb2.EndMatchResponse:
        if self.bot.on_end is not None:
            await self._guarded(context, "on_end", self.bot.on_end, request)
        return bot_service_pb2.EndMatchResponse()

    async def _guarded(
        self, context: Context, what: str, fn: Callable[[RequestT], ResultT], request: RequestT
    ) -> ResultT:
        """Run the author's code; a bug becomes a log line and an INTERNAL status, not a crash."""
        token = _CURRENT_CONTEXT.set(context)
        try:
            return fn(request)
        except Exception as error:
            self.bot.errors += 1
            log.exception("%s raised in match %s", what, getattr(request, "match_id", "?"))
            await _abort(context, f"bot {what} raised {error!r}")
        finally:
            _CURRENT_CONTEXT.reset(token)


async def _abort(context: Context, detail: str) -> NoReturn:
    await context.abort(grpc.StatusCode.INTERNAL, detail)
    raise AssertionError("abort returned")  # abort always raises


async def start_server(bot: Bot, address: str = "127.0.0.1:0") -> tuple[grpc.aio.Server, str]:
    """Start serving ``bot`` on the running asyncio loop; return the server and its host:port."""
    server = grpc.aio.server()
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(_Servicer(bot), server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    return server, f"{address.rsplit(':', 1)[0]}:{port}"


async def serve_async(
    bot: Bot, address: str = "127.0.0.1:0", ready: Callable[[str], None] | None = None
) -> None:
    """Serve ``bot`` on ``address`` until cancelled or SIGTERM/SIGINT; ``ready`` gets host:port."""
    server, where = await start_server(bot, address)
    if ready is not None:
        ready(where)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop(grace=1.0)


def serve(
    choose: ChooseFn | Bot,
    *,
    name: str = "bot",
    version: str = "0",
    address: str = "127.0.0.1:0",
    max_concurrent_matches: int | None = None,
) -> None:
    """Serve a bot (or a bare move function) until SIGTERM or Ctrl-C.

    ``max_concurrent_matches``: the most matches to be given at once (0: no preference; None:
    the ``Bot``'s own, else 0). Prints ``LISTENING host:port`` on stdout once ready, so
    scripts can use port 0.
    """
    bot = choose if isinstance(choose, Bot) else Bot(choose=choose, name=name, version=version)
    if max_concurrent_matches is not None:
        if max_concurrent_matches < 0:
            raise ValueError("max_concurrent_matches must be 0 (no preference) or more")
        bot.max_concurrent_matches = max_concurrent_matches
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    def announce(where: str) -> None:
        print(f"LISTENING {where}", flush=True)
        log.info("%s %s listening on %s", bot.name, bot.version, where)

    try:
        asyncio.run(serve_async(bot, address, announce))
    except KeyboardInterrupt:
        sys.exit(0)
