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
from pathlib import Path

import grpc.aio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every server shares."""
    parser.add_argument("--ports", type=int, default=1, help="listen on this many ports")
    parser.add_argument("--cpu", type=int, help="pin the process to this CPU")
    parser.add_argument("--max-seconds", type=float, default=900, help="stop after this long")


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all threads (0.0 where there is no /proc or no pid)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin(cpu: int | None) -> None:
    """Run every thread of this process only on ``cpu`` (ignored where the platform cannot).

    Affinity is per thread, and importing grpc already starts threads, so each existing thread
    is pinned; threads started later inherit the mask of the thread that starts them.
    """
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return
    cpus = {cpu % (os.cpu_count() or 1)}
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(thread, cpus)


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
