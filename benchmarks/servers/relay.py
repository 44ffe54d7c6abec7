"""The arena process an outbound bot is connected to, reduced to its relay: bots dial its
``ConnectBot``, another process's referee reaches them through its ``RelayBot``
(``arena.bot_relay``), no store and no authentication (a benchmark).

    python -m benchmarks.servers.relay [--cpu 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from arena.bot_relay import RELAY_METHOD, relay_bot_handler
from benchmarks.servers import common
from referee.bot_client import BotPool
from referee.bot_stream import (
    CONNECT_METHOD,
    CONNECT_SERVICE,
    StreamBot,
    connect_bot_handler,
)


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_arguments(parser)
    args = parser.parse_args()
    common.pin(args.cpu)

    async def serve() -> None:
        pool = BotPool()

        async def accept(bot_id: str, context: Any) -> StreamBot:
            bot = pool.get(f"outbound://{bot_id}")
            assert isinstance(bot, StreamBot)
            return bot

        def find(bot_id: str) -> StreamBot | None:
            found = pool.peek(f"outbound://{bot_id}")
            return found if isinstance(found, StreamBot) else None

        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        server.add_registered_method_handlers(
            CONNECT_SERVICE,
            {
                CONNECT_METHOD: connect_bot_handler(accept),
                RELAY_METHOD: relay_bot_handler(find, lambda context: True),
            },
        )
        await common.serve_until_stopped(server, 1, args.max_seconds)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
