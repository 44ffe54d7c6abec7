"""Tournament matches are first-class for spectators and for a bot's limit of matches at once,
through a real ``arena serve`` (SQLite) playing real bot processes over gRPC: ListMatches and
``arena live`` list them while played, with their tournament; WatchMatch streams the public
moves of a set's last rotation and refuses the others while their deal is unfinished, and so
does the web page (its live table over HTTP, ``/live``, the tournament's page and the match's);
a bot's cap holds across its ladder matches and its tournament matches together."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc

from arena.client import ArenaClient
from arena.local_bots import start_bot, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import ROOT
from tests.test_tournament_service import config, register, served, settings, thinker
from tests.web_arena import WebArena, wait_for

ARENA = (sys.executable, "-m", "arena")


def playing_rows(workdir: Path) -> list[tuple[str, str, str]]:
    """(match id, kind, seats) of every match being played, read from the database file."""
    with contextlib.closing(sqlite3.connect(workdir / "arena.sqlite3")) as db:
        return db.execute(
            "SELECT match_id, kind, seats FROM matches WHERE status = 'playing'"
        ).fetchall()


def live_tournament_matches(arena: WebArena, tournament_id: str) -> list[pb.ListedMatch]:
    request = pb.ListMatchesRequest(phase=pb.MATCH_PHASE_PLAYING, page_size=100)
    response: pb.ListMatchesResponse = arena.client.call("ListMatches", request)
    return [m for m in response.matches if m.tournament_id == tournament_id]


def watched(client: ArenaClient, match_id: str) -> list[pb.WatchMatchResponse] | grpc.RpcError:
    try:
        return list(client.watch(match_id))
    except grpc.RpcError as error:
        return error


def finished(arena: WebArena) -> pb.Tournament | None:
    """Tournament "live" once it has finished."""
    request = pb.GetTournamentRequest(tournament="live")
    shown: pb.Tournament = arena.client.call("GetTournament", request).tournament
    return shown if shown.state == pb.TOURNAMENT_STATE_FINISHED else None


def live_cli(arena: WebArena) -> str:
    """What ``arena live`` prints."""
    return subprocess.run(
        [*ARENA, "live", "--server", arena.service.address],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ROOT),
    ).stdout


def is_last_rotation(match_id: str) -> bool:
    """Whether the match is its set's second (last) rotation: ids end ``.ROTATION-ATTEMPT``."""
    return match_id.rsplit("-", 1)[0].endswith(".1")


def live_table(arena: WebArena, match_id: str) -> tuple[int, list[dict[str, Any]]]:
    """``/api/v1/matches/{id}/live`` as a browser reads it: the status and the messages of
    its event stream (a refusal: its JSON body)."""
    status, body = arena.get(f"/api/v1/matches/{match_id}/live")
    if status != 200:
        return status, [json.loads(body)]
    lines = body.splitlines()
    return status, [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def linked_matches(arena: WebArena, path: str) -> set[str]:
    """The matches page ``path`` links to."""
    status, page = arena.get(path)
    assert status == 200, (path, page[:300])
    return set(re.findall(r'href="/matches/([^"]+)"', page))


def web_pages(arena: WebArena, match_id: str, tournament_id: str) -> dict[str, Any]:
    """What the web shows of a tournament match in play: is it linked from ``/live`` and from
    its tournament's page (with no other rotation than a last one), and its own page."""
    live, own = (
        linked_matches(arena, "/live"),
        linked_matches(arena, f"/tournaments/{tournament_id}"),
    )
    status, page = arena.get(f"/matches/{match_id}")
    return {"live": live, "own": own, "status": status, "page": page}


def test_tournament_matches_are_listed_and_watched_live_as_a_stranger_sees_them(
    tmp_path: Path,
) -> None:
    bots = [thinker(80), start_bot("random", seed=2)]  # two first-move bots would never bid
    try:
        with served(tmp_path) as arena:
            ids = register(arena, bots)
            created = arena.client.call(
                "CreateTournament", pb.CreateTournamentRequest(config=config("live", ids, 4))
            ).tournament
            stranger = ArenaClient(arena.service.address, timeout_s=30)
            listed = wait_for(
                lambda: live_tournament_matches(arena, created.tournament_id), 60, "one listed"
            )[0]
            assert listed.kind == "tournament" and not listed.ladder_id
            assert sorted(seat.bot_id for seat in listed.seats) == sorted(ids)
            assert all(seat.owner and seat.bot_name for seat in listed.seats)
            with ThreadPoolExecutor(8) as pool:  # each match watched once, from when first seen
                shown = pool.submit(live_cli, arena)  # `arena live` while one is played
                watches: dict[str, Future[list[pb.WatchMatchResponse] | grpc.RpcError]] = {}
                tables: dict[str, Future[tuple[int, list[dict[str, Any]]]]] = {}
                seen_on_web: dict[str, Future[dict[str, Any]]] = {}
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and not finished(arena):
                    for match in live_tournament_matches(arena, created.tournament_id):
                        if match.match_id not in watches:
                            watches[match.match_id] = pool.submit(watched, stranger, match.match_id)
                            tables[match.match_id] = pool.submit(live_table, arena, match.match_id)
                            seen_on_web[match.match_id] = pool.submit(
                                web_pages, arena, match.match_id, created.tournament_id
                            )
                    time.sleep(0.02)
                outcomes = {match_id: watch.result() for match_id, watch in watches.items()}
                served_tables = {match_id: table.result() for match_id, table in tables.items()}
                on_web = {match_id: shown.result() for match_id, shown in seen_on_web.items()}
                assert "tournament live" in shown.result(), shown.result()
            check_the_web(outcomes, served_tables, on_web)
            streams = [e for e in outcomes.values() if not isinstance(e, grpc.RpcError) and e]
            for match_id, outcome in outcomes.items():
                if not isinstance(outcome, grpc.RpcError):  # its deal's other rotation is over
                    assert is_last_rotation(match_id) or not outcome, "shown while withheld"
                elif outcome.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    assert not is_last_rotation(match_id), outcome.details()
                    assert "withheld" in (outcome.details() or "")
                else:  # over by the time the watch came: no record to show
                    assert outcome.code() == grpc.StatusCode.NOT_FOUND, outcome
            refused = [
                e
                for e in outcomes.values()
                if isinstance(e, grpc.RpcError) and e.code() == grpc.StatusCode.FAILED_PRECONDITION
            ]
            assert refused, "the first rotation of a set is withheld while it is played"
            assert streams, "the last rotation of a set was watched live"
            for events in streams:
                assert all(event.HasField("move") for event in events), (
                    "moves only: a tournament match keeps no record to show"
                )
                indexes = [event.move.index for event in events]
                assert indexes == list(range(len(indexes))), "every public move, in order"
            done = wait_for(lambda: finished(arena), 180, "the tournament finished")
            assert done.sets_played == 4
            assert live_tournament_matches(arena, created.tournament_id) == []
            assert playing_rows(tmp_path) == [], "no tournament match is left in the queue"
    finally:
        for bot in bots:
            stop_bot(bot.process)


def check_the_web(
    outcomes: dict[str, list[pb.WatchMatchResponse] | grpc.RpcError],
    tables: dict[str, tuple[int, list[dict[str, Any]]]],
    on_web: dict[str, dict[str, Any]],
) -> None:
    """The web serves a tournament match's live table as WatchMatch streams it: a last
    rotation's frames, one per public move, and an end; an earlier rotation refused (409),
    never linked, its page saying why with no table."""
    framed = []
    for match_id, (status, messages) in tables.items():
        watch = outcomes[match_id]
        if not is_last_rotation(match_id):
            assert status in (404, 409), (match_id, status, messages)  # 404: over meanwhile
            if status == 409:
                assert "withheld" in messages[0]["error"], messages
            continue
        if status != 200 or isinstance(watch, grpc.RpcError):  # over before one was asked
            assert status in (200, 404), (match_id, status, messages)
            continue
        assert messages[0]["type"] == "document" and messages[-1]["type"] == "end", messages
        frames = [m["frame"] for m in messages if m["type"] == "frame"]
        assert len(frames) == len(watch), "a frame per public move WatchMatch sent"
        assert "tournament" in messages[-1]["reason"]
        framed.append(match_id)
    assert framed, "a last rotation's live table was served over HTTP while it was played"
    for where in ("live", "own"):  # /live, the tournament's page
        linked = set().union(*(shown[where] for shown in on_web.values())) & set(on_web)
        assert linked and all(is_last_rotation(m) for m in linked), (where, linked)
    for match_id, shown in on_web.items():
        if shown["status"] == 404:  # over by the time its page was asked for
            continue
        assert shown["status"] == 200, shown["page"][:300]
        if is_last_rotation(match_id):
            assert 'data-live="true"' in shown["page"], "its page holds its live table"
            assert "(tournament)" in shown["page"]
        else:
            assert "withheld" in shown["page"] and 'id="table"' not in shown["page"]


def capped_ladder(arena: WebArena, ids: list[str], concurrency: int) -> None:
    """Ladder "capped" of the registered bots, each at most one match at once, playing up to
    ``concurrency`` matches at once; returns once every bot entered it."""
    ladder = pb.LadderConfig(
        name="capped",
        settings=settings(),
        move_time_ms=2000,
        concurrency=concurrency,
        max_matches_per_bot=1,
    )
    arena.client.call("CreateLadder", pb.CreateLadderRequest(config=ladder))

    def entered() -> bool:
        listed = arena.client.call("ListLadders", pb.ListLaddersRequest()).ladders
        return any(one.bots == len(ids) for one in listed)

    wait_for(entered, 60, "the ladder's bots entered")


def cup_of_the_ladder(arena: WebArena, sets: int, deadline_s: float = 600) -> None:
    """Tournament "cup" of ladder "capped"'s bots, up to four matches at once."""
    cup = config("cup", [], sets, deadline_s)
    cup.ladder = "capped"
    cup.concurrency = 4
    arena.client.call("CreateTournament", pb.CreateTournamentRequest(config=cup))


def sampled_while(
    workdir: Path, going_on: Callable[[Counter[str]], bool]
) -> tuple[int, Counter[str]]:
    """Sample the matches being played while ``going_on(kinds seen so far)``: the most
    matches any bot was in at once, and how often each kind was seen."""
    kinds: Counter[str] = Counter()
    most = 0
    while going_on(kinds):
        rows = playing_rows(workdir)
        per_bot = Counter(bot for _, _, seats in rows for bot in seats.split(","))
        most = max(most, *per_bot.values(), 0)
        kinds.update(kind for _, kind, _ in rows)
        time.sleep(0.02)
    return most, kinds


def cup_state(arena: WebArena) -> pb.Tournament:
    request = pb.GetTournamentRequest(tournament="cup")
    shown: pb.Tournament = arena.client.call("GetTournament", request).tournament
    return shown


def test_a_bots_cap_holds_across_its_ladder_and_its_tournament(tmp_path: Path) -> None:
    """A ladder capping each bot at one match at once, and a tournament of that ladder's
    bots: sampled while both play, no bot is ever in two matches, and each kind is seen. The
    ladder plays one match at a time, so two of the four bots are free for the tournament."""
    bots = [thinker(20), *(start_bot("random", seed=seed) for seed in (2, 3, 4))]
    try:
        with served(tmp_path) as arena:
            capped_ladder(arena, register(arena, bots), concurrency=1)
            cup_of_the_ladder(arena, sets=2)
            deadline = time.monotonic() + 60
            most, kinds = sampled_while(
                tmp_path,
                lambda k: time.monotonic() < deadline and (len(k) < 2 or sum(k.values()) < 200),
            )
            assert most == 1, "a bot capped at one match played two at once"
            assert kinds["ladder"] and kinds["tournament"], kinds
    finally:
        for bot in bots:
            stop_bot(bot.process)


def test_a_ladder_keeping_every_bot_busy_does_not_starve_the_tournament(tmp_path: Path) -> None:
    """The same, with a ladder free to keep all four bots at their cap of one match (its
    concurrency above the two matches four bots can play): a rotation waiting for its bots
    reserves their slots, so the ladder gives them no new match and the tournament finishes
    its sets well before its deadline, while no bot is ever sampled in two matches at once."""
    bots = [thinker(20), *(start_bot("random", seed=seed) for seed in (2, 3, 4))]
    try:
        with served(tmp_path) as arena:
            capped_ladder(arena, register(arena, bots), concurrency=8)
            wait_for(lambda: len(playing_rows(tmp_path)) == 2, 60, "every bot busy in the ladder")
            cup_of_the_ladder(arena, sets=1, deadline_s=90)
            most, kinds = sampled_while(
                tmp_path, lambda _: cup_state(arena).state == pb.TOURNAMENT_STATE_RUNNING
            )
            done = cup_state(arena)
            assert done.state == pb.TOURNAMENT_STATE_FINISHED, "starved until its deadline"
            assert done.sets_played == 6, "a set for each of the round robin's six pairings"
            assert most == 1, "a bot capped at one match played two at once"
            assert kinds["ladder"] and kinds["tournament"], kinds
    finally:
        for bot in bots:
            stop_bot(bot.process)
