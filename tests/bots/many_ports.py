"""One random bot process listening on many ports: many bot endpoints for the price of one.

``python -m tests.bots.many_ports N`` prints ``LISTENING a,b,…`` (N host:port addresses, one
token) once every port serves, and runs until SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import grpc.aio

from botkit.server import _Servicer
from cardarena.bot.v1 import bot_service_pb2_grpc
from sample_bots.random_bot import make_random_bot


async def main(count: int) -> None:
    server = grpc.aio.server()
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(_Servicer(make_random_bot(0)), server)
    ports = [server.add_insecure_port("127.0.0.1:0") for _ in range(count)]
    await server.start()
    print("LISTENING " + ",".join(f"127.0.0.1:{port}" for port in ports), flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await stop.wait()
    await server.stop(0.5)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
