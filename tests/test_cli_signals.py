"""Processes the CLI starts, it stops: SIGTERM to a real ``arena demo`` or ``arena play`` ends
the service and every bot it started (their pids, read from /proc, are all gone)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import ROOT, random_bots

WAIT_S = 120.0


def children(pid: int) -> set[int]:
    """The pids whose parent is ``pid`` (from /proc/*/stat)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, ...
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def read_until(process: subprocess.Popen[bytes], marker: str) -> str:
    """The command's output up to ``marker`` (read from the pipe as it comes, unbuffered)."""
    assert process.stdout is not None
    seen = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + WAIT_S
        while marker.encode() not in seen:
            assert selector.select(deadline - time.monotonic()), f"no {marker!r} in: {seen!r}"
            chunk = os.read(process.stdout.fileno(), 65536)
            assert chunk, f"ended before {marker!r}: {seen!r}"
            seen += chunk
    return seen.decode()


def terminate_and_check(process: subprocess.Popen[bytes], expected_children: int) -> None:
    started = children(process.pid)
    assert len(started) >= expected_children, started
    process.send_signal(signal.SIGTERM)
    try:
        process.communicate(timeout=WAIT_S)  # reading what it still prints, so it never blocks
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode != 0
    survivors = {pid for pid in started if alive(pid)}
    for pid in survivors:  # do not leave them to the next test, whatever happens
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"still running after SIGTERM: {survivors}"


def test_sigterm_to_arena_demo_stops_the_service_and_every_bot() -> None:
    demo = start("demo", "--game", "oh-hell", "--matches", "500")
    read_until(demo, "Playing 500 matches")  # the service and all its bots are running
    terminate_and_check(demo, expected_children=1 + 5)  # oh-hell: the service and 5 bots


def test_sigterm_to_arena_play_stops_the_opponents(tmp_path: Path) -> None:
    records = tmp_path / "records"
    with random_bots(1, seed=5) as mine:
        play = start(
            "play",
            "--game",
            "oh-hell",
            "--bot",
            f"me={mine[0].address}",
            "--vs",
            "random",
            "--seats",
            "4",
            "--games",
            "5000",
            "--records",
            str(records),
        )
        read_until(play, "opponent(s) as separate processes")
        deadline = time.monotonic() + WAIT_S
        while not list(records.glob("*.bin")):  # matches are being played
            assert time.monotonic() < deadline and play.poll() is None
            time.sleep(0.1)
        terminate_and_check(play, expected_children=3)
        assert mine[0].process.poll() is None, "a bot the command did not start is left alone"
