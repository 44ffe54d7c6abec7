"""The arena service as a real process: register → validate → ladder → standings, a crash and
restart that loses nothing, the health sweep, live watching, and every API error path."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, free_port, start_server, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.replay import resimulate
from tests.helpers import POLLING_LIMITS, ROOT, misbehaving_bot, random_bots

ADMIN = "admin-secret"


@dataclass
class Service:
    process: BotProcess
    db: Path

    @property
    def address(self) -> str:
        return self.process.address

    def client(self, token: str | None = None) -> ArenaClient:
        return ArenaClient(self.address, token, timeout_s=10)


@contextlib.contextmanager
def arena_service(tmp_path: Path, *extra: str) -> Iterator[Service]:
    token_file = tmp_path / "admin"
    token_file.write_text(ADMIN)
    db = tmp_path / "arena.sqlite3"
    command = arena_serve_command(token_file, ["--db", str(db)], 4, *POLLING_LIMITS, *extra)
    log = (tmp_path / "serve.log").open("a")
    process = start_server("arena", command, cwd=str(ROOT), stderr=log.fileno())
    try:
        yield Service(process, db)
    finally:
        stop_bot(process.process, grace_s=15)
        log.close()


def wait_for(condition: Callable[[], Any], timeout_s: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what or condition}")


def quick_ladder(name: str, duplicate: bool = False) -> pb.CreateLadderRequest:
    settings = options_pb2.GameSettings(game="oh-hell", num_seats=3)
    settings.options["deal_style"].string_value = "short_low"
    return pb.CreateLadderRequest(
        config=pb.LadderConfig(
            name=name,
            settings=settings,
            move_time_ms=2000,
            time_bank_ms=5000,
            max_faults=3,
            concurrency=2,
            duplicate_deals=duplicate,
        )
    )


def register_all(client: ArenaClient, bots: list[BotProcess], owner: str = "ann") -> list[str]:
    """Each bot under an owner of its own (``ann0``, ``ann1``, …): one owner's bots never
    meet in a match."""
    ids = []
    for index, bot in enumerate(bots):
        response = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(
                owner=f"{owner}{index}",
                name=f"r{index}",
                game="oh-hell",
                endpoint=bot.address,
                version="1",
            ),
        )
        ids.append(response.bot.bot_id)
    return ids


def bot_state(client: ArenaClient, bot_id: str) -> int:
    return int(client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bot_id)).bot.state)


def wait_active(client: ArenaClient, ids: list[str]) -> None:
    for bot_id in ids:
        wait_for(partial(is_active, client, bot_id), what=f"{bot_id} validated")


def is_active(client: ArenaClient, bot_id: str) -> bool:
    return bot_state(client, bot_id) == pb.BOT_STATE_ACTIVE


def finished(client: ArenaClient, ladder: str) -> int:
    return int(
        client.call("GetStandings", pb.GetStandingsRequest(ladder=ladder)).ladder.matches_finished
    )


def test_register_validate_ladder_standings_and_watch(tmp_path: Path) -> None:
    with (
        arena_service(tmp_path) as service,
        random_bots(3, seed=5) as bots,
        misbehaving_bot("illegal", "--after", "3") as bad,
    ):
        client = service.client(ADMIN)
        ids = register_all(client, bots)
        bad_id = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(
                owner="mallory", name="cheat", game="oh-hell", endpoint=bad.address
            ),
        ).bot.bot_id
        wait_active(client, ids)
        wait_for(lambda: bot_state(client, bad_id) == pb.BOT_STATE_REJECTED, what="rejected")
        reason = client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bad_id)).bot
        assert "illegal_action" in reason.state_detail, reason.state_detail

        client.call("CreateLadder", quick_ladder("quick"))
        live_match = wait_for(lambda: playing_match(service.db), what="a live match")
        events = list(client.watch(live_match))
        assert events[-1].HasField("finished")
        moves = [e.move for e in events if e.HasField("move")]
        assert moves and all(m.description for m in moves)

        wait_for(lambda: finished(client, "quick") >= 6, timeout_s=120, what="6 matches")
        response = client.call("GetStandings", pb.GetStandingsRequest(ladder="quick"))
        assert {s.bot.bot_id for s in response.standings} == set(ids), "rejected bot not entered"
        assert all(s.matches > 0 for s in response.standings)
        ratings = [s.rating for s in response.standings]
        assert ratings == sorted(ratings, reverse=True)
        assert response.total == len(ids)
        page = client.call(
            "GetStandings", pb.GetStandingsRequest(ladder="quick", limit=1, offset=1)
        )
        assert [s.position for s in page.standings] == [2] and page.total == len(ids)
        assert page.standings[0].bot.bot_id == response.standings[1].bot.bot_id
        profile = client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=ids[0]))
        assert profile.rating_history and profile.recent_matches and profile.latency_p50_ms > 0
        match_id = profile.recent_matches[0].match_id
        record = client.call("GetMatchRecord", pb.GetMatchRecordRequest(match_id=match_id)).record
        assert resimulate(record) == []
        seats_seen = {s.seat for s in profile.recent_matches}
        assert len(seats_seen) > 1, "seats rotate between matches"


def playing_match(db: Path) -> str | None:
    """A ladder match that has started and not finished (read straight from the store)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row = connection.execute(
            "SELECT match_id FROM matches WHERE status = 'playing' AND kind = 'ladder'"
        ).fetchone()
    return row[0] if row else None


def ladder_invariants(db: Path) -> dict[str, Any]:
    """What must hold in the store whatever happened: each result counted exactly once."""
    with contextlib.closing(sqlite3.connect(db)) as c:
        finished_matches = c.execute(
            "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
        ).fetchone()[0]
        records = c.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        assert records == finished_matches, "a record per finished match, no more, no less"
        per_bot = dict(
            c.execute(
                "SELECT s.bot_id, COUNT(*) FROM match_seats s JOIN matches m ON "
                "m.match_id = s.match_id WHERE m.kind = 'ladder' AND m.result_status IN (1, 2) "
                "GROUP BY s.bot_id"
            ).fetchall()
        )
        entries = dict(c.execute("SELECT bot_id, matches FROM entries").fetchall())
        for bot_id, matches in entries.items():
            assert matches == per_bot.get(bot_id, 0), f"{bot_id}: rated {matches} times"
        history = dict(
            c.execute(
                "SELECT bot_id, COUNT(*) FROM match_seats WHERE mu IS NOT NULL GROUP BY bot_id"
            ).fetchall()
        )
        for bot_id, matches in entries.items():  # sets of one match: a rating point each
            assert history.get(bot_id, 0) == matches, f"{bot_id}: {history.get(bot_id)} points"
        snapshot = dict(c.execute("SELECT match_id, record FROM records").fetchall())
    return {"finished": finished_matches, "records": snapshot}


def test_sigkill_mid_ladder_then_restart_loses_nothing_and_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    with random_bots(3, seed=9) as bots:
        with arena_service(tmp_path) as service:
            client = service.client(ADMIN)
            ids = register_all(client, bots)
            wait_active(client, ids)
            client.call("CreateLadder", quick_ladder("crashy"))
            wait_for(lambda: finished(client, "crashy") >= 3, timeout_s=120)
            wait_for(lambda: playing_match(service.db), what="a match in flight")
            service.process.process.send_signal(signal.SIGKILL)
            service.process.process.wait()
        before = ladder_invariants(service.db)
        with contextlib.closing(sqlite3.connect(service.db)) as c:
            in_flight = c.execute(
                "SELECT COUNT(*) FROM matches WHERE status = 'playing'"
            ).fetchone()[0]
        assert in_flight >= 1, "the kill left matches in flight"
        with arena_service(tmp_path) as restarted:
            client = restarted.client(ADMIN)
            wait_for(lambda: finished(client, "crashy") >= before["finished"] + 3, timeout_s=120)
        after = ladder_invariants(restarted.db)
        for match_id, record in before["records"].items():
            assert after["records"][match_id] == record, "recorded results are never rewritten"


def test_health_sweep_pulls_an_unreachable_bot_and_restores_it(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "sample_bots", "random", "--listen", f"127.0.0.1:{port}"]
    with (
        arena_service(tmp_path, "--health-interval-s", "0.5") as service,
        random_bots(3, seed=2) as others,
    ):
        client = service.client(ADMIN)
        flaky = start_server("flaky", command)
        try:
            ids = register_all(client, [flaky, *others])
            wait_for(lambda: bot_state(client, ids[0]) == pb.BOT_STATE_ACTIVE)
            stop_bot(flaky.process)
            wait_for(lambda: bot_state(client, ids[0]) == pb.BOT_STATE_UNHEALTHY, what="pulled")
            flaky = start_server("flaky", command)
            wait_for(lambda: bot_state(client, ids[0]) == pb.BOT_STATE_ACTIVE, what="restored")
        finally:
            stop_bot(flaky.process)


def test_every_api_error_path_answers_a_clear_status(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service, random_bots(1) as bots:
        anonymous, admin = service.client(), service.client(ADMIN)
        good = pb.RegisterBotRequest(
            owner="bob", name="b", game="oh-hell", endpoint=bots[0].address
        )
        first = anonymous.call("RegisterBot", good)
        token = first.owner_token
        cases: list[tuple[str, Any, str | None, grpc.StatusCode, str]] = [
            (
                "RegisterBot",
                pb.RegisterBotRequest(owner="", name="b", game="oh-hell", endpoint="h:1"),
                None,
                grpc.StatusCode.INVALID_ARGUMENT,
                "owner",
            ),
            (
                "RegisterBot",
                pb.RegisterBotRequest(owner="x", name="b", game="chess", endpoint="h:1"),
                None,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown game",
            ),
            (
                "RegisterBot",
                pb.RegisterBotRequest(owner="x", name="b", game="oh-hell", endpoint="nowhere"),
                None,
                grpc.StatusCode.INVALID_ARGUMENT,
                "host:port",
            ),
            ("RegisterBot", good, None, grpc.StatusCode.PERMISSION_DENIED, "token"),
            ("RegisterBot", good, token, grpc.StatusCode.ALREADY_EXISTS, "already"),
            (
                "UpdateBot",
                pb.UpdateBotRequest(bot_id=first.bot.bot_id, version="2"),
                "nope",
                grpc.StatusCode.PERMISSION_DENIED,
                "token",
            ),
            (
                "UpdateBot",
                pb.UpdateBotRequest(bot_id="missing"),
                token,
                grpc.StatusCode.NOT_FOUND,
                "missing",
            ),
            (
                "SetBotState",
                pb.SetBotStateRequest(bot_id=first.bot.bot_id, state=pb.BOT_STATE_REJECTED),
                token,
                grpc.StatusCode.INVALID_ARGUMENT,
                "PAUSED",
            ),
            ("CreateLadder", quick_ladder("x"), None, grpc.StatusCode.PERMISSION_DENIED, "admin"),
            (
                "CreateLadder",
                pb.CreateLadderRequest(
                    config=pb.LadderConfig(
                        name="y",
                        settings=options_pb2.GameSettings(game="oh-hell", num_seats=9),
                        move_time_ms=100,
                    )
                ),
                ADMIN,
                grpc.StatusCode.INVALID_ARGUMENT,
                "seats",
            ),
            (
                "CreateLadder",
                pb.CreateLadderRequest(
                    config=pb.LadderConfig(
                        name="z",
                        settings=options_pb2.GameSettings(game="oh-hell", num_seats=3),
                        move_time_ms=0,
                    )
                ),
                ADMIN,
                grpc.StatusCode.INVALID_ARGUMENT,
                "move_time_ms",
            ),
            (
                "GetStandings",
                pb.GetStandingsRequest(ladder="none"),
                None,
                grpc.StatusCode.NOT_FOUND,
                "none",
            ),
            (
                "GetBotProfile",
                pb.GetBotProfileRequest(bot_id="none"),
                None,
                grpc.StatusCode.NOT_FOUND,
                "none",
            ),
            (
                "GetMatchRecord",
                pb.GetMatchRecordRequest(match_id="none"),
                None,
                grpc.StatusCode.NOT_FOUND,
                "none",
            ),
        ]
        for method, request, as_token, code, words in cases:
            with pytest.raises(grpc.RpcError) as error:
                anonymous.call(method, request, token=as_token)
            assert error.value.code() == code, (method, error.value)
            assert words in (error.value.details() or ""), (method, error.value.details())
        bad_option = quick_ladder("w")
        bad_option.config.settings.options["scoring"].string_value = "sideways"
        with pytest.raises(grpc.RpcError) as error:
            admin.call("CreateLadder", bad_option)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "scoring" in (error.value.details() or "")
        for field, value, words in [
            ("min_sigma", 9.0, "min_sigma must be between 0 and"),
            ("min_sigma", float("nan"), "min_sigma"),
            ("sigma_growth_per_day", -1.0, "sigma_growth_per_day"),
            ("new_version_rating", 7, "new_version_rating: unknown value 7"),
        ]:
            bad_rating = quick_ladder("v")
            setattr(bad_rating.config, field, value)
            with pytest.raises(grpc.RpcError) as error:
                admin.call("CreateLadder", bad_rating)
            assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert words in (error.value.details() or ""), error.value.details()
        ladders = admin.call("ListLadders", pb.ListLaddersRequest()).ladders
        assert list(ladders) == [], "rejected requests leave nothing behind"


def test_sigterm_stops_gracefully_and_gives_in_flight_matches_back(tmp_path: Path) -> None:
    with random_bots(3, seed=31) as bots, arena_service(tmp_path, "--shutdown-grace-s", "5") as s:
        client = s.client(ADMIN)
        wait_active(client, register_all(client, bots))
        client.call("CreateLadder", quick_ladder("graceful"))
        wait_for(lambda: playing_match(s.db), what="a match in flight")
        s.process.process.send_signal(signal.SIGTERM)
        # wait(30) only bounds a hang; that the grace cut the match short, rather than the
        # process waiting for it to end, is what the log's "given back" line shows.
        assert s.process.process.wait(30) == 0
    log = (tmp_path / "serve.log").read_text()
    assert "given back to the queue" in log, log[-2000:]
    with contextlib.closing(sqlite3.connect(s.db)) as c:
        assert c.execute("SELECT COUNT(*) FROM matches WHERE status = 'playing'").fetchone()[0] == 0
        assert ladder_invariants(s.db)["finished"] >= 0
