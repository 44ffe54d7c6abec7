"""Standings searched and paged by the store (``GetStandings.search``, the web UI's search
box): matching bots at their ladder positions, the filter's count, wildcards taken literally,
on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from arena.ratings import DISPLAY_SQL, INITIAL_MU, INITIAL_SIGMA
from arena.store.repository import Store
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import options_pb2

NAMES = ["alpha", "Beta_1", "gamma%", "ALPHA-2", "delta"]


def _ladder(store: Store) -> str:
    ladder_id = store.create_ladder(
        arena_service_pb2.LadderConfig(
            name="search",
            settings=options_pb2.GameSettings(game="oh-hell", num_seats=3),
            concurrency=1,
        )
    )
    for index, name in enumerate(NAMES):
        bot, _ = store.register_bot(
            f"owner-{index}", None, name, "oh-hell", f"127.0.0.1:{index + 1}", "1"
        )
        store.set_state_by_arena(bot.bot_id, "active", "", 0)
    store.enter_active_bots(ladder_id, "oh-hell")
    with store.db.transaction() as tx:  # distinct ratings: the ladder's order is the names'
        for index, name in enumerate(NAMES):
            tx.execute(
                "UPDATE entries SET mu = ? WHERE bot_id = (SELECT bot_id FROM bots WHERE name = ?)",
                (40.0 - index, name),
            )
    return ladder_id


def test_a_search_pages_the_matching_bots_at_their_ladder_positions(store: Store) -> None:
    ladder_id = _ladder(store)
    whole = store.standings(ladder_id)
    assert [s.bot.name for s in whole] == NAMES
    found = store.standings(ladder_id, search="alpha")
    assert [(s.position, s.bot.name) for s in found] == [(1, "alpha"), (4, "ALPHA-2")]
    assert store.count_entrants(ladder_id, "alpha") == 2
    assert [s.position for s in store.standings(ladder_id, 1, 1, "ALPHA")] == [4]
    by_owner = store.standings(ladder_id, search="OWNER-4")
    assert [s.bot.name for s in by_owner] == ["delta"]
    assert store.count_entrants(ladder_id) == len(NAMES)


def test_wildcards_in_a_search_are_literal(store: Store) -> None:
    ladder_id = _ladder(store)
    assert [s.bot.name for s in store.standings(ladder_id, search="%")] == ["gamma%"]
    assert [s.bot.name for s in store.standings(ladder_id, search="a_1")] == ["Beta_1"]
    assert store.count_entrants(ladder_id, "_") == 1
    assert store.standings(ladder_id, search="zeta") == []


def test_pages_without_a_search_follow_the_ladder(store: Store) -> None:
    ladder_id = _ladder(store)
    page = store.standings(ladder_id, 2, 2)
    assert [(s.position, s.bot.name) for s in page] == [(3, "gamma%"), (4, "ALPHA-2")]
    start = INITIAL_MU - 3 * INITIAL_SIGMA  # no rated match yet: the change since the start
    assert all(s.trend == pytest.approx(s.rating - start) for s in page)


def test_a_page_of_standings_reads_the_index_in_standings_order(store: Store) -> None:
    ladder_id = _ladder(store)
    if store.db.dialect != "sqlite":
        pytest.skip("the plan is checked on SQLite (PostgreSQL's depends on its statistics)")
    with store.db.transaction() as tx:
        plan = tx.all(
            f"EXPLAIN QUERY PLAN SELECT e.bot_id FROM entries e WHERE e.ladder_id = ? "
            f"ORDER BY {DISPLAY_SQL} DESC, e.bot_id LIMIT 50",
            (ladder_id,),
        )
    details = " ".join(str(row[-1]) for row in plan)
    assert "entries_by_rating" in details and "TEMP B-TREE" not in details, details


def test_a_trend_is_the_change_over_the_last_ten_rated_matches_of_the_ladder(
    store: Store,
) -> None:
    ladder_id = _ladder(store)
    alpha = store.standings(ladder_id, search="alpha")[0].bot.bot_id
    with store.db.transaction() as tx:
        # Rated matches 0..12 in this ladder, then two newer seats the trend must skip: one
        # unrated (mu NULL) and one in another ladder.
        seats: list[tuple[str, str, float | None]] = [
            (f"m{k}", ladder_id, 20.0 + k) for k in range(13)
        ]
        seats += [("unrated", ladder_id, None), ("elsewhere", "other-ladder", 99.0)]
        for finished, (match_id, ladder, mu) in enumerate(seats):
            tx.execute(
                "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
                "created_at_us, finished_at_us) "
                "VALUES (?, ?, ?, 'ladder', 0, '', 'finished', ?, ?)",
                (match_id, ladder, match_id, finished, finished),
            )
            tx.execute(
                "INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults, "
                "latency_sum_us, finished_at_us, mu, sigma) "
                "VALUES (?, 0, ?, 1, 0, 0, 0, 0, ?, ?, ?)",
                (match_id, alpha, finished, mu, None if mu is None else 5.0),
            )
    standings = {s.bot.bot_id: s for s in store.standings(ladder_id)}
    # Its last ten rated matches here are 3..12: the trend starts after match 2 (mu 22).
    assert standings[alpha].trend == pytest.approx(standings[alpha].rating - (22.0 - 3 * 5.0))
    start = INITIAL_MU - 3 * INITIAL_SIGMA
    others = [s for bot, s in standings.items() if bot != alpha]
    assert all(s.trend == pytest.approx(s.rating - start) for s in others)
    searched = store.standings(ladder_id, search="alpha")[0]
    assert searched.trend == pytest.approx(standings[alpha].trend)
