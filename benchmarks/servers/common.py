"""What every benchmark server process does: pin itself, announce its ports, stop by itself.

A server prints ``LISTENING 127.0.0.1:PORT`` once per port, then ``READY``. It stops on
SIGTERM/SIGINT, when its parent process goes away, or after ``--max-seconds`` at the latest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal

import grpc.aio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every server shares."""
    parser.add_argument("--ports", type=int, default=1, help="listen on this many ports")
    parser.add_argument("--cpu", type=int, help="pin the process to this CPU")
    parser.add_argument("--max-seconds", type=float, default=900, help="stop after this long")


def pin(cpu: int | None) -> None:
    """Run only on ``cpu`` (ignored where the platform cannot)."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu % (os.cpu_count() or 1)})


async def serve_until_stopped(server: grpc.aio.Server, ports: int, max_seconds: float) -> None:
    """Listen on ``ports`` loopback ports, announce them, wait for a reason to stop."""
    bound = [server.add_insecure_port("127.0.0.1:0") for _ in range(ports)]
    await server.start()
    for port in bound:
        print(f"LISTENING 127.0.0.1:{port}", flush=True)
    print("READY", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    parent = os.getppid()
    deadline = loop.time() + max_seconds
    while not stop.is_set() and loop.time() < deadline and os.getppid() == parent:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
    await server.stop(grace=0.2)
