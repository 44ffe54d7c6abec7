"""Tournaments run by a real ``arena serve``: real sample bot processes over their registered
endpoints, the crosstable over gRPC, the JSON API, the web pages and downloads, the command
line against the server, and a restart in the middle that resumes without playing a set
twice."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from arena.local_bots import BotProcess, start_bot, start_server, stop_bot
from arena.tournament import crosstable_from_json
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.codec.common import option_value
from referee.games.registry import ENTRIES
from tests.helpers import ROOT
from tests.web_arena import WebArena, served_web, wait_for

ADMIN = "tournament-admin-secret"
ARENA = (sys.executable, "-m", "arena")
GAME = "klaberjass"
"""A two-seat game: a round robin of three bots is three pairings."""


def settings() -> options_pb2.GameSettings:
    """The game with the registry's short options (a match of a few hands)."""
    game = options_pb2.GameSettings(game=GAME, num_seats=2)
    for name, value in ENTRIES[GAME].short_options.items():
        game.options[name].CopyFrom(option_value(value))
    return game


def served(workdir: Path) -> contextlib.AbstractContextManager[WebArena]:
    """``arena serve`` with its web UI on ``workdir``'s database (kept between runs)."""
    return served_web(workdir, ADMIN)


def thinker(think_ms: int) -> BotProcess:
    """A bot that plays the first legal move after ``think_ms``: matches that take a while."""
    command = [sys.executable, "-m", "tests.bots.misbehaving", "sleep", "--after", "0"]
    command += ["--sleep-ms", str(think_ms), "--listen", "127.0.0.1:0"]
    return start_server("thinker", command, cwd=str(ROOT))


def register(arena: WebArena, bots: list[BotProcess]) -> list[str]:
    """Register each bot under its own owner; wait until all are validated (active)."""
    ids = []
    for index, bot in enumerate(bots):
        request = pb.RegisterBotRequest(
            owner=f"owner{index}", name=f"bot{index}", game=GAME, endpoint=bot.address
        )
        ids.append(arena.client.call("RegisterBot", request).bot.bot_id)

    def all_active() -> bool:
        return all(
            arena.client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bot_id)).bot.state
            == pb.BOT_STATE_ACTIVE
            for bot_id in ids
        )

    wait_for(all_active, 120, "every bot validated")
    return ids


def config(
    name: str, entrants: list[str], sets: int, deadline_s: float = 600
) -> pb.TournamentConfig:
    return pb.TournamentConfig(
        name=name,
        settings=settings(),
        entrants=entrants,
        sets=sets,
        seed=7,
        deadline_us=time.time_ns() // 1000 + int(deadline_s * 1e6),
        move_time_ms=2000,
        time_bank_ms=10_000,
        concurrency=2,
    )


def tournament(arena: WebArena, key: str) -> pb.Tournament:
    response: pb.GetTournamentResponse = arena.client.call(
        "GetTournament", pb.GetTournamentRequest(tournament=key)
    )
    return response.tournament


def test_a_served_round_robin_is_played_and_shown_everywhere(tmp_path: Path) -> None:
    bots = [start_bot("random", seed=1), start_bot("random", seed=2)]
    bots.append(start_bot("klaberjass-heuristic", seed=3))
    try:
        with served(tmp_path) as arena:
            ids = register(arena, bots)
            refusals = {
                "no admin token": (config("t", ids, 1), grpc.StatusCode.PERMISSION_DENIED, ""),
                "sets": (config("t", ids, 5000), grpc.StatusCode.INVALID_ARGUMENT, "sets"),
                "deadline": (config("t", ids, 1, -5), grpc.StatusCode.INVALID_ARGUMENT, "deadline"),
                "name": (config("t t", ids, 1), grpc.StatusCode.INVALID_ARGUMENT, "name"),
                "twice": (
                    config("t", [ids[0], ids[0]], 1),
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "twice",
                ),
                "unknown": (config("t", [*ids, "nobody"], 1), grpc.StatusCode.NOT_FOUND, ""),
                "one": (config("t", ids[:1], 1), grpc.StatusCode.INVALID_ARGUMENT, "entrants"),
            }
            for what, (bad, code, word) in refusals.items():
                token = "not-the-admin" if what == "no admin token" else None
                with pytest.raises(grpc.RpcError) as refused:
                    arena.client.call(
                        "CreateTournament", pb.CreateTournamentRequest(config=bad), token
                    )
                assert refused.value.code() == code, what
                assert word in (refused.value.details() or ""), what
            other_game = config("t", ids, 1)
            other_game.settings.CopyFrom(options_pb2.GameSettings(game="mau-mau", num_seats=2))
            with pytest.raises(grpc.RpcError) as refused:
                arena.client.call("CreateTournament", pb.CreateTournamentRequest(config=other_game))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT

            created = arena.client.call(
                "CreateTournament", pb.CreateTournamentRequest(config=config("cup.rr", ids, 1))
            ).tournament
            assert created.state == pb.TOURNAMENT_STATE_RUNNING
            assert [bot.endpoint for bot in created.entrants] == ["", "", ""], "public view"
            done = wait_for(
                lambda: (
                    (t := tournament(arena, "cup.rr")).state == pb.TOURNAMENT_STATE_FINISHED and t
                ),
                180,
                "the round robin finished",
            )
            assert (done.sets_played, done.sets_planned, done.matches_played) == (3, 3, 6)
            labels = {f"owner{i}/bot{i}" for i in range(3)}
            assert {p.a for p in done.pairings} == labels
            # A pairing whose every seat comparison was a push (the same result with the same
            # cards: two random bots may do that) compared nothing and has no cell; the
            # heuristic bot never plays a random one to a push over two rotations.
            scores = {(p.a, p.b): p.score for p in done.pairings}
            assert 4 <= len(scores) <= 6
            assert all(scores[(b, a)] == pytest.approx(1 - s) for (a, b), s in scores.items())
            for pairing in done.pairings:
                assert 0 <= pairing.low <= pairing.score <= pairing.high <= 1
                assert not pairing.significant, "one set: no pairing is significant"
            assert [s.position for s in done.standings] == [1, 2, 3]

            listed = arena.json("/api/v1/tournaments")["tournaments"]
            assert [t["config"]["name"] for t in listed] == ["cup.rr"]
            api = arena.json(f"/api/v1/tournaments/{done.tournament_id}")["tournament"]
            assert len(api["pairings"]) == 6 and api["state"] == "TOURNAMENT_STATE_FINISHED"
            assert "/api/v1/tournaments/{tournament}" in arena.json("/api/v1/openapi.json")["paths"]

            status, page = arena.get("/tournaments")
            assert status == 200 and "/tournaments/" + done.tournament_id in page
            status, page = arena.get(f"/tournaments/{done.tournament_id}")
            assert status == 200
            assert 'class="crosstable"' in page and page.count('class="num ns"') == len(scores)
            for pairing in done.pairings:
                assert f"{pairing.score:.3f}" in page
                assert f"{pairing.low:.2f}–{pairing.high:.2f}" in page
            assert all(name in page for name in labels)
            assert f'href="/tournaments/{done.tournament_id}.csv"' in page

            status, body = arena.get(f"/tournaments/{done.tournament_id}.json")
            assert status == 200
            exported = crosstable_from_json(json.loads(body))
            assert exported.sets_played == 3 and len(exported.pairings) == 6
            status, body = arena.get("/tournaments/cup.rr.csv")
            rows = list(csv.reader(io.StringIO(body)))
            assert status == 200 and rows[0][:3] == ["a", "b", "score"] and len(rows) == 7
            assert arena.get("/tournaments/cup.rr.exe")[0] == 404
            assert arena.get("/tournaments/cup.rr")[0] == 200, "a dotted name is a page"
            assert arena.get("/tournaments/nothing")[0] == 404
            assert arena.get("/api/v1/tournaments/nothing")[0] == 404

            shown = subprocess.run(
                [*ARENA, "tournament", "show", "cup.rr", "--server", arena.service.address],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=60,
                check=False,
            )
            assert shown.returncode == 0, shown.stderr
            assert "finished" in shown.stdout and "owner0/bot0" in shown.stdout

            swiss = config("swiss", ids, 1)
            swiss.format, swiss.rounds = pb.TOURNAMENT_FORMAT_SWISS, 2
            arena.client.call("CreateTournament", pb.CreateTournamentRequest(config=swiss))
            played = wait_for(
                lambda: (
                    (t := tournament(arena, "swiss")).state == pb.TOURNAMENT_STATE_FINISHED and t
                ),
                120,
                "the Swiss tournament finished",
            )
            assert (played.sets_played, played.sets_planned) == (2, 2), "a table a round"
            tables = {
                frozenset(json.loads(rotations)[0]["seats"])
                for rotations in stored_sets(tmp_path, played.tournament_id).values()
            }
            assert len(tables) == 2, "no rematch"

            ladder = pb.LadderConfig(
                name="kl", settings=settings(), move_time_ms=2000, concurrency=1
            )
            arena.client.call("CreateLadder", pb.CreateLadderRequest(config=ladder))
            wait_for(
                lambda: (
                    len(
                        arena.client.call(
                            "GetStandings", pb.GetStandingsRequest(ladder="kl")
                        ).standings
                    )
                    == 3
                ),
                60,
                "the bots entered the ladder",
            )
            cup = pb.TournamentConfig(
                name="ladder-cup", ladder="kl", deadline_us=done.config.deadline_us
            )
            from_ladder = arena.client.call(
                "CreateTournament", pb.CreateTournamentRequest(config=cup)
            ).tournament
            assert sorted(from_ladder.config.entrants) == sorted(ids), "the ladder's active bots"
            assert from_ladder.config.settings == done.config.settings, "the ladder's game"
            assert (from_ladder.config.sets, from_ladder.config.concurrency) == (2, 4), "defaults"
    finally:
        for bot in bots:
            stop_bot(bot.process)


def stored_sets(workdir: Path, tournament_id: str = "") -> dict[tuple[int, int, int], str]:
    """The sets stored (of one tournament, or all), read from the database file."""
    with contextlib.closing(sqlite3.connect(workdir / "arena.sqlite3")) as db:
        rows = db.execute(
            "SELECT round, table_index, set_index, rotations FROM tournament_sets "
            "WHERE tournament_id = ? OR ? = ''",
            (tournament_id, tournament_id),
        ).fetchall()
    return {(r, t, i): rotations for r, t, i, rotations in rows}


def test_a_restarted_arena_resumes_its_tournament_and_plays_no_set_twice(
    tmp_path: Path,
) -> None:
    bots = [thinker(15), start_bot("random", seed=2), start_bot("random", seed=3)]
    try:
        with served(tmp_path) as arena:
            ids = register(arena, bots)
            arena.client.call(
                "CreateTournament", pb.CreateTournamentRequest(config=config("resume", ids, 4))
            )
            wait_for(lambda: tournament(arena, "resume").sets_played >= 2, 180, "two sets")
        before = stored_sets(tmp_path)
        assert 2 <= len(before) < 12, "stopped in the middle"
        with served(tmp_path) as arena:
            done = wait_for(
                lambda: (
                    (t := tournament(arena, "resume")).state == pb.TOURNAMENT_STATE_FINISHED and t
                ),
                300,
                "the resumed tournament finished",
            )
            assert (done.sets_played, done.sets_planned) == (12, 12)
            assert done.matches_played == 24
        after = stored_sets(tmp_path)
        assert len(after) == 12
        assert all(after[key] == rotations for key, rotations in before.items()), (
            "the sets played before the restart are kept as they were, not played again"
        )
    finally:
        for bot in bots:
            stop_bot(bot.process)


def test_a_tournament_past_its_deadline_stops_with_the_sets_played(tmp_path: Path) -> None:
    bots = [thinker(40), thinker(40), start_bot("random", seed=3)]
    try:
        with served(tmp_path) as arena:
            ids = register(arena, bots)
            arena.client.call(
                "CreateTournament",
                pb.CreateTournamentRequest(config=config("short", ids, 4, deadline_s=3)),
            )
            stopped = wait_for(
                lambda: (
                    (t := tournament(arena, "short")).state == pb.TOURNAMENT_STATE_STOPPED and t
                ),
                60,
                "stopped at the deadline",
            )
            assert stopped.sets_played < stopped.sets_planned == 12
            assert stopped.finished_at_us >= stopped.config.deadline_us
            assert len(stored_sets(tmp_path)) == stopped.sets_played
            status, page = arena.get(f"/tournaments/{stopped.tournament_id}")
            assert status == 200 and "stopped at its deadline" in page
    finally:
        for bot in bots:
            stop_bot(bot.process)
