"""How every test bot process serves: one port (no SO_REUSEPORT), ``LISTENING host:port`` on
stdout for ``arena.local_bots.start_server``, and a stop on SIGTERM."""

from __future__ import annotations

import asyncio
import signal

import grpc
import grpc.aio

from netkit.listen import SERVER_OPTIONS, add_port


async def serve_until_terminated(handlers: grpc.GenericRpcHandler, listen: str) -> None:
    """Serve ``handlers`` on ``listen`` until the process gets SIGTERM."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers([handlers])
    port = add_port(server, listen)
    await server.start()
    print(f"LISTENING {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(grace=0.5)
