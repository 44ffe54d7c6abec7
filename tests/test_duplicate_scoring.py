"""Duplicate scoring: small sets with the seat comparisons, matchpoints and ratings expected."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from arena.duplicate_scoring import (
    Rotation,
    first_places,
    less_luck,
    margin,
    matchpoints,
    seat_comparisons,
)
from arena.ratings import DAY_US, INITIAL_SIGMA, Rating, after_idle, rate, rate_duplicate


def rot(seats: str, ranks: tuple[int, ...], scores: tuple[float, ...]) -> Rotation:
    return Rotation(tuple(seats), ranks, scores)


CASES = [
    (
        "two seats, seat 0's cards win whoever holds them; a makes more of both seats",
        [rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (400, 350))],
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        {"a": 2.0, "b": 0.0},
    ),
    (
        "two seats: b wins seat 0 by more, so it also loses seat 1 by less",
        [rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (550, 200))],
        [{"a": 2, "b": 1}, {"b": 1, "a": 2}],
        {"a": 0.0, "b": 2.0},
    ),
    (
        "two seats: a wins from the bad seat too, b only from the good one",
        [rot("ab", (1, 2), (500, 300)), rot("ba", (2, 1), (300, 320))],
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        {"a": 2.0, "b": 0.0},
    ),
    (
        "a rank beats any margin: a first by little in seat 0 beats b second by much",
        # seat 0: a (1st, +5.5), b (2nd, +54.5); seat 1: b (2nd, +4), c (1st, +56);
        # seat 2: c (3rd, -9.5), a (3rd, -110.5); the third rotation was voided
        [rot("abc", (1, 2, 3), (10, 9, 0)), rot("bca", (2, 1, 3), (10, 11, -100))],
        [{"a": 1, "b": 2}, {"b": 2, "c": 1}, {"c": 1, "a": 2}],
        {"a": 1.0, "b": 0.0, "c": 2.0},
    ),
    (
        "the same result in every seat: pushes, nothing compared",
        [rot("ab", (1, 2), (10, 0)), rot("ba", (1, 2), (10, 0))],
        [],
        {},
    ),
    (
        "three seats: two bots tie in seat 0, the third differs, so seat 0 still compares",
        [
            rot("abc", (1, 2, 3), (30, 20, 10)),
            rot("bca", (1, 2, 3), (30, 20, 10)),
            rot("cab", (2, 1, 3), (20, 30, 10)),
        ],
        # seat 0: a, b (1st, +15), c (2nd, 0); seat 1: b, c (2nd, 0), a (1st, +15);
        # seat 2: every bot 3rd with -15: a push
        [{"a": 1, "b": 1, "c": 3}, {"b": 2, "c": 2, "a": 1}],
        {"a": 3.5, "b": 2.0, "c": 0.5},
    ),
    (
        "three seats, three rotations: each seat ranks the three bots that held it",
        [
            rot("abc", (1, 2, 3), (30, 20, 10)),
            rot("bca", (1, 3, 2), (25, 5, 15)),
            rot("cab", (2, 1, 3), (20, 30, 0)),
        ],
        # seat 0: a (1, +15) b (1, +15) c (2, +5); seat 1: b (2, 0) c (3, -15) a (1, +20);
        # seat 2: c (3, -15) a (2, 0) b (3, -25)
        [{"a": 1, "b": 1, "c": 3}, {"b": 2, "c": 3, "a": 1}, {"c": 2, "a": 1, "b": 3}],
        {"a": 5.5, "b": 2.5, "c": 1.0},
    ),
    (
        "a voided rotation: the seats it leaves with one bot compare nothing",
        [rot("ab", (1, 2), (500, 300))],
        [],
        {},
    ),
]


@pytest.mark.parametrize(("rotations", "comparisons", "points"), [c[1:] for c in CASES])
def test_seat_comparisons_and_matchpoints(
    rotations: list[Rotation], comparisons: list[dict[str, int]], points: dict[str, float]
) -> None:
    assert seat_comparisons(rotations) == comparisons
    assert matchpoints(rotations) == points


def test_margin_is_the_score_against_the_mean_of_the_other_seats() -> None:
    rotation = rot("abcd", (1, 2, 3, 4), (40, 20, 10, 0))
    expected = [30.0, 20 - 50 / 3, -10.0, -70 / 3]
    assert [margin(rotation, seat) for seat in range(4)] == pytest.approx(expected)


def test_where_a_lower_score_wins_the_margin_counts_the_other_way() -> None:
    # Mau-Mau's tallies: two bots both second in seat 0, a with the lower tally did better
    tallies = [
        Rotation(tuple("abcd"), (2, 3, 1, 4), (300.0, 500.0, 100.0, 700.0), True),
        Rotation(tuple("bcda"), (2, 3, 1, 4), (400.0, 500.0, 100.0, 700.0), True),
    ]
    assert margin(tallies[0], 0) == pytest.approx(-(300 - 1300 / 3))
    assert seat_comparisons(tallies)[0] == {"a": 1, "b": 2}


def test_margins_less_luck_credit_what_the_bots_made_of_their_cards() -> None:
    # Both second in each seat; b's lower tallies came from lucky draws (luck −150 in
    # tally points): less their luck, a's tallies are the lower ones in both seats.
    tallies = [
        Rotation(tuple("abcd"), (2, 3, 1, 4), (300.0, 350.0, 100.0, 700.0), True),
        Rotation(tuple("bcda"), (2, 3, 1, 4), (250.0, 500.0, 100.0, 700.0), True),
    ]
    luck = [(0.0, -150.0, 0.0, 0.0), (-150.0, 0.0, 0.0, 0.0)]
    assert seat_comparisons(tallies)[:2] == [{"a": 2, "b": 1}, {"b": 1, "c": 2}]
    fair = [less_luck(rotation, lucky) for rotation, lucky in zip(tallies, luck, strict=True)]
    assert fair[0].scores == (300.0, 500.0, 100.0, 700.0) and fair[0].lower_score_wins
    assert seat_comparisons(fair)[0] == {"a": 1, "b": 2}
    start = dict.fromkeys("abcd", Rating())
    assert rate_duplicate(start, fair)["a"].mu > rate_duplicate(start, fair)["b"].mu
    assert rate_duplicate(start, tallies)["a"].mu < rate_duplicate(start, tallies)["b"].mu


def test_first_places_count_the_matches_of_the_set() -> None:
    rotations = [rot("abc", (1, 1, 3), (5, 5, 0)), rot("bca", (1, 2, 3), (9, 1, 0))]
    assert first_places(rotations) == {"a": 1, "b": 2, "c": 0}


def test_bad_rotations_are_refused() -> None:
    with pytest.raises(ValueError, match="2\\+ seats"):
        rot("ab", (1,), (1, 2))
    with pytest.raises(ValueError, match="different seat counts"):
        seat_comparisons([rot("ab", (1, 2), (1, 0)), rot("abc", (1, 2, 3), (2, 1, 0))])


def test_a_deal_that_favours_a_seat_moves_no_rating_when_both_bots_play_it_alike() -> None:
    start = {"a": Rating(), "b": Rating()}
    lucky = [rot("ab", (1, 2), (500, 300)), rot("ba", (1, 2), (500, 300))]
    assert rate_duplicate(start, lucky) == start
    plain = rate(start, {"a": 1, "b": 2})  # one plain match of that deal credits a's luck
    assert plain["a"].mu > plain["b"].mu


def test_the_bot_that_makes_more_of_the_same_cards_gains() -> None:
    start = {"a": Rating(), "b": Rating(), "c": Rating()}
    rotations = CASES[5][1]
    assert isinstance(rotations, list)
    after = rate_duplicate(start, rotations)
    assert after["a"].mu > after["b"].mu > after["c"].mu


def test_sigma_floor_holds() -> None:
    ratings = {"a": Rating(25, 1.0), "b": Rating(25, 1.0)}
    after = rate(ratings, {"a": 1, "b": 2}, min_sigma=1.5)
    assert after["a"].sigma == after["b"].sigma == 1.5


def test_a_model_without_tau_lets_sigma_shrink_where_the_ladders_floors_it() -> None:
    """``model`` (benchmarks/fairness.py ``--tau``): openskill's τ, added to σ at every event,
    keeps the ladder's σ up under alternating results; with τ = 0 it keeps shrinking, in plain
    and duplicate rating alike."""
    no_tau = PlackettLuce(tau=0)
    ladder = still = {"a": Rating(), "b": Rating()}
    for i in range(1000):
        ranks = {"a": 1 + i % 2, "b": 2 - i % 2}
        ladder, still = rate(ladder, ranks), rate(still, ranks, model=no_tau)
    assert still["a"].sigma < 0.7 * ladder["a"].sigma  # 0.86 against 1.46
    start = {"a": Rating(), "b": Rating(), "c": Rating()}
    rotations = CASES[5][1]
    assert isinstance(rotations, list)
    forgetting = rate_duplicate(start, rotations)
    remembering = rate_duplicate(start, rotations, model=no_tau)
    assert all(remembering[bot].sigma < forgetting[bot].sigma for bot in start)


def test_idle_bots_get_uncertainty_back_up_to_the_initial_sigma() -> None:
    settled = Rating(30.0, 1.0)
    assert after_idle(settled, 0, 0.5) == settled
    assert after_idle(settled, DAY_US, 0.0) == settled
    week = after_idle(settled, 7 * DAY_US, 0.5)
    assert week.mu == 30.0
    assert week.sigma == pytest.approx((1.0 + 7 * 0.25) ** 0.5)
    assert after_idle(settled, 10_000 * DAY_US, 0.5).sigma == INITIAL_SIGMA
