"""Matches in flight vs throughput, with bots that take 50-200 ms per move.

A trivial bot server pinned to one CPU answers every move after a uniform 50-200 ms sleep (no
CPU while it waits) on ``--ports`` ports (one "bot" per port). For each level N (10 ... 10,000),
a fresh referee process pinned to the other CPU keeps N matches in flight (a finished match is
replaced at once), waits until all N have started, then counts decisions over a window.

Per level it prints:
- decisions/s and their ratio to the ideal N / mean move time (target >= 0.9 until the
  referee's core is saturated);
- the referee's core load (CPU seconds / wall seconds; 100% = saturated) and the bot server's;
- median and p99 of the bot call round trip (the referee's own queueing shows up here);
- RSS growth of the referee process per match in flight (target <= 64 KB) and its threads.

``--tracemalloc`` also reports, for the largest level, where the Python memory of the matches
in flight goes (top allocation sites per match). A last line gives the memory a whole match's
state holds at its end (engine, move log), measured in-process with tracemalloc.

    python benchmarks/concurrency.py                       # 10 ... 10,000 in flight, oh-hell 4p
    python benchmarks/concurrency.py --levels 100,1000 --seconds 8 --tracemalloc
    python benchmarks/concurrency.py --quick               # a smoke run for CI
    python benchmarks/concurrency.py --stream              # every bot over its Play stream

``--stream`` plays every match over the bots' ``Play`` streams (issue 20: one stream per bot
endpoint carrying all of its matches) instead of a unary call per decision.
"""

from __future__ import annotations

import argparse
import collections
import gc
import itertools
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.referee import cpu_seconds, run_client, server  # noqa: E402
from benchmarks.servers.common import pin, proc_cpu_seconds  # noqa: E402

SERVER_CPU, CLIENT_CPU = 1, 0
LEVELS = (10, 30, 100, 300, 1000, 3000, 10_000)
RAMP_BURST = 200
"""Matches admitted but not yet at their first move, at most (or a fifth of the level)."""


def rss_bytes() -> int:
    """Resident set size of this process (0 where there is no /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def thread_count() -> int:
    """Threads of this process (0 where there is no /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


# -- the referee (runs in its own process) ---------------------------------------------------------


def referee_client(args: argparse.Namespace) -> dict[str, Any]:
    """Keep ``--in-flight`` matches going; count decisions once all of them have started."""
    import trio

    from referee import aio_bridge
    from referee.bot_client import BotPool
    from referee.games.registry import make_game
    from referee.match import TimeControl
    from referee.runner import MatchSpec, play_match

    game = make_game(args.game, args.seats)
    # A clock generous enough that queueing in a saturated referee never turns into timeouts;
    # the round-trip figures show how long decisions really took.
    clock = TimeControl(move_time_ms=120_000, time_bank_ms=0)
    counts = {"decisions": 0, "faults": 0, "started": 0, "finished": 0}
    fault_kinds: collections.Counter[str] = collections.Counter()
    """Faults in the window by kind and a sample detail (see the table's last column)."""
    elapsed: list[int] = []
    measuring = False
    result: dict[str, Any] = {}
    seeds = itertools.count(1)
    if args.tracemalloc:
        tracemalloc.start(1)
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold, *gc.get_threshold()[1:])

    def on_move(match: Any, log: Any) -> None:
        counts["decisions"] += 1
        if log.index == 0:
            counts["started"] += 1
        if log.fault is not None:
            counts["faults"] += 1
            if measuring:
                fault_kinds[f"{log.fault.kind.name}: {log.fault.detail[:80]}"] += 1
        if measuring:
            elapsed.append(log.elapsed_us)

    async def main() -> None:
        nonlocal measuring
        pool = BotPool(max_concurrent_calls=args.in_flight)
        stop = trio.Event()
        targets = [f"stream://{t}" for t in args.targets] if args.stream else args.targets
        rss_before = rss_bytes()
        traced_before = tracemalloc.take_snapshot() if args.tracemalloc else None

        async def slot(index: int) -> None:
            while not stop.is_set():
                endpoints = [targets[(index + seat) % len(targets)] for seat in range(args.seats)]
                spec = MatchSpec(game, endpoints, next(seeds), time_control=clock)
                await play_match(spec, pool, on_move=on_move, stop=stop)
                counts["finished"] += 1

        async def marker() -> None:
            nonlocal measuring
            started = time.perf_counter()
            while counts["started"] < args.in_flight:
                await trio.sleep(0.05)
            result["ramp_s"] = time.perf_counter() - started
            await trio.sleep(args.settle)
            measuring = True
            start = (cpu_seconds(), time.perf_counter(), counts["decisions"], counts["faults"])
            server = proc_cpu_seconds(args.server_pid)
            await trio.sleep(args.seconds)
            result["server_cpu_s"] = proc_cpu_seconds(args.server_pid) - server
            result["cpu_s"] = cpu_seconds() - start[0]
            result["wall_s"] = time.perf_counter() - start[1]
            result["calls"] = counts["decisions"] - start[2]
            result["faults"] = counts["faults"] - start[3]
            result["fault_kinds"] = dict(fault_kinds.most_common(3))
            measuring = False
            result["rss_per_match"] = (rss_bytes() - rss_before) / args.in_flight
            result["threads"] = thread_count()
            if traced_before is not None:
                result["traced"] = top_sites(traced_before, args.in_flight)
            stop.set()

        try:
            limit = args.seconds + args.settle + args.ramp_limit + 120
            with trio.fail_after(limit):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(marker)
                    for index in range(args.in_flight):
                        # Admit matches at the pace they start (at most RAMP_BURST starting at
                        # once), as a ladder would, rather than queueing every opening call.
                        while index - counts["started"] >= max(RAMP_BURST, args.in_flight // 5):
                            await trio.sleep(0.01)
                        nursery.start_soon(slot, index)
        finally:
            await pool.close()

    aio_bridge.run(main)
    elapsed.sort()
    result["rtt_median_ms"] = elapsed[len(elapsed) // 2] / 1000 if elapsed else 0.0
    result["rtt_p99_ms"] = elapsed[int(len(elapsed) * 0.99)] / 1000 if elapsed else 0.0
    return result


def top_sites(before: tracemalloc.Snapshot, matches: int) -> list[tuple[str, float]]:
    """Python allocations grown since ``before``, by source line, in bytes per match."""
    after = tracemalloc.take_snapshot()
    stats = after.compare_to(before, "lineno")
    total = sum(stat.size_diff for stat in stats)
    top = [
        (f"{Path(stat.traceback[0].filename).name}:{stat.traceback[0].lineno}", stat.size_diff)
        for stat in stats[:12]
    ]
    return [("TOTAL (Python objects)", total / matches)] + [
        (site, size / matches) for site, size in top
    ]


def finished_match_bytes(game_name: str, seats: int) -> float:
    """Python memory a completed match holds (engine state + move log), via tracemalloc."""
    import random

    from referee.games.registry import make_game
    from referee.match import Match

    game = make_game(game_name, seats)
    rng = random.Random(3)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    matches = []
    for seed in range(20):
        match = Match(game, seed)
        while not match.is_over:
            legal = match.legal_actions()
            match.play(legal[rng.randrange(len(legal))], 100_000)
        matches.append(match)
    size = (tracemalloc.get_traced_memory()[0] - before) / len(matches)
    tracemalloc.stop()
    return size


# -- the orchestrator ---------------------------------------------------------------------------


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="oh-hell")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)), help="N1,N2,...")
    parser.add_argument("--delay-ms", default="50:200", help="bot think time, uniform A:B ms")
    parser.add_argument("--ports", type=int, default=64, help="bot endpoints (one per port)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured window per level")
    parser.add_argument("--settle", type=float, default=1.0, help="wait after the ramp-up")
    parser.add_argument("--tracemalloc", action="store_true", help="memory sites, last level")
    parser.add_argument("--gc-threshold", type=int, default=0, help="referee gen-0 GC threshold")
    parser.add_argument("--quick", action="store_true", help="short smoke run (CI)")
    parser.add_argument("--stream", action="store_true", help="bots over their Play streams")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--role", choices=["orchestrate", "referee"], default="orchestrate")
    parser.add_argument("--in-flight", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--ramp-limit", type=float, default=300, help=argparse.SUPPRESS)
    parser.add_argument("--targets", nargs="*", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.levels, args.seconds, args.settle, args.ports = "10,100", 1.0, 0.3, 8
    if args.role == "referee":
        pin(CLIENT_CPU)
        print(json.dumps(referee_client(args)), flush=True)
        return

    levels = [int(level) for level in args.levels.split(",")]
    low, _, high = args.delay_ms.partition(":")
    mean_s = (float(low) + float(high or low)) / 2000
    rows = []
    print(
        f"{args.game} {args.seats}p, bots answer in {args.delay_ms} ms (mean {mean_s * 1000:g}), "
        f"{args.ports} bot endpoints, {args.seconds:g} s window per level, referee on CPU "
        f"{CLIENT_CPU}, bots on CPU {SERVER_CPU}, load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'in flight':>9} {'decisions/s':>11} {'ideal':>8} {'× ideal':>8} {'referee core':>12} "
        f"{'bot core':>8} {'rtt p50 ms':>10} {'p99 ms':>8} {'KB/match':>8} {'threads':>7} "
        f"{'ramp s':>6} {'faults':>6}"
    )
    bot_args = ["--ports", str(args.ports), "--cpu", str(SERVER_CPU), "--delay-ms", args.delay_ms]
    with server("benchmarks.servers.bot", *bot_args, "--max-seconds", "1800") as bots:
        for level in levels:
            command = [sys.executable, str(Path(__file__).resolve()), "--role", "referee"]
            command += ["--game", args.game, "--seats", str(args.seats), "--in-flight", str(level)]
            command += ["--seconds", str(args.seconds), "--settle", str(args.settle)]
            command += ["--gc-threshold", str(args.gc_threshold)]
            if args.stream:
                command.append("--stream")
            if args.tracemalloc and level == levels[-1]:
                command.append("--tracemalloc")
            run = run_client(
                [*command, "--targets", *bots.targets],
                bots.process.pid,
                timeout_s=args.seconds + args.settle + args.ramp_limit + 180,
            )
            ideal = level / mean_s
            rate = run["calls"] / run["wall_s"]
            row = {
                "in_flight": level,
                "decisions_per_s": rate,
                "ideal_per_s": ideal,
                "ratio_to_ideal": rate / ideal,
                "referee_core_load": run["cpu_s"] / run["wall_s"],
                "bot_core_load": run["server_cpu_s"] / run["wall_s"],
                **{k: run[k] for k in ("rtt_median_ms", "rtt_p99_ms", "threads", "ramp_s")},
                "kb_per_match": run["rss_per_match"] / 1024,
                "faults": run["faults"],
                "fault_kinds": run["fault_kinds"],
            }
            rows.append(row)
            print(
                f"{level:9d} {rate:11.0f} {ideal:8.0f} {rate / ideal:8.2f} "
                f"{row['referee_core_load']:12.0%} {row['bot_core_load']:8.0%} "
                f"{row['rtt_median_ms']:10.1f} {row['rtt_p99_ms']:8.1f} "
                f"{row['kb_per_match']:8.1f} {row['threads']:7d} {row['ramp_s']:6.1f} "
                f"{row['faults']:6d}",
                flush=True,
            )
            kinds: dict[str, int] = run["fault_kinds"]  # type: ignore[assignment]
            for kind, count in kinds.items():
                print(f"  {count} x {kind}")
            if "traced" in run:
                print(f"Python memory per match in flight at {level} (tracemalloc, top sites):")
                traced: list[tuple[str, float]] = run["traced"]  # type: ignore[assignment]
                for site, size in traced:
                    print(f"  {size / 1024:8.2f} KB  {site}")
    full = finished_match_bytes(args.game, args.seats)
    print(
        f"a whole {args.game} {args.seats}p match at its end holds {full / 1024:.1f} KB of Python "
        "objects (engine state + move log; the record is built after that)"
    )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "finished_match_bytes": full}, indent=2))


if __name__ == "__main__":
    main()
