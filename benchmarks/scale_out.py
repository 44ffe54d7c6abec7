"""Ladder matches per second with 1, 2 and 4 ``arena serve`` processes on one PostgreSQL
database (issue 19).

Every process plays at most ``--workers`` matches at once, so with the bots and the database
not the limit, n processes should finish n times the matches of one. The bots are
``benchmarks.servers.sleepy`` processes (``--bots`` of them, each its own process and owner)
that sleep ``--delay-ms`` before every answer and use no CPU meanwhile, and announce 1000
matches at once; the ladder's concurrency and per-bot cap are above 4 × workers; the game is
Klaberjass with a low target score (about 21 decisions a match, so 1.5-2 s a match with
50-100 ms bots). Referee CPU is a few percent of a core per process at that pace: if the
ratio falls short, the arena's coordination (scheduling, claims, the database) is what does
not scale, or the machine is full, which the CPU columns show.

One scratch database for every phase: a set-up process validates the bots and creates the
ladder, then for each process count the processes start, warm up for ``--warmup`` seconds, and
the ladder matches finished in the next ``--window`` seconds are counted from the database
(``matches.finished_at_us``). Over the window it also reads the CPU seconds of every arena
process, of the bot processes, of PostgreSQL (every ``postgres`` process on this machine, and
the backends of this database alone) and of the whole machine (busy cores), and samples the
matches being played (should be processes × workers).

    python benchmarks/scale_out.py [--json FILE] [--quick]
    python benchmarks/scale_out.py --workers 8 --window 30 --database-url postgresql://…/test
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from arena.client import ArenaClient  # noqa: E402
from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot  # noqa: E402
from arena.store.db import scratch_postgres_database  # noqa: E402
from benchmarks.servers.common import proc_cpu_seconds  # noqa: E402
from benchmarks.servers.sleepy import sleepy_command, start_sleepy_bots  # noqa: E402
from cardarena.arena.v1 import arena_service_pb2 as pb  # noqa: E402
from cardarena.game.v1 import options_pb2  # noqa: E402

ADMIN = "scale-out-admin"
LADDER = "scale-out"
PROCESS_COUNTS = (1, 2, 4)
TARGETS = {2: 1.9, 4: 3.6}
"""Matches/s with n processes ÷ with one, at least (issue 19)."""
DEFAULT_SERVER = os.environ.get("ARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def short_klaberjass_ladder(
    name: str, concurrency: int, max_matches_per_bot: int
) -> pb.LadderConfig:
    """Klaberjass to 50 points: one or two hands, about 21 decisions a match."""
    settings = options_pb2.GameSettings(game="klaberjass", num_seats=2)
    settings.options["target_score"].int_value = 50
    return pb.LadderConfig(
        name=name,
        settings=settings,
        move_time_ms=2000,
        time_bank_ms=10_000,
        max_faults=3,
        concurrency=concurrency,
        max_matches_per_bot=max_matches_per_bot,
    )


def ladder_config(workers: int) -> pb.LadderConfig:
    """The benchmark's ladder: concurrency and per-bot cap above every phase's matches at once
    (4 × workers), so neither is the limit."""
    room = max(PROCESS_COUNTS) * workers + 8
    return short_klaberjass_ladder(LADDER, room, room)


# -- CPU accounting --------------------------------------------------------------------------------


def postgres_pids() -> list[int]:
    """Every process on this machine whose command is ``postgres`` (server and backends)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == "postgres":
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def machine_busy_seconds() -> float:
    """CPU seconds every core spent not idle since boot (``/proc/stat``)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / CLOCK_TICK


def cpu_of(pids: Sequence[int]) -> dict[int, float]:
    return {pid: proc_cpu_seconds(pid) for pid in pids}


def used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds used between two readings (a process new in ``after`` counts from 0; one
    gone by then is not counted: PostgreSQL backends live as long as a pool's connection)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def this_database_backends(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return [int(row[0]) for row in rows]


# -- processes -------------------------------------------------------------------------------------


@dataclass
class Fleet:
    """The running bot processes and the bot ids they are registered as."""

    bots: list[BotProcess]
    bot_ids: list[str]


def arena_command(url: str, token_file: Path, worker_id: str, workers: int) -> list[str]:
    return arena_serve_command(
        token_file,
        ["--database-url", url],
        workers,
        "--worker-id",
        worker_id,
        "--validation-workers",
        str(workers),
        "--limit-peer-requests",
        "off",
    )


@contextmanager
def arenas(
    url: str, workdir: Path, names: Sequence[str], workers: int
) -> Iterator[list[BotProcess]]:
    """``arena serve`` processes, one per name (its worker id), started at once; stopped
    together (SIGTERM to all, then each waited for) at the end."""
    token = workdir / "admin"
    token.write_text(ADMIN)
    logs = [(workdir / f"{name}.log").open("a") for name in names]
    with ThreadPoolExecutor(len(names)) as starting:
        futures = [
            starting.submit(
                start_server,
                name,
                arena_command(url, token, name, workers),
                str(ROOT),
                log.fileno(),
            )
            for name, log in zip(names, logs, strict=True)
        ]
    started = [future.result() for future in futures if future.exception() is None]
    try:
        if len(started) < len(names):
            raise SystemExit(f"an arena process did not start; see the logs in {workdir}")
        yield started
    finally:
        for process in started:
            if process.process.poll() is None:
                process.process.terminate()
        for process in started:
            drain(process)
        for log in logs:
            log.close()


def drain(process: BotProcess, grace_s: float = 30.0) -> int | None:
    """Wait for a process already sent SIGTERM to exit (a second SIGTERM would cut its drain
    short), SIGKILL it after ``grace_s``; its exit code."""
    try:
        process.process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.process.kill()
        process.process.wait()
    stop_bot(process.process)  # it has exited: this only closes its pipe
    return process.process.returncode


def register(client: ArenaClient, bots: Sequence[BotProcess], game: str) -> list[str]:
    """Each bot under an owner of its own, which the admin creates (no limit on new owners
    per address applies): ``client`` holds the admin token."""
    ids = []
    for index, bot in enumerate(bots):
        owner = f"owner{index}"
        token = client.call("CreateOwner", pb.CreateOwnerRequest(owner=owner)).owner_token
        request = pb.RegisterBotRequest(
            owner=owner, name=f"sleepy{index}", game=game, endpoint=bot.address
        )
        ids.append(str(client.call("RegisterBot", request, token=token).bot.bot_id))
    return ids


def wait_validated(client: ArenaClient, ids: Sequence[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        states = {
            client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bot_id)).bot.state
            for bot_id in ids
        }
        if states == {pb.BOT_STATE_ACTIVE}:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the bots were not all validated in {timeout_s:g} s: {states}")
        time.sleep(0.5)


# -- measuring -------------------------------------------------------------------------------------


def in_flight_sampler(url: str, stop: threading.Event, samples: list[int]) -> None:
    """Every 0.5 s, how many ladder matches are being played (until ``stop``)."""
    with psycopg.connect(url, autocommit=True) as connection:
        while not stop.wait(0.5):
            row = connection.execute(
                "SELECT COUNT(*) FROM matches WHERE status = 'playing' AND kind = 'ladder'"
            ).fetchone()
            samples.append(int(row[0]) if row else 0)


def finished_between(url: str, start_us: int, end_us: int) -> tuple[int, float]:
    """Ladder matches finished in [start, end) and their mean moves."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT COUNT(DISTINCT m.match_id), COALESCE(SUM(s.moves), 0) FROM matches m "
            "JOIN match_seats s ON s.match_id = m.match_id WHERE m.kind = 'ladder' "
            "AND m.status = 'finished' AND m.finished_at_us >= %s AND m.finished_at_us < %s",
            (start_us, end_us),
        ).fetchone()
    matches, moves = (int(row[0]), int(row[1])) if row else (0, 0)
    return matches, moves / matches if matches else 0.0


def phase(
    url: str, workdir: Path, fleet: Fleet, count: int, args: argparse.Namespace
) -> dict[str, Any]:
    """``count`` arena processes: warm up, then count the window's finished matches."""
    names = [f"p{count}-{index}" for index in range(count)]
    with arenas(url, workdir, names, args.workers) as processes:
        time.sleep(args.warmup)
        arena_pids = [p.process.pid for p in processes]
        bot_pids = [b.process.pid for b in fleet.bots]
        samples: list[int] = []
        stop = threading.Event()
        sampler = threading.Thread(target=in_flight_sampler, args=(url, stop, samples))
        sampler.start()
        arena0, bots0, pg0 = cpu_of(arena_pids), cpu_of(bot_pids), cpu_of(postgres_pids())
        ours0 = cpu_of(this_database_backends(url))
        machine0, start = machine_busy_seconds(), time.time()
        time.sleep(args.window)
        machine1, end = machine_busy_seconds(), time.time()
        arena1, bots1, pg1 = cpu_of(arena_pids), cpu_of(bot_pids), cpu_of(postgres_pids())
        ours1 = cpu_of(this_database_backends(url))
        stop.set()
        sampler.join()
        time.sleep(1.0)  # results whose match ended in the window are committed by now
        matches, moves = finished_between(url, int(start * 1e6), int(end * 1e6))
    wall = end - start
    return {
        "processes": count,
        "window_s": round(wall, 2),
        "matches": matches,
        "matches_per_s": matches / wall,
        "moves_per_match": round(moves, 1),
        "in_flight_mean": round(statistics.fmean(samples), 1) if samples else 0.0,
        "in_flight_max": max(samples, default=0),
        "load_average": round(os.getloadavg()[0], 1),
        "cpu": {
            "arena_s": {
                name: round(arena1[pid] - arena0[pid], 2)
                for name, pid in zip(names, arena_pids, strict=True)
            },
            "bots_s": round(used(bots0, bots1), 2),
            "postgres_s": round(used(pg0, pg1), 2),
            "postgres_this_db_s": round(used(ours0, ours1), 2),
            "machine_busy_s": round(machine1 - machine0, 2),
            "machine_cores": os.cpu_count() or 1,
        },
    }


def set_up(url: str, workdir: Path, args: argparse.Namespace) -> Fleet:
    """Start the bots, register and validate them, create the ladder (one arena process)."""
    commands = [sleepy_command(args.delay_ms, 1000, seed) for seed in range(args.bots)]
    bots = start_sleepy_bots(commands, ROOT)
    fleet = Fleet(bots, [])
    try:
        with arenas(url, workdir, ["setup"], max(args.workers, args.bots * 2)) as (setup,):
            client = ArenaClient(setup.address, ADMIN, timeout_s=30)
            try:
                fleet.bot_ids = register(client, bots, "klaberjass")
                wait_validated(client, fleet.bot_ids, timeout_s=120)
                config = ladder_config(args.workers)
                client.call("CreateLadder", pb.CreateLadderRequest(config=config))
            finally:
                client.close()
    except BaseException:
        stop_fleet(fleet)
        raise
    return fleet


def stop_fleet(fleet: Fleet) -> None:
    for bot in fleet.bots:
        stop_bot(bot.process)


def run(args: argparse.Namespace) -> dict[str, Any]:
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="scale-out-")))
        url = stack.enter_context(scratch_postgres_database(args.database_url, "cardarena_bench"))
        fleet = set_up(url, workdir, args)
        stack.callback(stop_fleet, fleet)
        phases = {str(count): phase(url, workdir, fleet, count, args) for count in PROCESS_COUNTS}
    one = phases["1"]["matches_per_s"]
    return {
        "processes": {count: round(p["matches_per_s"], 3) for count, p in phases.items()},
        "ratio": {
            count: round(phases[count]["matches_per_s"] / one, 3) if one else None
            for count in phases
            if count != "1"
        },
        "targets": {str(count): target for count, target in TARGETS.items()},
        "cpu": {count: p["cpu"] for count, p in phases.items()},
        "phases": phases,
        "settings": {
            "workers": args.workers,
            "bots": args.bots,
            "delay_ms": args.delay_ms,
            "warmup_s": args.warmup,
            "window_s": args.window,
            "game": "klaberjass 2 seats, target_score 50",
        },
    }


def print_table(result: dict[str, Any]) -> None:
    settings = result["settings"]
    print(
        f"ladder matches/s, {settings['game']}, bots sleeping {settings['delay_ms']} ms, "
        f"--workers {settings['workers']} per process, {settings['window_s']:g} s windows"
    )
    header = (
        f"{'procs':>5} {'matches/s':>9} {'× one':>6} {'target':>6} {'in flight':>9} "
        f"{'moves/m':>7} {'arena CPU s (each)':>22} {'ms/match':>8} {'bots s':>6} "
        f"{'pg s':>6} {'pg db s':>7} {'machine':>8} {'load':>5}"
    )
    print(header)
    for count, p in result["phases"].items():
        cpu = p["cpu"]
        ratio = result["ratio"].get(count)
        target = result["targets"].get(count)
        each = ",".join(f"{s:.1f}" for s in cpu["arena_s"].values())
        busy = cpu["machine_busy_s"] / p["window_s"] / cpu["machine_cores"]
        per_match = 1000 * sum(cpu["arena_s"].values()) / p["matches"] if p["matches"] else 0.0
        print(
            f"{count:>5} {p['matches_per_s']:>9.2f} "
            f"{'' if ratio is None else f'{ratio:.2f}':>6} "
            f"{'' if target is None else f'≥{target}':>6} "
            f"{p['in_flight_mean']:>9.1f} {p['moves_per_match']:>7.1f} {each:>22} "
            f"{per_match:>8.1f} {cpu['bots_s']:>6.1f} {cpu['postgres_s']:>6.1f} "
            f"{cpu['postgres_this_db_s']:>7.1f} {busy:>8.0%} {p['load_average']:>5.1f}"
        )
    print(
        "in flight: mean ladder matches being played (ideal: processes × workers); ms/match: "
        "arena CPU per finished match; pg: every postgres process, pg db: this database's "
        "backends; machine: busy share of all cores over the window (other work on the "
        "machine included); load: 1-minute load average at the window's end"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_SERVER, help="server for a scratch db")
    parser.add_argument("--workers", type=int, default=8, help="arena serve --workers")
    parser.add_argument("--bots", type=int, default=8, help="sleepy bot processes")
    parser.add_argument("--delay-ms", default="50:100", help="bots' sleep before each answer")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before each window")
    parser.add_argument("--window", type=float, default=30.0, help="seconds counted per phase")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="a smoke run (short windows)")
    args = parser.parse_args()
    if args.quick:
        args.workers, args.bots, args.delay_ms, args.warmup, args.window = 4, 4, "5:10", 3.0, 5.0
    result = run(args)
    print_table(result)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
