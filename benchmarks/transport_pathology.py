"""Referee CPU per bot whose connection is unusable, next to a healthy bot (issue 17).

Each pathology is a ``tests.bots.transport`` server process on loopback: it
accepts TCP, then answers with HTTP/2 SETTINGS and GOAWAY and holds the socket (``goaway``),
never sends a byte (``silent``), answers as an HTTP/1 server (``http1``) or a TLS server
(``tls``), or closes at once (``close``); ``closed-port`` is a port nobody listens on, and
``healthy`` a trivial bot (``benchmarks.servers.bot``), the baseline. For each, a fresh referee
client process does what a match start and a health probe do, a GetInfo
call with the referee's 5 s deadline through ``BotPool``, once every ``--period`` seconds (at
once again if a call took longer) for ``--seconds``, and reports:

- **fault**: what the calls came back as (the healthy bot: ok);
- **ms/call**, **max ms**: median and longest wall time of a call, the time a match start
  waits for this bot (the first call to a silent server waits for the connect timeout; later
  ones fail at once while gRPC backs off reconnecting);
- **CPU ms/call**: the referee process's CPU (all threads) over the window ÷ calls;
- **core**: that CPU ÷ the window: the share of a core one such bot costs the referee while
  it is probed at this pace (issue 17 target ≤ 5 %).

``--baseline-code PATH`` also measures the referee code of another checkout (e.g. a worktree
of the commit before a change), interleaved with this one, so before and after come from
one run.

    python benchmarks/transport_pathology.py
    python benchmarks/transport_pathology.py --baseline-code /tmp/before --seconds 10
    python benchmarks/transport_pathology.py --quick
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.local_bots import stop_bot  # noqa: E402

PATHOLOGIES = ("goaway", "silent", "http1", "tls", "close", "closed-port")
MODES = ("healthy", *PATHOLOGIES)
TARGET_CORE_SHARE = 0.05


def cpu_seconds() -> float:
    """User + system CPU of this process, all threads (clock_gettime: µs resolution)."""
    return time.process_time()


# -- the referee client (runs in its own process) -----------------------------------------------


def referee_client(args: argparse.Namespace) -> dict[str, object]:
    """Probe ``args.target`` with GetInfo every ``args.period`` s for ``args.seconds`` s."""
    if args.code:
        sys.path.insert(0, args.code)
    import trio

    from referee import aio_bridge
    from referee.bot_client import BotPool
    from referee.runner import NOTIFY_TIMEOUT_S

    walls: list[float] = []
    faults: collections.Counter[str] = collections.Counter()

    async def main() -> dict[str, object]:
        pool = BotPool()
        try:
            endpoint = pool.get(args.target)
            started_cpu, started = cpu_seconds(), time.perf_counter()
            end = started + args.seconds
            while (now := time.perf_counter()) < end:
                result = await endpoint.get_info(NOTIFY_TIMEOUT_S)
                walls.append(time.perf_counter() - now)
                fault = result.fault
                faults[f"{fault.kind.name}: {fault.detail[:60]}" if fault else "ok"] += 1
                await trio.sleep_until(trio.current_time() + max(0.0, args.period - walls[-1]))
            cpu, wall = cpu_seconds() - started_cpu, time.perf_counter() - started
        finally:
            await pool.close()
        return {
            "calls": len(walls),
            "wall_s": wall,
            "cpu_s": cpu,
            "median_call_s": statistics.median(walls),
            "max_call_s": max(walls),
            "faults": dict(faults),
        }

    return aio_bridge.run(main)


# -- the orchestrator ---------------------------------------------------------------------------


@contextmanager
def endpoint(mode: str) -> Iterator[str]:
    """The address of a server behaving as ``mode`` (nothing listens for ``closed-port``)."""
    if mode == "closed-port":
        yield "127.0.0.1:1"
        return
    module = "benchmarks.servers.bot" if mode == "healthy" else "tests.bots.transport"
    command = [sys.executable, "-m", module, *(() if mode == "healthy" else (mode,))]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if line.startswith("LISTENING "):
                address = line.split()[1]
                break
        else:
            raise RuntimeError(f"{mode} server did not start")
        yield address
    finally:
        stop_bot(process, grace_s=10)


def run_client(target: str, code: str, seconds: float, period: float) -> dict[str, object]:
    """One client process: its figures as JSON on its last line."""
    command = [sys.executable, str(Path(__file__).resolve()), "--role", "referee"]
    command += ["--target", target, "--seconds", str(seconds), "--period", str(period)]
    if code:
        command += ["--code", code]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=seconds + 120)
    if done.returncode != 0:
        raise RuntimeError(f"client for {target} failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="*", choices=MODES, default=list(MODES))
    parser.add_argument("--seconds", type=float, default=10.0, help="window per measurement")
    parser.add_argument("--period", type=float, default=1.0, help="seconds between calls")
    parser.add_argument("--baseline-code", default="", help="also measure this checkout")
    parser.add_argument("--quick", action="store_true", help="short smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--role", choices=["orchestrate", "referee"], default="orchestrate")
    parser.add_argument("--target", default="", help=argparse.SUPPRESS)
    parser.add_argument("--code", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "referee":
        print(json.dumps(referee_client(args)), flush=True)
        return
    if args.quick:
        args.seconds, args.period = 1.0, 0.5
        args.modes = [m for m in args.modes if m in ("healthy", "goaway", "closed-port")]
    codes = {"this": ""}
    if args.baseline_code:
        codes = {"baseline": str(Path(args.baseline_code).resolve()), **codes}
    print(
        f"GetInfo every {args.period:g} s for {args.seconds:g} s per row, "
        f"load {os.getloadavg()[0]:.2f}; target ≤ {TARGET_CORE_SHARE:.0%} of a core"
    )
    print(
        f"{'bot':12} {'code':9} {'calls':>5} {'ms/call':>8} {'max ms':>7} {'CPU ms/call':>12} "
        f"{'core':>6}  fault"
    )
    rows = []
    for mode in args.modes:
        with endpoint(mode) as target:
            for label, code in codes.items():
                run = run_client(target, code, args.seconds, args.period)
                calls = int(run["calls"])  # type: ignore[call-overload]
                cpu_s, wall_s = float(run["cpu_s"]), float(run["wall_s"])  # type: ignore[arg-type]
                faults: dict[str, int] = run["faults"]  # type: ignore[assignment]
                row = {
                    "bot": mode,
                    "code": label,
                    "calls": calls,
                    "ms_per_call": float(run["median_call_s"]) * 1000,  # type: ignore[arg-type]
                    "max_ms": float(run["max_call_s"]) * 1000,  # type: ignore[arg-type]
                    "cpu_ms_per_call": cpu_s / max(calls, 1) * 1000,
                    "core_share": cpu_s / wall_s,
                    "fault": max(faults, key=faults.__getitem__),
                }
                rows.append(row)
                print(
                    f"{mode:12} {label:9} {calls:5d} {row['ms_per_call']:8.1f} "
                    f"{row['max_ms']:7.0f} {row['cpu_ms_per_call']:12.2f} "
                    f"{row['core_share']:6.1%}  {row['fault']}"
                )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "target_core_share": TARGET_CORE_SHARE}))


if __name__ == "__main__":
    main()
