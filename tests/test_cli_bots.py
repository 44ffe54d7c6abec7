"""The bot commands against a real ``arena serve`` with real bots: ``arena matches --bot``,
``arena bot`` (the profile), ``arena pause|resume|retire``, ``arena update-bot``, ``arena
bot-key``, each naming
the bot by ``OWNER/NAME``; and tables that keep a 64-character name whole (wrapped, never cut)."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

from rich.console import Console

from arena.cli_bots import sparkline
from arena.cli_service import standings_table
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import ROOT, random_bots
from tests.test_ladder_e2e import ADMIN, arena_service, quick_ladder, wait_active, wait_for

LONG = "a-bot-with-a-name-as-long-as-the-arena-allows-0123456789-abcdefg"
assert len(LONG) == 64


def cli(address: str, *args: str, token: str = ADMIN) -> tuple[int, str]:
    """Run ``arena ARGS --server ADDRESS``; exit code and output."""
    done = subprocess.run(
        [sys.executable, "-m", "arena", *args, "--server", address, "--token", token],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    return done.returncode, done.stdout + done.stderr


def finished(address: str, bot: str) -> list[str]:
    """The match ids ``arena matches --bot BOT --finished`` lists."""
    code, out = cli(address, "matches", "quick", "--bot", bot, "--finished")
    assert code == 0, out
    return [word for word in out.split() if len(word) == 32 and word.isalnum()]


def test_the_bot_commands_by_owner_and_name(tmp_path: Path) -> None:
    with random_bots(3, seed=11) as bots, arena_service(tmp_path) as service:
        client = service.client(ADMIN)
        tokens, ids = {}, {}
        for index, bot in enumerate(bots):
            name = LONG if index == 0 else f"r{index}"
            response = client.call(
                "RegisterBot",
                pb.RegisterBotRequest(
                    owner=f"own{index}",
                    name=name,
                    game="oh-hell",
                    endpoint=bot.address,
                    version="1",
                ),
            )
            ids[index], tokens[index] = response.bot.bot_id, response.owner_token
        wait_active(client, list(ids.values()))
        client.call("CreateLadder", quick_ladder("quick"))
        long_ref, other_ref = f"own0/{LONG}", "own1/r1"
        mine = wait_for(partial(finished, service.address, long_ref), 120, "rated matches")

        # The name means the same bot as its id to the server's filter.
        by_id = pb.ListMatchesRequest(ladder="quick", bot_id=ids[0], page_size=100)
        listed = client.call("ListMatches", by_id).matches
        assert set(mine) <= {match.match_id for match in listed}
        assert all(ids[0] in {seat.bot_id for seat in match.seats} for match in listed)

        # The profile: head lines, rating history with a trend, recent matches, by name.
        code, out = cli(service.address, "bot", long_ref, token=tokens[0])
        assert code == 0, out
        assert ids[0] in out and "state: active" in out and "endpoint:" in out
        assert "rating history" in out and "recent matches" in out, out
        assert mine[0] in out

        # The name is whole in the standings at 80 columns: wrapped, never cut.
        code, out = cli(service.address, "standings", "quick")
        assert code == 0 and "…" not in out, out
        column = "".join(
            line.split("│")[2].strip() for line in out.splitlines() if line.count("│") > 3
        )
        assert LONG in column, out

        # Pause and resume with the owner's token; another owner's token is refused.
        code, out = cli(service.address, "pause", other_ref, token=tokens[0])
        assert code == 2 and "PERMISSION_DENIED" in out, out
        code, out = cli(service.address, "pause", other_ref, token=tokens[1])
        assert code == 0 and "paused" in out, out
        assert client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=ids[1])).bot.state == (
            pb.BOT_STATE_PAUSED
        )
        code, out = cli(service.address, "resume", other_ref, token=tokens[1])
        assert code == 0 and "active" in out, out

        code, out = cli(service.address, "pause", other_ref, "--reason", "x", token=tokens[1])
        assert code == 1 and "--as-admin" in out, out

        # The operator pauses with a reason the owner sees.
        code, out = cli(service.address, "pause", "own2/r2", "--as-admin", "--reason", "checks")
        assert code == 0 and "paused" in out, out

        # A new version is validated again; update-bot without a change is a one-line error.
        code, out = cli(service.address, "update-bot", other_ref, "--version", "2", token=tokens[1])
        assert code == 0 and "version 2" in out, out
        code, out = cli(service.address, "update-bot", other_ref, token=tokens[1])
        assert code == 1, out
        assert out.strip() == "error: give --endpoint, --transport, --version or a mix"

        # Dialling out: the bot gets its own key, printed once; revoked, it is a one-liner.
        code, out = cli(service.address, "bot-key", "create", other_ref, token=tokens[1])
        assert code == 2 and "FAILED_PRECONDITION" in out and "outbound" in out, out
        move = ("update-bot", other_ref, "--transport", "outbound")
        code, out = cli(service.address, *move, token=tokens[1])
        assert code == 0 and "validating" in out and "endpoint" not in out, out
        code, out = cli(service.address, "bot-key", "create", other_ref, token=tokens[1])
        assert code == 0 and "cab_" in out, out
        code, out = cli(service.address, "bot-key", "revoke", other_ref, token=tokens[1])
        assert code == 0 and "key revoked" in out, out

        code, out = cli(service.address, "retire", long_ref, token=tokens[0])
        assert code == 0 and "retired" in out, out
        code, out = cli(service.address, "bot", "own0/nobody")
        assert code == 2 and "NOT_FOUND" in out, out


def test_a_sparkline_runs_from_the_lowest_to_the_highest_block() -> None:
    assert sparkline([1.0, 2.0, 3.0]) == "▁▅█"
    assert sparkline([5.0, 5.0]) == "▁▁"
    assert sparkline([]) == ""


def test_standings_head_first_places_the_same_in_duplicate_ladders() -> None:
    """A duplicate ladder counts a first place per match (each rotation), as a plain one does."""

    def header(duplicate: bool) -> str:
        config = pb.LadderConfig(name="l", duplicate_deals=duplicate)
        response = pb.GetStandingsResponse(ladder=pb.Ladder(config=config))
        console = Console(record=True, width=200)
        console.print(standings_table(response))
        return console.export_text()

    assert "firsts" in header(True) and "firsts" in header(False)
    assert "first sets" not in header(True)
