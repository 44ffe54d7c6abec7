"""The delay a relayed watch adds (issue 19): a spectator on the process that does not play a
match, next to one on the process that does.

Two ``arena serve`` processes (``--worker-id alpha`` and ``beta``) on a scratch PostgreSQL
database play one ladder (Oh Hell, 3 seats, short deals) of three trivial bots that answer
after ``--delay-ms`` (``benchmarks/servers/bot.py``). For each of ``--matches`` matches caught
as they start, this process opens two watchers of it at once: one on the process playing it
(local), one on the other (relayed through the playing process's API). Each move event is
timestamped as this process receives it (one monotonic clock); a move counts once every
watcher had its first events (the backlog each gets at connection is left out), and the
streams must carry the same events. A third watcher, a second one on the playing process, is
the control: how much two watchers of the same stream differ in this process's receipt times.

- **added ms**: relayed receipt − local receipt, per move; median and p95 over every move.
- **control ms**: second local receipt − first local receipt, the same way: the noise floor.
- **pace ms**: the baseline, in the same run: the local watcher's median time between two
  move events (how fast the match goes); **ratio** = added median ÷ pace.

    python benchmarks/watch_relay.py --json bench-results/watch_relay.json
    python benchmarks/watch_relay.py --quick
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from arena.client import ArenaClient  # noqa: E402
from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot  # noqa: E402
from arena.store.db import scratch_postgres_database  # noqa: E402
from cardarena.arena.v1 import arena_service_pb2 as pb  # noqa: E402
from cardarena.game.v1 import options_pb2  # noqa: E402

ADMIN = "relay-admin"
LADDER = "relayed"
WORKERS = ("alpha", "beta")
POSTGRES = os.environ.get("ARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@contextmanager
def process(command: list[str], name: str, log: Path) -> Iterator[BotProcess]:
    with log.open("a") as out:
        started = start_server(name, command, cwd=str(ROOT), stderr=out.fileno())
        try:
            yield started
        finally:
            stop_bot(started.process, grace_s=15)


def bot_command(delay_ms: int, seed: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks.servers.bot",
        "--delay-ms",
        str(delay_ms),
        "--seed",
        str(seed),
    ]


def live_match(url: str, seen: set[str], timeout_s: float = 60) -> tuple[str, str]:
    """A ladder match being played that was not measured yet, the newest, and its worker."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(url, autocommit=True) as connection:
        while time.monotonic() < deadline:
            rows = connection.execute(
                "SELECT match_id, claimed_by FROM matches WHERE status = 'playing' "
                "AND kind = 'ladder' ORDER BY created_at_us DESC"
            ).fetchall()
            for match_id, worker in rows:
                if match_id not in seen and worker in WORKERS:
                    return match_id, worker
            time.sleep(0.01)
    raise SystemExit(f"no new live match within {timeout_s} s")


class Watcher(threading.Thread):
    """Follows one match, timestamping every move event as it arrives."""

    def __init__(self, address: str, match_id: str) -> None:
        super().__init__(daemon=True)
        self.client = ArenaClient(address, timeout_s=30)
        self.match_id = match_id
        self.events: list[pb.WatchMatchResponse] = []
        self.received: dict[int, float] = {}
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            for event in self.client.watch(self.match_id):
                now = time.perf_counter()
                self.events.append(event)
                if event.HasField("move"):
                    self.received[event.move.index] = now
        except Exception as error:  # reported by the caller
            self.error = error
        finally:
            self.client.close()


def measure_match(addresses: dict[str, str], match_id: str, holder: str) -> dict[str, Any]:
    """Watch one match through both processes at once, and a second time through the one
    playing it (the control: what two local watchers differ by); the delay of each live move."""
    other = next(name for name in WORKERS if name != holder)
    local, control = Watcher(addresses[holder], match_id), Watcher(addresses[holder], match_id)
    relayed = Watcher(addresses[other], match_id)
    watchers = (local, relayed, control)
    for watcher in watchers:
        watcher.start()
    for watcher in watchers:
        watcher.join(600)
        if watcher.error is not None:
            raise SystemExit(f"watching {match_id}: {watcher.error}")
    if not local.events == relayed.events == control.events:
        raise SystemExit(f"match {match_id}: the relayed stream differs from the local one")
    both = sorted(set(local.received) & set(relayed.received) & set(control.received))
    if not both:
        return {"match_id": match_id, "holder": holder, "added_ms": [], "pace_ms": []}
    connected = max(w.received[both[0]] for w in watchers)
    live = [i for i in both if min(w.received[i] for w in watchers) > connected]
    added = [(relayed.received[i] - local.received[i]) * 1000 for i in live]
    noise = [(control.received[i] - local.received[i]) * 1000 for i in live]
    pace = [(local.received[b] - local.received[a]) * 1000 for a, b in itertools.pairwise(live)]
    return {
        "match_id": match_id,
        "holder": holder,
        "added_ms": added,
        "control_ms": noise,
        "pace_ms": pace,
    }


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url = stack.enter_context(scratch_postgres_database(args.postgres, "cardarena_relay"))
        token = workdir / "admin"
        token.write_text(ADMIN)
        bots = [
            stack.enter_context(
                process(bot_command(args.delay_ms, i), f"bot{i}", workdir / "bots.log")
            )
            for i in range(3)
        ]
        arenas = {}
        for name in WORKERS:
            command = arena_serve_command(
                token, ["--database-url", url], 4, "--worker-id", name,
                "--limit-peer-requests", "off",
            )  # fmt: skip
            arenas[name] = stack.enter_context(process(command, name, workdir / f"{name}.log"))
        addresses = {name: arena.address for name, arena in arenas.items()}
        admin = ArenaClient(addresses["alpha"], ADMIN, timeout_s=30)
        stack.callback(admin.close)
        ids = []
        for index, bot in enumerate(bots):
            request = pb.RegisterBotRequest(
                owner=f"owner{index}", name="b", game="oh-hell", endpoint=bot.address
            )
            ids.append(admin.call("RegisterBot", request).bot.bot_id)
        deadline = time.monotonic() + 120
        while any(
            admin.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=i)).bot.state
            != pb.BOT_STATE_ACTIVE
            for i in ids
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the bots were not validated within 120 s")
            time.sleep(0.2)
        settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
        settings.options["deal_style"].string_value = "short_low"
        config = pb.LadderConfig(
            name=LADDER, settings=settings, move_time_ms=2000, time_bank_ms=10_000, concurrency=2
        )
        admin.call("CreateLadder", pb.CreateLadderRequest(config=config))
        seen: set[str] = set()
        matches: list[dict[str, Any]] = []
        while len(matches) < args.matches:
            match_id, holder = live_match(url, seen)
            seen.add(match_id)
            measured = measure_match(addresses, match_id, holder)
            if measured["added_ms"]:
                matches.append(measured)
    added = [value for match in matches for value in match["added_ms"]]
    control = [value for match in matches for value in match["control_ms"]]
    pace = [value for match in matches for value in match["pace_ms"]]
    median_added = statistics.median(added)
    pace_median = statistics.median(pace) if pace else 0.0
    return {
        "matches": len(matches),
        "moves": len(added),
        "by_holder": {name: sum(m["holder"] == name for m in matches) for name in WORKERS},
        "added_ms_median": round(median_added, 3),
        "added_ms_p95": round(percentile(added, 0.95), 3),
        "added_ms_max": round(max(added), 3),
        "control_ms_median": round(statistics.median(control), 3),
        "control_ms_p95": round(percentile(control, 0.95), 3),
        "pace_ms_median": round(pace_median, 3),
        "ratio": round(median_added / pace_median, 4) if pace_median else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=12, help="matches measured")
    parser.add_argument("--delay-ms", type=int, default=20, help="the bots' time per answer")
    parser.add_argument("--postgres", default=POSTGRES, help="server URL for the scratch database")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="a smoke run (2 matches)")
    args = parser.parse_args()
    if args.quick:
        args.matches = 2
    figures = run(args)
    print(
        f"relayed watch vs local, {figures['matches']} matches, {figures['moves']} moves "
        f"(bots answer after {args.delay_ms} ms)"
    )
    print(
        f"added delay: median {figures['added_ms_median']:.2f} ms, p95 "
        f"{figures['added_ms_p95']:.2f} ms, max {figures['added_ms_max']:.2f} ms"
    )
    print(
        f"control (a second local watcher): median {figures['control_ms_median']:.2f} ms, p95 "
        f"{figures['control_ms_p95']:.2f} ms"
    )
    print(
        f"baseline: one move event every {figures['pace_ms_median']:.1f} ms (local watcher); "
        f"added median / pace = {figures['ratio']}"
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)},
            "figures": figures}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
