"""Start sample bots and the arena service as server processes on loopback, and stop them."""

from __future__ import annotations

import contextlib
import functools
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

STARTUP_TIMEOUT_S = 30.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a command which started processes; each of them is stopped first."""

T = TypeVar("T")

_started: set[subprocess.Popen[str]] = set()
"""The processes started here and not yet stopped (``stop_bot`` removes them)."""


@dataclass
class BotProcess:
    """A running bot server: its process and the address it listens on."""

    kind: str
    process: subprocess.Popen[str]
    address: str


def start_bot(kind: str, seed: int | None = None, host: str = "127.0.0.1") -> BotProcess:
    """Start ``arena-bot KIND`` on a free port and wait until it listens."""
    return start_server(kind, bot_command(kind, seed, host))


@functools.cache
def sample_bot_kinds() -> frozenset[str]:
    """The kinds of sample bot, as the sample bots' own program names them (``--list``): the
    arena starts them by module name and imports none of them."""
    listed = subprocess.run(
        [sys.executable, "-m", "sample_bots", "--list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=STARTUP_TIMEOUT_S,
    )
    return frozenset(listed.stdout.split())


def bot_command(kind: str, seed: int | None = None, host: str = "127.0.0.1") -> list[str]:
    """The command line of sample bot ``kind`` listening on a free port."""
    command = [sys.executable, "-m", "sample_bots", kind, "--listen", f"{host}:0"]
    return command if seed is None else [*command, "--seed", str(seed)]


def connect_bot(kind: str, arena: str, bot_id: str, token: str) -> BotProcess:
    """Start sample bot ``kind`` dialling the arena at ``arena`` as ``bot_id`` (registered as
    outbound; ``token`` the bot's key or its owner's token): it listens nowhere, so its
    address is empty. The token reaches it on stdin, never on its command line."""
    command = [sys.executable, "-m", "sample_bots", kind, "--connect", arena, "--bot-id", bot_id]
    command += ["--token", "-"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stdin is not None
    process.stdin.write(token + "\n")
    process.stdin.close()
    return BotProcess(kind, process, "")


def start_many(kinds: Sequence[str], seed: int | None = None) -> list[BotProcess]:
    """Start several sample bots at once (their start-up overlaps) and wait for all."""
    processes = [
        _spawn(bot_command(kind, None if seed is None else seed + i))
        for i, kind in enumerate(kinds)
    ]
    bots: list[BotProcess] = []
    try:
        for kind, process in zip(kinds, processes, strict=True):
            bots.append(_wait_listening(kind, process))
    except BaseException:
        for process in processes:
            stop_bot(process)
        raise
    return bots


def _spawn(
    command: Sequence[str], cwd: str | None = None, stderr: int | None = None
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if stderr is None else stderr,
        text=True,
        bufsize=1,
        cwd=cwd,
    )
    _started.add(process)
    return process


def terminate_started() -> None:
    """Send SIGTERM to every process started here that is still running (without waiting)."""
    for process in list(_started):
        if process.poll() is None:
            process.terminate()


@contextlib.contextmanager
def stopped_on_signal() -> Iterator[None]:
    """Within: SIGTERM or SIGHUP first terminates every process started here, then raises
    ``KeyboardInterrupt`` so the caller's clean-up runs as on Ctrl-C (trio code that runs
    meanwhile takes the signals with its own receiver: ``arena play``). Without it such a signal
    would end this process at once and leave the service and the bots it started running.
    Main thread only (where Python runs signal handlers)."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        for stop in STOP_SIGNALS:  # the clean-up that follows is not interrupted again
            signal.signal(stop, signal.SIG_IGN)
        terminate_started()
        raise KeyboardInterrupt

    previous = {stop: signal.signal(stop, on_signal) for stop in STOP_SIGNALS}
    try:
        yield
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)


def stops_started_on_signal(command: Callable[..., T]) -> Callable[..., T]:
    """``command`` run within ``stopped_on_signal``: for the commands that start processes
    (``arena demo``, ``arena play``)."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> T:
        with stopped_on_signal():
            return command(*args, **kwargs)

    return run


def start_server(
    kind: str, command: Sequence[str], cwd: str | None = None, stderr: int | None = None
) -> BotProcess:
    """Run ``command``, which must print ``LISTENING host:port`` once it serves; wait for it."""
    return _wait_listening(kind, _spawn(command, cwd, stderr))


def _wait_listening(kind: str, process: subprocess.Popen[str]) -> BotProcess:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = process.stdout.readline()
            if not line:
                break
            if line.startswith("LISTENING "):
                return BotProcess(kind, process, line.split()[1])
    finally:
        selector.close()
    stop_bot(process)
    raise RuntimeError(f"bot {kind!r} did not start listening within {STARTUP_TIMEOUT_S} s")


def arena_serve_command(
    admin_token_file: Path, store: Sequence[str], workers: int, *extra: str
) -> list[str]:
    """The command line of an ``arena serve`` process on loopback, API on a free port (it
    prints ``LISTENING``), metrics on another, no web UI (``extra`` may give
    ``--web-listen``): ``store`` is ``["--db", PATH]`` or
    ``["--database-url", URL]``; ``extra`` options go last. Its endpoint guard allows the
    loopback networks (the bots started here listen there) and refuses every other
    non-public address, as on the internet."""
    return [
        sys.executable,
        "-m",
        "arena",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        f"127.0.0.1:{free_port()}",
        *store,
        "--admin-token-file",
        str(admin_token_file),
        "--web-listen",
        "",  # no web UI unless ``extra`` asks for one
        "--workers",
        str(workers),
        *(option for network in LOOPBACK for option in ("--allow-endpoint-network", network)),
        *extra,
    ]


LOOPBACK = ("127.0.0.0/8", "::1/128")
"""The networks a local arena allows bot endpoints in (``--allow-endpoint-network``)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (for servers that must be told a port)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def stop_bot(process: subprocess.Popen[Any], grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after ``grace_s``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
    _started.discard(process)
