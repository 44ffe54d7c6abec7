"""Idle σ growth shows at read time: standings and the profile give σ (and μ − 3σ) as of the
store's clock, by the rule the next rated set applies (``arena.ratings.rating_as_of``)."""

from __future__ import annotations

import pytest

from arena.matchmaking import PlannedMatch
from arena.ratings import DAY_US, INITIAL_SIGMA, Rating, after_idle, idle_since, rating_as_of
from arena.store.repository import Store
from tests.test_store import active_bots, finished_record, ladder_config


def test_the_shown_rating_is_the_stored_one_grown_by_the_idle_time() -> None:
    settled = Rating(30.0, 2.0)
    assert idle_since(0, 10 * DAY_US) == 0, "never rated: at its prior, nothing grows"
    assert idle_since(5 * DAY_US, DAY_US) == 0, "a clock behind the last play: no growth"
    assert rating_as_of(settled, DAY_US, DAY_US, 1.0) == settled
    assert rating_as_of(settled, DAY_US, 5 * DAY_US, 1.0) == after_idle(settled, 4 * DAY_US, 1.0)
    assert rating_as_of(settled, DAY_US, 5 * DAY_US, 1.0).sigma == pytest.approx(8**0.5)
    assert rating_as_of(settled, 1, 10_000 * DAY_US, 1.0).sigma == INITIAL_SIGMA, "capped"
    assert rating_as_of(settled, DAY_US, 9 * DAY_US, 0.0) == settled, "a ladder without growth"


def test_standings_and_profile_show_sigma_as_of_the_injected_clock(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    config = ladder_config("growing")
    config.sigma_growth_per_day = 1.0
    ladder_id = store.create_ladder(config)
    still = store.create_ladder(ladder_config("still"))
    for ladder in (ladder_id, still):
        store.enter_active_bots(ladder, "oh-hell")
        store.enqueue(ladder, "ladder", [PlannedMatch(7, tuple(ids))])
        claim = store.claim("w", 60)
        assert claim is not None
        assert store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]))
    with store.db.transaction() as tx:  # settled at σ 2, rated at day 100 of an imagined clock
        tx.execute("UPDATE entries SET sigma = 2.0, rated_us = ?", (100 * DAY_US,))
        tx.execute("UPDATE entries SET rated_us = 0 WHERE bot_id = ?", (ids[2],))

    def shown(ladder: str, day: float) -> dict[str, tuple[float, float, int]]:
        store.clock = lambda: int(day * DAY_US)
        return {s.bot.bot_id: (s.sigma, s.rating, s.rated_at_us) for s in store.standings(ladder)}

    at_play = shown(ladder_id, 100)
    assert at_play[ids[0]][0] == 2.0
    week = shown(ladder_id, 107)
    assert week[ids[0]][0] == pytest.approx((4 + 7) ** 0.5), "σ² + days · growth²"
    first = {s.bot.bot_id: s for s in store.standings(ladder_id)}[ids[0]]
    assert first.rating == pytest.approx(first.mu - 3 * 11**0.5), "μ − 3σ of the grown σ"
    assert week[ids[0]][2] == 100 * DAY_US
    assert week[ids[2]][0] == 2.0, "never rated (rated_us 0): nothing to grow from"
    assert shown(ladder_id, 107) == week, "deterministic under a given clock"
    assert shown(still, 107)[ids[0]][0] == 2.0, "a ladder without growth shows σ as stored"
    with store.db.transaction() as tx:
        stored = tx.one(
            "SELECT sigma FROM entries WHERE ladder_id = ? AND bot_id = ?", (ladder_id, ids[0])
        )
    assert stored[0] == 2.0, "reading changes nothing stored"

    store.clock = lambda: 107 * DAY_US
    figures = {v.ladder_id: v for v in store.profile(ids[0], 5).versions if v.current}
    assert figures[ladder_id].sigma == pytest.approx(11**0.5)
    assert figures[ladder_id].rating == pytest.approx(figures[ladder_id].mu - 3 * 11**0.5)
    assert figures[still].sigma == 2.0
