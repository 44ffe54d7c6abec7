"""Listing matches on real SQLite and real PostgreSQL: order, pages, filters, withheld results,
page tokens, and query plans that read through indexes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from arena.matchmaking import PlannedMatch
from arena.store.db import Tx
from arena.store.listings import Listings, MatchQuery
from arena.store.repository import Store, StoreError
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.test_store import active_bots, finished_record, ladder_config


def listings(store: Store) -> Listings:
    return Listings(store.db)


def every_page(store: Store, query: MatchQuery) -> list[pb.ListedMatch]:
    """Every match of a listing, page after page."""
    shown: list[pb.ListedMatch] = []
    token = ""
    for _ in range(100):
        page, token = listings(store).matches(
            MatchQuery(query.ladder, query.bot_id, query.phases, query.page_size, token)
        )
        assert len(page) <= query.page_size
        shown.extend(page)
        if not token:
            return shown
    raise AssertionError("a listing that never ends")


def expected_order(store: Store, ladder_id: str | None = None) -> list[str]:
    """Playing matches by when they were scheduled, then finished ones by when they finished,
    newest first, ties by match id: read straight from the table."""
    with store.db.transaction() as tx:
        rows = tx.all(
            "SELECT match_id, status, ladder_id, created_at_us, finished_at_us FROM matches "
            "WHERE status IN ('playing', 'finished')"
        )
    rows = [r for r in rows if ladder_id is None or r[2] == ladder_id]
    playing = sorted((r for r in rows if r[1] == "playing"), key=lambda r: (r[3], r[0]))
    done = sorted((r for r in rows if r[1] == "finished"), key=lambda r: (r[4], r[0]))
    return [r[0] for r in reversed(playing)] + [r[0] for r in reversed(done)]


def two_ladders(store: Store) -> tuple[list[str], str, str]:
    """Bots, and two ladders of them with matches waiting, being played and finished (two of
    them at the same instant, so ties are broken by match id)."""
    ids, _ = active_bots(store, 4)
    ladders = {}
    for name in ("one", "two"):
        config = ladder_config(name)
        config.max_matches_per_bot = 100  # every match here may be played at once
        ladders[name] = store.create_ladder(config)
        store.enter_active_bots(ladders[name], "oh-hell")
    one, two = ladders["one"], ladders["two"]
    order = [one, two, one, one, two, one, one, two, one, one]
    for index, ladder_id in enumerate(order):
        seats = (
            (ids[0], ids[1], ids[index % 2 + 2]) if ladder_id == one else (ids[3], ids[2], ids[1])
        )
        store.enqueue(ladder_id, "ladder", [PlannedMatch(index, seats)])
    claims = [store.claim("w", 60) for _ in range(9)]  # the last match stays waiting
    finish_at = [5_000, 5_000, 4_000, 7_000, 6_000]  # ladder one, two, one, one, two
    for claim, at in zip(claims, finish_at, strict=False):
        assert claim is not None
        record = finished_record(claim.match_id, [1, 2, 3], [30, 20, 10])
        record.finished_at_us = at
        store.record_result(record, "w")
    assert all(claims)
    return ids, one, two


def test_pages_list_playing_then_finished_matches_newest_first(store: Store) -> None:
    ids, _, _ = two_ladders(store)
    everything = expected_order(store)
    assert len(everything) == 9, "the waiting match is not listed"
    for size in (1, 2, 4, 9, 100):
        shown = every_page(store, MatchQuery(page_size=size))
        assert [m.match_id for m in shown] == everything, f"pages of {size}"
    shown = every_page(store, MatchQuery(page_size=3))
    phases = [m.phase for m in shown]
    assert phases == [pb.MATCH_PHASE_PLAYING] * 4 + [pb.MATCH_PHASE_FINISHED] * 5
    finished = [m for m in shown if m.phase == pb.MATCH_PHASE_FINISHED]
    assert [m.finished_at_us for m in finished] == [7_000, 6_000, 5_000, 5_000, 4_000]
    for match in finished:
        assert [(s.rank, s.score) for s in match.seats] == [(1, 30), (2, 20), (3, 10)]
        assert not match.withheld and match.status == 1  # COMPLETED
    for match in shown:
        assert match.kind == "ladder" and match.started_at_us > 0
        assert [s.bot_name for s in match.seats] == [
            f"bot{ids.index(s.bot_id)}" for s in match.seats
        ]
        assert {s.owner for s in match.seats} == {"alice"}
        if match.phase == pb.MATCH_PHASE_PLAYING:
            assert match.finished_at_us == 0 and all(s.rank == 0 for s in match.seats)


def test_filters_by_ladder_bot_and_phase(store: Store) -> None:
    ids, one, two = two_ladders(store)
    for key in (one, "one"):
        shown = every_page(store, MatchQuery(ladder=key, page_size=2))
        assert [m.match_id for m in shown] == expected_order(store, one)
        assert {m.ladder_id for m in shown} == {one}
    for bot_id in ids:
        for phases in (("playing",), ("finished",), ("playing", "finished")):
            shown = every_page(store, MatchQuery(bot_id=bot_id, phases=phases, page_size=2))
            wanted = [
                m.match_id
                for m in every_page(store, MatchQuery(phases=phases, page_size=100))
                if bot_id in [s.bot_id for s in m.seats]
            ]
            assert [m.match_id for m in shown] == wanted and wanted, (bot_id, phases)
    both = every_page(store, MatchQuery(ladder="two", bot_id=ids[0], page_size=5))
    assert both == [], "ids[0] plays only in ladder one"
    playing = every_page(store, MatchQuery(phases=("playing",), page_size=3))
    assert {m.phase for m in playing} == {pb.MATCH_PHASE_PLAYING} and len(playing) == 4
    done = every_page(store, MatchQuery(ladder=two, phases=("finished",), page_size=1))
    assert [m.finished_at_us for m in done] == [6_000, 5_000]


def test_a_rotation_lists_no_rank_until_its_whole_deal_has_finished(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config("dup", duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    rotations = [tuple(ids[(i + s) % 3] for i in range(3)) for s in range(3)]
    store.enqueue(ladder_id, "ladder", [PlannedMatch(7, rotation) for rotation in rotations])
    claims = [store.claim("w", 60) for _ in range(3)]
    for index, claim in enumerate(claims):
        assert claim is not None
        store.record_result(finished_record(claim.match_id, [1, 2, 3], [9, 5, 1]), "w")
        shown = every_page(store, MatchQuery(ladder="dup", phases=("finished",)))
        assert len(shown) == index + 1
        done = index == 2
        for match in shown:
            assert match.withheld is not done
            ranks = [(s.rank, s.score) for s in match.seats]
            assert ranks == ([(1, 9), (2, 5), (3, 1)] if done else [(0, 0)] * 3)


def test_a_rotation_in_play_is_withheld_while_another_rotation_of_its_deal_is_unfinished(
    store: Store,
) -> None:
    """WatchMatch refuses such a rotation's moves; the listing says so, so that pages (``/live``)
    do not link to what would be refused."""
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config("dup", duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    rotations = [tuple(ids[(i + s) % 3] for i in range(3)) for s in range(2)]
    store.enqueue(ladder_id, "ladder", [PlannedMatch(7, rotation) for rotation in rotations])
    first, second = store.claim("w", 60), store.claim("w", 60)
    assert first is not None and second is not None
    playing = every_page(store, MatchQuery(ladder="dup", phases=("playing",)))
    assert [m.withheld for m in playing] == [True, True], "each has the other unfinished"
    store.record_result(finished_record(first.match_id, [1, 2, 3], [9, 5, 1]), "w")
    (last,) = every_page(store, MatchQuery(ladder="dup", phases=("playing",)))
    assert last.match_id == second.match_id and not last.withheld, "the last may be watched"
    assert store.rotations_unfinished(second.match_id) == 0


def test_validation_matches_are_listed_with_the_house_bot(store: Store) -> None:
    bot, _ = store.register_bot("v", None, "newbie", "oh-hell", "127.0.0.1:1", "1")
    store.enqueue(None, "validation", [PlannedMatch(1, (bot.bot_id, "house:random"))])
    assert store.claim("w", 60) is not None
    (match,) = every_page(store, MatchQuery(bot_id=bot.bot_id))
    assert (match.kind, match.ladder_id) == ("validation", "")
    assert [(s.bot_id, s.bot_name, s.owner) for s in match.seats] == [
        (bot.bot_id, "newbie", "v"),
        ("house:random", "", ""),
    ]


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        "!!!!",
        "W10",  # "[]"
        "WzEsInBsYXlpbmciLDEsIm0iXQ",  # four items, not five
        "x" * 300,
    ],
)
def test_a_page_token_this_arena_did_not_give_is_refused(store: Store, token: str) -> None:
    with pytest.raises(StoreError) as refused:
        listings(store).matches(MatchQuery(page_token=token))
    assert refused.value.code == "INVALID_ARGUMENT" and "page_token" in str(refused.value)


def test_a_page_token_is_for_the_listing_it_came_from(store: Store) -> None:
    _, one, _ = two_ladders(store)
    _, token = listings(store).matches(MatchQuery(ladder=one, page_size=1))
    assert token
    with pytest.raises(StoreError, match="other filters") as refused:
        listings(store).matches(MatchQuery(ladder="two", page_size=1, page_token=token))
    assert refused.value.code == "INVALID_ARGUMENT"
    for missing in (MatchQuery(ladder="nope"), MatchQuery(bot_id="nobody")):
        with pytest.raises(StoreError) as not_found:
            listings(store).matches(missing)
        assert not_found.value.code == "NOT_FOUND"


@contextmanager
def recorded_queries(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """Every SELECT the listings run on matches or their seats, with its parameters."""
    seen: list[tuple[str, Any]] = []
    original = Tx.all

    def recording(self: Tx, sql: str, params: Any = ()) -> list[Any]:
        if "FROM matches m" in sql or "FROM match_seats s" in sql:
            seen.append((sql, tuple(params)))
        return original(self, sql, params)

    monkeypatch.setattr(Tx, "all", recording)
    yield seen


FULL_SCAN = re.compile(
    r"\b(SCAN (m|s|o)\b(?! USING)|Seq Scan on match|USE TEMP B-TREE FOR ORDER BY)"
)


def test_every_listing_query_reads_through_an_index(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However the listing is filtered, no query scans the matches or their seats (a table
    that grows with the whole history) nor sorts them all: on PostgreSQL with sequential
    scans disabled, so the plan shows whether an index can serve it at all."""
    ids, one, _ = two_ladders(store)
    with recorded_queries(monkeypatch) as seen:
        for query in (
            MatchQuery(page_size=2),
            MatchQuery(ladder=one, page_size=2),
            MatchQuery(bot_id=ids[2], page_size=2),
            MatchQuery(ladder=one, bot_id=ids[2], page_size=2),
        ):
            every_page(store, query)
    monkeypatch.undo()
    assert len(seen) > 8
    with store.db.transaction() as tx:
        postgres = tx.dialect == "postgres"
        if postgres:
            tx.execute("SET LOCAL enable_seqscan = off")
        for sql, params in seen:
            explain = "EXPLAIN " if postgres else "EXPLAIN QUERY PLAN "
            plan = "\n".join(str(row[-1]) for row in tx.all(explain + sql, params))
            assert not FULL_SCAN.search(plan), f"{sql}\n{plan}"
