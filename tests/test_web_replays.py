"""Every game's replay in a real browser against a real ``arena serve``: one ladder per game
played by real sample-bot processes, then each game's latest finished match opened at
``/matches/{id}`` and stepped to its end; the final scores shown are the record's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, start_bot, start_server, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.codec.common import option_value
from referee.games.api import OptionValue
from referee.games.registry import GAMES
from tests.helpers import POLLING_LIMITS, ROOT
from tests.test_replay_browser import STEP_TO_END, displayed_totals
from tests.web_arena import CHROMIUM_ARGS, chromium_or_skip, wait_for

ADMIN = "replays-admin-secret"
OWNERS = ("ann", "bob", "cy", "dee")
"""One owner per bot: matchmaking never seats two bots of one owner."""


def ladder_request(
    game: str, seats: int, options: Mapping[str, OptionValue]
) -> pb.CreateLadderRequest:
    """A ladder of ``game`` with its short options, quick to finish."""
    settings = options_pb2.GameSettings(game=game, num_seats=seats)
    for name, value in options.items():
        settings.options[name].CopyFrom(option_value(value))
    config = pb.LadderConfig(
        name=f"replay-{game}",
        settings=settings,
        move_time_ms=2000,
        time_bank_ms=5000,
        concurrency=2,
    )
    return pb.CreateLadderRequest(config=config)


@contextlib.contextmanager
def arena_with_every_game(workdir: Path) -> Iterator[tuple[str, ArenaClient]]:
    """``arena serve`` with its web UI and a ladder per game, random bots entered in each."""
    token_file = workdir / "admin"
    token_file.write_text(ADMIN)
    command = arena_serve_command(
        token_file,
        ["--db", str(workdir / "arena.sqlite3")],
        8,
        *POLLING_LIMITS,
        "--web-listen",
        "127.0.0.1:0",
    )
    log = (workdir / "serve.log").open("a")
    service = start_server("arena", command, cwd=str(ROOT), stderr=log.fileno())
    bots: list[BotProcess] = []
    try:
        assert service.process.stdout is not None
        line = service.process.stdout.readline()
        assert line.startswith("WEB http://"), line
        client = ArenaClient(service.address, ADMIN, timeout_s=10)
        owners: dict[str, ArenaClient] = {}
        for entry in GAMES:
            for owner in OWNERS[: entry.demo_seats]:
                bot = start_bot("random", seed=len(bots))
                bots.append(bot)
                request = pb.RegisterBotRequest(
                    owner=owner,
                    name=f"{owner}-{entry.name}",
                    game=entry.name,
                    endpoint=bot.address,
                    version="1",
                )
                registered = owners.get(owner, client).call("RegisterBot", request)
                if registered.owner_token:  # a new owner: its later bots need its token
                    owners[owner] = ArenaClient(
                        service.address, registered.owner_token, timeout_s=10
                    )
            client.call(
                "CreateLadder", ladder_request(entry.name, entry.demo_seats, entry.short_options)
            )
        yield line.split()[1], client
        for opened in [client, *owners.values()]:
            opened.close()
    finally:
        for bot in bots:
            stop_bot(bot.process)
        stop_bot(service.process)
        log.close()


def finished_match(client: ArenaClient, game: str) -> str:
    """The id of a finished match of ``game``'s ladder, or ''."""
    request = pb.ListMatchesRequest(ladder=f"replay-{game}", phase=pb.MATCH_PHASE_FINISHED)
    matches = client.call("ListMatches", request).matches
    return matches[0].match_id if matches else ""


def test_every_games_replay_steps_to_the_recorded_scores_on_a_real_arena(
    tmp_path: Path,
) -> None:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with arena_with_every_game(tmp_path) as (url, client), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for entry in GAMES:
                match_id = wait_for(
                    partial(finished_match, client, entry.name), 240, f"a finished {entry.name}"
                )
                record = client.call(
                    "GetMatchRecord", pb.GetMatchRecordRequest(match_id=match_id)
                ).record
                page: Any = browser.new_page(viewport={"width": 1440, "height": 900})
                errors: list[str] = []
                page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
                page.goto(f"{url}matches/{match_id}")
                page.wait_for_selector(".ca-replay[data-ready=true]", timeout=60_000)
                total = len(record.moves) + 1  # the deal, then one position per move
                assert page.locator(".ca-replay").get_attribute("data-count") == str(total)
                page.evaluate(STEP_TO_END)
                assert page.locator(".ca-replay").get_attribute("data-at-end") == "true"
                assert displayed_totals(page) == list(record.outcome.scores), entry.name
                assert not errors, (entry.name, errors)
                page.close()
        finally:
            browser.close()
