"""The web benchmark's baseline: a bare Starlette app answering "hello", served by Hypercorn's
trio worker as ``arena serve`` serves its web UI, on a loopback port.

    python -m benchmarks.servers.web_hello     # prints LISTENING host:port, serves until killed
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import trio
from hypercorn.config import Config, Sockets
from hypercorn.trio.run import worker_serve
from hypercorn.utils import wrap_app
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from arena.web.server import bind


async def hello(request: Request) -> Response:
    return HTMLResponse("<!doctype html><title>hello</title><p>hello</p>")


async def main() -> None:
    app = Starlette(routes=[Route("/", hello)])
    sock = bind("127.0.0.1:0")
    config = Config()
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        await nursery.start(
            functools.partial(
                worker_serve,
                wrap_app(app, config.wsgi_max_body_size, "asgi"),  # type: ignore[arg-type]
                config,
                sockets=Sockets([], [sock], []),
            )
        )
        host, port = sock.getsockname()[:2]
        print(f"LISTENING {host}:{port}", flush=True)


if __name__ == "__main__":
    trio.run(main)
