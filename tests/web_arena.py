"""A real arena with its web UI for the web tests and scripts: ``arena serve`` as its own
process (``--web-listen`` on a free port), real sample bots, a quick oh-hell ladder playing.

Also where the browser comes from: Debian's ``chromium`` driven by Playwright (``playwright
install`` cannot download a browser here). Without it the browser tests skip with a loud
reason, except under CI (``CI=true``), where ``.ci/run`` installs it and they must run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, start_bot, start_server, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from tests.helpers import POLLING_LIMITS, ROOT

ADMIN = "web-admin-secret"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LINEUP = (
    ("ann", "oh-hell-heuristic"),
    ("bob", "random"),
    ("cy", "random"),
    ("eve", "thinker"),
)
"""Owner and bot kind of each bot entered (one owner each: they all meet). The sample bots
answer within a few milliseconds, so a match of theirs is over before a browser has loaded
its page: the thinker takes ``THINK_MS`` over each move (within the move time), so the
matches it plays last long enough to be watched live."""
THINK_MS = 120
THINKER = "eve-thinker"


def start_lineup_bot(kind: str, seed: int) -> BotProcess:
    """A bot of ``LINEUP``: a sample bot, or the thinker (the first legal move, slowly)."""
    if kind != "thinker":
        return start_bot(kind, seed=seed)
    command = [sys.executable, "-m", "tests.bots.misbehaving", "sleep", "--after", "0"]
    command += ["--sleep-ms", str(THINK_MS), "--listen", "127.0.0.1:0"]
    return start_server(kind, command, cwd=str(ROOT))


LADDER = "web-oh-hell"


@dataclass
class WebArena:
    """The running arena: its API's client, the web UI's URL, the bots entered."""

    service: BotProcess
    url: str
    client: ArenaClient
    bot_ids: dict[str, str] = field(default_factory=dict)
    """Bot name → id."""
    owner_tokens: dict[str, str] = field(default_factory=dict)
    """Owner → token (for UpdateBot: only the owner may change a bot)."""

    def get(self, path: str) -> tuple[int, str]:
        """GET ``path`` of the web UI as ``curl`` would: status and body."""
        try:
            with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=30) as answer:
                return int(answer.status), answer.read().decode()
        except urllib.error.HTTPError as error:
            return int(error.code), error.read().decode()

    def json(self, path: str) -> Any:
        """GET a JSON API path (must answer 200)."""
        status, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def live_match(self, thinker: bool = True) -> str:
        """A ladder match being played now (one the thinker plays in), or ''."""
        for match in self.json(f"/api/v1/ladders/{LADDER}/matches?phase=playing")["matches"]:
            names = {seat["bot_name"] for seat in match["seats"]}
            if THINKER in names or not thinker:
                return str(match["match_id"])
        return ""

    def all_entered(self) -> bool:
        """Whether every bot of ``LINEUP`` is in the standings."""
        standings = self.client.call("GetStandings", pb.GetStandingsRequest(ladder=LADDER))
        return len(standings.standings) == len(LINEUP)

    def finished(self) -> int:
        ladder = self.client.call("GetStandings", pb.GetStandingsRequest(ladder=LADDER)).ladder
        return int(ladder.matches_finished)


def wait_for(condition: Callable[[], Any], timeout_s: float = 90, what: str = "") -> Any:
    """Poll ``condition`` until it is truthy (its value), or fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what or condition}")


def quick_ladder() -> pb.CreateLadderRequest:
    settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
    settings.options["deal_style"].string_value = "short_low"
    return pb.CreateLadderRequest(
        config=pb.LadderConfig(
            name=LADDER,
            settings=settings,
            move_time_ms=2000,
            time_bank_ms=5000,
            max_faults=3,
            concurrency=2,
        )
    )


@contextlib.contextmanager
def served_web(workdir: Path, admin: str = ADMIN, workers: int = 4) -> Iterator[WebArena]:
    """``arena serve`` with its web UI on ``workdir``'s database (kept between runs: a second
    one restarts the first one's arena), stopped on leaving; its log in ``serve.log``."""
    token_file = workdir / "admin"
    token_file.write_text(admin)
    command = arena_serve_command(
        token_file,
        ["--db", str(workdir / "arena.sqlite3")],
        workers,
        *POLLING_LIMITS,
        "--web-listen",
        "127.0.0.1:0",
    )
    log = (workdir / "serve.log").open("a")
    service = start_server("arena", command, cwd=str(ROOT), stderr=log.fileno())
    try:
        assert service.process.stdout is not None
        line = service.process.stdout.readline()
        assert line.startswith("WEB http://"), line
        client = ArenaClient(service.address, admin, timeout_s=10)
        yield WebArena(service, line.split()[1], client)
    finally:
        stop_bot(service.process, grace_s=15)
        log.close()


@contextlib.contextmanager
def web_arena(workdir: Path, min_finished: int = 3) -> Iterator[WebArena]:
    """An arena with its web UI and ``LINEUP`` playing ``LADDER``; yields once
    ``min_finished`` matches have finished (more go on being played)."""
    bots: list[BotProcess] = []
    with served_web(workdir) as arena:
        try:
            bots = [start_lineup_bot(kind, i) for i, (_, kind) in enumerate(LINEUP)]
            client = arena.client
            for (owner, kind), bot in zip(LINEUP, bots, strict=True):
                name = f"{owner}-{kind}"
                registered = client.call(
                    "RegisterBot",
                    pb.RegisterBotRequest(
                        owner=owner, name=name, game="oh-hell", endpoint=bot.address, version="1.0"
                    ),
                )
                arena.bot_ids[name] = registered.bot.bot_id
                arena.owner_tokens[owner] = registered.owner_token
            client.call("CreateLadder", quick_ladder())
            wait_for(arena.all_entered, 180, "every bot validated and entered")
            wait_for(lambda: arena.finished() >= min_finished, 180, f"{min_finished} matches")
            yield arena
        finally:
            for bot in bots:
                stop_bot(bot.process)


def chromium_or_skip() -> str:
    """The browser's path; skips (loudly) when there is none, fails under CI."""
    problem = ""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "the playwright package is not installed (pip install -e '.[dev]')"
    if not problem and not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        problem = f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests must run under CI: {problem}")
        pytest.skip(f"BROWSER TESTS SKIPPED: {problem}")
    return CHROMIUM if os.path.exists(CHROMIUM) else str(shutil.which("chromium"))
