"""Serving the web app inside ``arena serve``: Hypercorn's trio worker on one listening socket.

The socket is bound here first, so a port in use is a ``ListenError`` at start-up (one line,
exit 1) like the API's and the metrics' ports.
"""

from __future__ import annotations

import functools
import logging
import socket

import trio
from hypercorn.config import Config, Sockets
from hypercorn.trio.run import worker_serve
from hypercorn.utils import wrap_app

from arena.service import ArenaServicer
from arena.store.calls import call_store
from arena.web.app import WebApp, make_app
from arena.web.calls import ArenaCalls
from arena.web.operator import OperatorView
from netkit.listen import ListenError
from referee.aio_bridge import await_aio

log = logging.getLogger("arena.web")


def bind(listen: str) -> socket.socket:
    """A listening TCP socket on ``listen`` (host:port; port 0: any free one)."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, int(port)))
            sock.listen(1024)
        except BaseException:
            sock.close()
            raise
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ListenError(f"cannot serve the web UI on {listen}: {reason}") from None
    sock.setblocking(False)
    return sock


def web_url(sock: socket.socket) -> str:
    """The address a browser opens for ``sock``."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


async def serve_web(
    servicer: ArenaServicer,
    sock: socket.socket,
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the web UI of ``servicer``'s arena on ``sock`` (closed at the end) until
    cancelled; ``task_status.started`` gets its URL."""
    arena = servicer.arena
    operator = OperatorView(arena.metrics)

    async def bots_active() -> int:
        store = servicer.store
        active = await await_aio(lambda: call_store(store, arena.metrics, store.bots, ("active",)))
        return len(active)

    app = make_app(WebApp(ArenaCalls(servicer), operator, bots_active))
    config = Config()
    config.accesslog = None
    config.errorlog = logging.getLogger("arena.web.hypercorn")
    config.graceful_timeout = 1.0
    config.keep_alive_timeout = 30
    config.h11_max_incomplete_size = 64 * 1024
    config.include_server_header = False
    url = web_url(sock)
    with sock:
        async with trio.open_nursery() as nursery:
            await nursery.start(operator.run)
            await nursery.start(
                functools.partial(
                    worker_serve,
                    wrap_app(app, config.wsgi_max_body_size, "asgi"),  # type: ignore[arg-type]
                    config,
                    sockets=Sockets([], [sock], []),
                )
            )
            task_status.started(url)
