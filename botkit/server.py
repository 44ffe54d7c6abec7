"""A ``BotService`` gRPC server around a plain Python function."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio

from botkit.bot import (
    CURRENT_CONTEXT,
    Bot,
    ChooseFn,
    info_of,
)
from botkit.stream import play_served
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc
from netkit.listen import SERVER_OPTIONS, ListenError, add_port
from netkit.tls import ServerTls, TlsConfigError

log = logging.getLogger("botkit")

Context = grpc.aio.ServicerContext[Any, Any]

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


class _Servicer(bot_service_pb2_grpc.BotServiceServicer):
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def Play(self, request_iterator: Any, context: Context) -> None:  # type: ignore[override]
        """Every match on one stream (``botkit.stream``), the same bot answering."""
        await play_served(self.bot, request_iterator, context)

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return info_of(self.bot)

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
        token = CURRENT_CONTEXT.set(context)
        try:
            return fn(request)
        except Exception as error:
            self.bot.errors += 1
            log.exception("%s raised in match %s", what, getattr(request, "match_id", "?"))
            await _abort(context, f"bot {what} raised {error!r}")
        finally:
            CURRENT_CONTEXT.reset(token)


async def _abort(context: Context, detail: str) -> NoReturn:
    await context.abort(grpc.StatusCode.INTERNAL, detail)
    raise AssertionError("abort returned")  # abort always raises


async def start_server(
    bot: Bot, address: str = "127.0.0.1:0", tls: ServerTls | None = None
) -> tuple[grpc.aio.Server, str]:
    """Start serving ``bot`` on the running asyncio loop; return the server and its host:port.

    ``ListenError`` when the address cannot be bound (a port in use is never shared).
    """
    server = grpc.aio.server(options=SERVER_OPTIONS)
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(_Servicer(bot), server)
    port = add_port(server, address, tls)
    await server.start()
    return server, f"{address.rsplit(':', 1)[0]}:{port}"


async def serve_async(
    bot: Bot,
    address: str = "127.0.0.1:0",
    ready: Callable[[str], None] | None = None,
    tls: ServerTls | None = None,
) -> None:
    """Serve ``bot`` on ``address`` until cancelled or SIGTERM/SIGINT; ``ready`` gets host:port."""
    server, where = await start_server(bot, address, tls)
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
    tls_cert: str | Path | None = None,
    tls_key: str | Path | None = None,
    client_ca: str | Path | None = None,
    max_concurrent_matches: int | None = None,
) -> None:
    """Serve a bot (or a bare move function) until SIGTERM or Ctrl-C.

    Prints ``LISTENING host:port`` on stdout once ready, so scripts can use port 0. With
    ``tls_cert`` and ``tls_key`` (PEM files) it serves TLS (register it as ``tls://host:port``);
    ``client_ca`` also requires the caller's certificate, signed by that CA (mutual TLS; see
    ``caller_identities``). A port in use or a bad TLS file ends it with a one-line error.
    ``max_concurrent_matches``: the most matches to be given at once (0: no preference; None:
    the ``Bot``'s own, else 0).
    """
    bot = choose if isinstance(choose, Bot) else Bot(choose=choose, name=name, version=version)
    if max_concurrent_matches is not None:
        if max_concurrent_matches < 0:
            raise SystemExit("error: max_concurrent_matches must be 0 (no preference) or more")
        bot.max_concurrent_matches = max_concurrent_matches
    tls = None
    if tls_cert is not None or tls_key is not None:
        if tls_cert is None or tls_key is None:
            raise SystemExit("error: TLS needs both tls_cert and tls_key")
        tls = ServerTls(tls_cert, tls_key, client_ca)
    elif client_ca is not None:
        raise SystemExit("error: client_ca needs tls_cert and tls_key")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    def announce(where: str) -> None:
        print(f"LISTENING {where}", flush=True)
        log.info("%s %s listening on %s", bot.name, bot.version, where)

    try:
        asyncio.run(serve_async(bot, address, announce, tls))
    except KeyboardInterrupt:
        sys.exit(0)
    except (ListenError, TlsConfigError) as error:
        raise SystemExit(f"error: {error}") from None
