"""Ladder matches finished per 10 s before, during and after a registration flood (issue 18).

A real ``arena serve`` (SQLite, ``--workers``) runs a ladder of sample random bots (Oh Hell,
3 seats, short deals); once it plays steadily, ``--flood`` bots are registered at once (each
its own owner, created by the admin, so no rate limit stops the flood before validation), all
pointing at loopback sockets that accept and never send a byte (``tests.listeners``). The
script reads the ladder's finished-match count every ``--window`` seconds and reports:

- **before**: ladder matches per window, mean over ``--before`` windows;
- **during**: mean and worst window from the flood until every flooded bot is rejected;
- **after**: mean over ``--after`` windows once the flood is over;
- **flood s**: how long validating the flood took.

``--baseline-code PATH`` runs the same measurement on the code of another checkout (e.g. a
worktree of the commit before the validation share), one after the other in one run, so before
and after come from one machine state.

    python benchmarks/registration_flood.py --json bench-results/registration_flood.json
    python benchmarks/registration_flood.py --baseline-code /tmp/before
    python benchmarks/registration_flood.py --quick
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.client import ArenaClient  # noqa: E402
from arena.local_bots import (  # noqa: E402
    BotProcess,
    arena_serve_command,
    start_many,
    start_server,
    stop_bot,
)
from cardarena.arena.v1 import arena_service_pb2 as pb  # noqa: E402
from cardarena.game.v1 import options_pb2  # noqa: E402
from tests.listeners import not_bots  # noqa: E402

ADMIN = "flood-admin"
LADDER = "flooded"


@contextmanager
def arena(code: Path, workdir: Path, workers: int) -> Iterator[BotProcess]:
    """``arena serve`` from the checkout at ``code`` on a fresh SQLite file."""
    token = workdir / "admin"
    token.write_text(ADMIN)
    command = arena_serve_command(
        token, ["--db", str(workdir / "arena.sqlite3")], workers, "--limit-peer-requests", "off"
    )
    command = ["env", f"PYTHONPATH={code}", *command]  # that checkout's arena, not this one's
    log = (workdir / "serve.log").open("a")
    process = start_server("arena", command, cwd=str(code), stderr=log.fileno())
    try:
        yield process
    finally:
        stop_bot(process.process, grace_s=15)
        log.close()


def register(client: ArenaClient, owner: str, endpoint: str) -> str:
    """A bot of a new owner (the admin creates the owner: no per-address limit applies)."""
    token = client.call("CreateOwner", pb.CreateOwnerRequest(owner=owner)).owner_token
    request = pb.RegisterBotRequest(owner=owner, name="b", game="oh-hell", endpoint=endpoint)
    return str(client.call("RegisterBot", request, token=token).bot.bot_id)


def states(client: ArenaClient, ids: list[str]) -> list[int]:
    return [
        client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bot_id)).bot.state
        for bot_id in ids
    ]


def finished(client: ArenaClient) -> int:
    request = pb.GetStandingsRequest(ladder=LADDER, limit=1)
    return int(client.call("GetStandings", request).ladder.matches_finished)


def measure(code: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One run on the code at ``code``: ladder matches per window before, during, after."""
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        service = stack.enter_context(arena(code, workdir, args.workers))
        bots = start_many(["random"] * args.bots, seed=1)
        for bot in bots:
            stack.callback(stop_bot, bot.process)
        client = ArenaClient(service.address, ADMIN, timeout_s=30)
        stack.callback(client.close)
        players = [register(client, f"player{i}", bot.address) for i, bot in enumerate(bots)]
        deadline = time.monotonic() + 120
        while set(states(client, players)) != {pb.BOT_STATE_ACTIVE}:
            if time.monotonic() > deadline:
                raise SystemExit("the sample bots were not validated in 120 s")
            time.sleep(0.5)
        settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
        settings.options["deal_style"].string_value = "short_low"
        config = pb.LadderConfig(
            name=LADDER,
            settings=settings,
            move_time_ms=2000,
            time_bank_ms=5000,
            max_faults=3,
            concurrency=args.workers,
        )
        client.call("CreateLadder", pb.CreateLadderRequest(config=config))
        time.sleep(args.window)  # warm up: the first window has matchmaking starting

        def window() -> int:
            start = finished(client)
            time.sleep(args.window)
            return finished(client) - start

        before = [window() for _ in range(args.before)]
        silent = stack.enter_context(not_bots("silent", args.flood))
        started = time.monotonic()
        flooded = [register(client, f"flood{i}", endpoint) for i, endpoint in enumerate(silent)]
        registered_s = time.monotonic() - started
        during: list[int] = []
        while True:
            during.append(window())
            if pb.BOT_STATE_VALIDATING not in states(client, flooded):
                break
            if time.monotonic() - started > args.max_flood_s:
                break
        flood_s = time.monotonic() - started
        left = sum(state == pb.BOT_STATE_VALIDATING for state in states(client, flooded))
        after = [window() for _ in range(args.after)]
    return {
        "code": str(code),
        "before": before,
        "during": during,
        "after": after,
        "before_mean": statistics.fmean(before),
        "during_mean": statistics.fmean(during),
        "during_min": min(during),
        "after_mean": statistics.fmean(after),
        "flood_s": round(flood_s, 1),
        "register_s": round(registered_s, 2),
        "still_validating": left,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flood", type=int, default=30, help="bots registered at once")
    parser.add_argument("--bots", type=int, default=6, help="sample random bots in the ladder")
    parser.add_argument("--workers", type=int, default=16, help="arena serve --workers")
    parser.add_argument("--window", type=float, default=10.0, help="seconds per window")
    parser.add_argument("--before", type=int, default=3, help="windows before the flood")
    parser.add_argument("--after", type=int, default=2, help="windows after the flood")
    parser.add_argument("--max-flood-s", type=float, default=300.0)
    parser.add_argument("--baseline-code", type=Path, default=None, help="checkout to compare")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="a smoke run (a small flood)")
    args = parser.parse_args()
    if args.quick:
        args.flood, args.bots, args.workers, args.window = 2, 3, 4, 2.0
        args.before, args.after, args.max_flood_s = 1, 1, 60.0
    runs = {"this": measure(ROOT, args)}
    if args.baseline_code is not None:
        runs["baseline"] = measure(args.baseline_code.resolve(), args)
    print(f"ladder matches finished per {args.window:g} s; flood of {args.flood} silent bots")
    print(f"{'code':<10} {'before':>7} {'during':>7} {'worst':>6} {'after':>7} {'flood s':>8}")
    for name, run in runs.items():
        print(
            f"{name:<10} {run['before_mean']:>7.1f} {run['during_mean']:>7.1f} "
            f"{run['during_min']:>6} {run['after_mean']:>7.1f} {run['flood_s']:>8.1f}"
        )
    if "baseline" in runs:
        this, base = runs["this"], runs["baseline"]
        ratio = this["during_mean"] / base["during_mean"] if base["during_mean"] else None
        print(f"during-flood ladder throughput, this / baseline: {ratio if ratio else 'inf'}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json),
            "baseline_code": str(args.baseline_code)}, "runs": runs}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
