"""The web UI's heavy pages, served and rendered: standings of 10,000 entrants, a long match.

    python benchmarks/web.py                 # 10,000 entrants, 30 requests per page
    python benchmarks/web.py --quick         # 500 entrants, 5 requests (CI smoke)

Builds a SQLite arena through the store: ``--bots`` oh-hell bots entered in one ladder with
spread-out ratings, and the longest of a few Pinochle matches (random legal play, real
records). Then runs ``arena serve --role api`` on it (no scheduling, no matches: only the
reads are timed) with its web UI, and a bare Starlette "hello" app on the same server stack
(``benchmarks/servers/web_hello.py``) as the baseline measured in the same run.

Served: the median wall time of a GET over one keep-alive connection (the whole body read).
Rendered: Chromium (``/usr/bin/chromium``, skipped without it) loading the page to its ``load``
event, and for the match page until the replay viewer has drawn the table (when
``arena.web.replay`` is installed). Each figure is given with its ratio to the hello page's.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot
from arena.matchmaking import PlannedMatch
from arena.store.db import open_database
from arena.store.repository import Store
from benchmarks.ladder import register
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import options_pb2, record_pb2
from referee.codec.record import match_record
from referee.games.registry import codec_for, make_game
from referee.match import Match
from tests.web_arena import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]


def pinochle_record(seeds: int) -> record_pb2.MatchRecord:
    """The record with the most moves among ``seeds`` random Pinochle matches (random legal
    play that never declares out, which would end most of them within a few moves)."""
    game = make_game("pinochle", 2)
    codec = codec_for(game)
    best: record_pb2.MatchRecord | None = None
    for seed in range(seeds):
        match = Match(game, seed)
        rng = random.Random(seed)
        while not match.is_over:
            legal = match.legal_actions()
            staying = [a for a in legal if match.state.describe_action(a) != "declare out"]
            choices = staying or legal
            match.play(choices[rng.randrange(len(choices))], rng.randrange(2000, 40_000))
        record = match_record(
            match,
            codec,
            match_id="",
            seats=[record_pb2.SeatAssignment(seat=s, bot_name=f"p{s}") for s in range(2)],
            started_at_us=1_700_000_000_000_000,
            finished_at_us=1_700_000_060_000_000,
            referee_version="bench",
        )
        if best is None or len(record.moves) > len(best.moves):
            best = record
    assert best is not None
    return best


def build(path: str, bots: int, seeds: int) -> tuple[str, int]:
    """The arena's database: the ladder ``bench`` of ``bots`` entrants and one long Pinochle
    match; its match id and move count."""
    store = Store(open_database(path))
    try:
        register(store, bots)
        ladder_id = store.create_ladder(
            arena_service_pb2.LadderConfig(
                name="bench",
                settings=options_pb2.GameSettings(game="oh-hell", num_seats=4),
                concurrency=1,
            )
        )
        store.enter_active_bots(ladder_id, "oh-hell")
        with store.db.transaction() as tx:  # ratings as a long-running ladder has them
            rng = random.Random(1)
            rows = tx.all("SELECT bot_id FROM entries WHERE ladder_id = ?", (ladder_id,))
            for (bot_id,) in rows:
                tx.execute(
                    "UPDATE entries SET mu = ?, sigma = ?, matches = ?, first_places = ?, "
                    "moves_played = ?, faults = ? WHERE ladder_id = ? AND bot_id = ?",
                    (
                        rng.gauss(25, 6),
                        rng.uniform(1, 8),
                        (played := rng.randrange(1, 400)),
                        rng.randrange(0, played),
                        played * 60,
                        rng.randrange(0, 20),
                        ladder_id,
                        bot_id,
                    ),
                )
        pinochle = store.create_ladder(
            arena_service_pb2.LadderConfig(
                name="pinochle",
                settings=options_pb2.GameSettings(game="pinochle", num_seats=2),
                concurrency=1,
            )
        )
        a, _ = store.register_bot("pin-a", None, "pin-a", "pinochle", "127.0.0.2:1", "1")
        b, _ = store.register_bot("pin-b", None, "pin-b", "pinochle", "127.0.0.2:2", "1")
        for bot in (a, b):
            store.set_state_by_arena(bot.bot_id, "active", "", 0)
        store.enter_active_bots(pinochle, "pinochle")
        record = pinochle_record(seeds)
        planned = PlannedMatch(seed=record.seed, seats=(a.bot_id, b.bot_id))
        assert store.enqueue(pinochle, "ladder", [planned])
        claim = store.claim("bench", 300.0)
        assert claim is not None
        record.match_id = claim.match_id
        store.record_result(record)
        return claim.match_id, len(record.moves)
    finally:
        store.db.close()


@contextmanager
def running(command: list[str]) -> Iterator[BotProcess]:
    process = start_server("server", command, cwd=str(ROOT))
    try:
        yield process
    finally:
        stop_bot(process.process, grace_s=10)


def served_ms(host: str, port: int, path: str, requests: int) -> tuple[float, int, int]:
    """Median milliseconds of a GET of ``path`` as a browser asks (gzip accepted; one
    keep-alive connection, two warm-up requests first), the status and the bytes sent."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    times = []
    status, size = 0, 0
    try:
        for index in range(requests + 2):
            started = time.perf_counter()
            connection.request("GET", path, headers={"accept-encoding": "gzip"})
            answer = connection.getresponse()
            body = answer.read()
            if index >= 2:
                times.append(1000 * (time.perf_counter() - started))
            status, size = answer.status, len(body)
    finally:
        connection.close()
    return statistics.median(times), status, size


def rendered_ms(
    page: Any, url: str, loads: int, ready: Callable[[Any], None] | None = None
) -> float:
    """Median milliseconds for Chromium to load ``url`` (and be ``ready``)."""
    times = []
    for index in range(loads + 1):
        started = time.perf_counter()
        page.goto(url, wait_until="load")
        if ready is not None:
            ready(page)
        if index:
            times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times)


def run(bots: int, requests: int, loads: int, seeds: int) -> dict[str, Any]:
    result: dict[str, Any] = {"bots": bots}
    with tempfile.TemporaryDirectory() as scratch:
        database = str(Path(scratch) / "web.sqlite3")
        started = time.perf_counter()
        match_id, moves = build(database, bots, seeds)
        result["setup_s"] = time.perf_counter() - started
        result["match_moves"] = moves
        token = Path(scratch) / "admin"
        token.write_text("bench-admin")
        serve = arena_serve_command(
            token,
            ["--db", database],
            1,
            *("--role", "api", "--web-listen", "127.0.0.1:0"),
            *("--limit-peer-requests", "off"),  # the pages are timed, not the limiter
        )
        hello = [sys.executable, "-m", "benchmarks.servers.web_hello"]
        with running(serve) as arena, running(hello) as baseline:
            assert arena.process.stdout is not None
            web = arena.process.stdout.readline().split()[1].rstrip("/")
            host, port = web.removeprefix("http://").rsplit(":", 1)
            bhost, bport = baseline.address.rsplit(":", 1)
            pages = {
                "hello (baseline)": None,
                "standings, page 1": "/ladders/bench",
                f"standings, page {bots // 100 + 1}": f"/ladders/bench?offset={bots // 2}",
                "standings, search": "/ladders/bench?q=bot99",
                "standings JSON, last page": f"/api/v1/ladders/bench/standings?offset={bots - 50}",
                f"match page ({moves} moves)": f"/matches/{match_id}",
                "match frames JSON": f"/api/v1/matches/{match_id}/frames",
            }
            served: dict[str, dict[str, Any]] = {}
            for name, path in pages.items():
                if path is None:
                    ms, status, size = served_ms(bhost, int(bport), "/", requests)
                else:
                    ms, status, size = served_ms(host, int(port), path, requests)
                served[name] = {"ms": ms, "status": status, "bytes": size}
            base = served["hello (baseline)"]["ms"]
            for figures in served.values():
                figures["ratio"] = figures["ms"] / base
            result["served"] = served
            result["rendered"] = render(web, baseline.address, pages, loads)
    return result


def render(web: str, baseline: str, pages: dict[str, str | None], loads: int) -> dict[str, Any]:
    """Chromium's load times of the HTML pages, with their ratio to the hello page's."""
    if not os.path.exists(CHROMIUM):
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    from playwright.sync_api import sync_playwright

    viewer = (ROOT / "arena" / "web" / "static" / "replay" / "viewer.js").exists()

    def drawn(page: Any) -> None:
        if viewer:
            page.wait_for_selector("#table .ca-replay", timeout=60_000)

    rendered: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        for name, path in pages.items():
            if path is not None and "/api/" in path:
                continue
            url = f"http://{baseline}/" if path is None else web + path
            ready = drawn if path is not None and path.startswith("/matches/") else None
            rendered[name] = {"ms": rendered_ms(page, url, loads, ready)}
        again = rendered_ms(page, f"http://{baseline}/", loads)  # first and last: the lower
        rendered["hello (baseline)"]["ms"] = min(rendered["hello (baseline)"]["ms"], again)
        browser.close()
    base = rendered["hello (baseline)"]["ms"]
    for figures in rendered.values():
        figures["ratio"] = figures["ms"] / base
    rendered["viewer"] = viewer
    return rendered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=8, help="Pinochle matches to pick from")
    parser.add_argument("--quick", action="store_true", help="small and short (CI smoke)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.quick:
        args.bots, args.requests, args.loads, args.seeds = 500, 5, 2, 2
    result = run(args.bots, args.requests, args.loads, args.seeds)
    print(
        f"{args.bots} entrants, a Pinochle match of {result['match_moves']} moves "
        f"(built in {result['setup_s']:.0f} s)"
    )
    print(f"{'served (median GET)':32} {'ms':>8} {'ratio':>8} {'status':>7} {'bytes':>9}")
    for name, figures in result["served"].items():
        print(
            f"{name:32} {figures['ms']:8.2f} {figures['ratio']:8.1f} {figures['status']:7} "
            f"{figures['bytes']:9}"
        )
    rendered = result["rendered"]
    if "skipped" in rendered:
        print(f"rendered: skipped ({rendered['skipped']})")
    else:
        print(f"{'rendered (Chromium, to load)':32} {'ms':>8} {'ratio':>8}")
        for name, figures in rendered.items():
            if isinstance(figures, dict):
                print(f"{name:32} {figures['ms']:8.1f} {figures['ratio']:8.1f}")
        if not rendered["viewer"]:
            print("(the replay viewer is not installed: the match page is its summary only)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
