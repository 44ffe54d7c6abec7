"""Duplicate deals reveal nothing early, through the public API of a real ``arena serve``: while
any rotation of a deal is unfinished, no other rotation's record, live moves, rank or score can
be read; once the whole set has finished, everything can."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections import defaultdict
from pathlib import Path

import grpc

from arena.client import ArenaClient
from cardarena.arena.v1 import arena_service_pb2 as pb
from referee.replay import resimulate
from tests.helpers import random_bots
from tests.test_ladder_e2e import ADMIN, arena_service, quick_ladder, register_all, wait_active

Deals = dict[tuple[str, int], dict[str, str]]


def deals(db: Path) -> Deals:
    """Every duplicate deal of the ladder: (set, seed) -> {match id: status}."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT set_id, seed, match_id, status FROM matches WHERE kind = 'ladder'"
        ).fetchall()
    found: Deals = defaultdict(dict)
    for set_id, seed, match_id, status in rows:
        found[(set_id, seed)][match_id] = status
    return found


def deal_of(db: Path, match_id: str) -> dict[str, str]:
    return next((d for d in deals(db).values() if match_id in d), {})


def others_unfinished(db: Path, match_id: str) -> bool:
    """Whether another rotation of the match's deal is unfinished now (read after an API call:
    rotations only ever finish, so it was unfinished during the call too)."""
    return any(s != "finished" for m, s in deal_of(db, match_id).items() if m != match_id)


def refused(call: object) -> grpc.RpcError | None:
    try:
        if callable(call):
            result = call()
            if hasattr(result, "__iter__") and not hasattr(result, "ListFields"):
                list(result)
    except grpc.RpcError as error:
        return error
    return None


def test_no_rotation_is_readable_until_its_whole_deal_has_finished(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service, random_bots(3, seed=41) as bots:
        client = ArenaClient(service.address, timeout_s=10)
        ids = register_all(client, bots)
        wait_active(client, ids)
        client.call("CreateLadder", quick_ladder("dup", duplicate=True), token=ADMIN)
        checked: set[str] = set()
        deadline = time.monotonic() + 180
        while checked != {"record", "watch-finished", "watch-live", "profile"}:
            assert time.monotonic() < deadline, f"only saw {checked} while rotations ran"
            for rotations in deals(service.db).values():
                if all(s == "finished" for s in rotations.values()):
                    continue
                for match_id, status in rotations.items():
                    if status == "finished":
                        error = refused(
                            lambda m=match_id: client.call(
                                "GetMatchRecord", pb.GetMatchRecordRequest(match_id=m)
                            )
                        )
                        if others_unfinished(service.db, match_id):
                            assert error is not None, "a rotation's record leaked"
                            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
                            assert "withheld" in (error.details() or "")
                            checked.add("record")
                        error = refused(lambda m=match_id: client.watch(m))
                        if others_unfinished(service.db, match_id):
                            assert error is not None, "a rotation's record leaked to a watcher"
                            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
                            checked.add("watch-finished")
                        request = pb.GetBotProfileRequest(bot_id=ids[0], recent_matches=500)
                        profile = client.call("GetBotProfile", request)
                        if others_unfinished(service.db, match_id):
                            (summary,) = [
                                s for s in profile.recent_matches if s.match_id == match_id
                            ]
                            assert summary.withheld and (summary.rank, summary.score) == (0, 0)
                            checked.add("profile")
                    elif status == "playing":
                        error = refused(lambda m=match_id: client.watch(m))
                        if others_unfinished(service.db, match_id):
                            assert error is not None, "a rotation's live moves leaked"
                            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
                            assert "withheld" in (error.details() or "")
                            checked.add("watch-live")
            time.sleep(0.05)

        def complete() -> list[dict[str, str]]:
            return [
                d
                for d in deals(service.db).values()
                if len(d) == 3 and all(s == "finished" for s in d.values())
            ]

        while not complete():
            assert time.monotonic() < deadline, "no duplicate set finished"
            time.sleep(0.2)
        rotations = complete()[0]
        records = [
            client.call("GetMatchRecord", pb.GetMatchRecordRequest(match_id=m)).record
            for m in rotations
        ]
        assert len({r.seed for r in records}) == 1, "one deal, every rotation"
        assert all(resimulate(r) == [] for r in records)
        events = list(client.watch(next(iter(rotations))))
        assert [e.WhichOneof("event") for e in events] == ["finished"]
        profile = client.call(
            "GetBotProfile", pb.GetBotProfileRequest(bot_id=ids[0], recent_matches=500)
        )
        shown = [s for s in profile.recent_matches if s.match_id in rotations]
        assert len(shown) == 3 and not any(s.withheld for s in shown)
        assert sorted(s.rank for s in shown) == sorted(
            r.outcome.ranks[s.seat] for s in shown for r in records if r.match_id == s.match_id
        )
