"""Mau-Mau's luck (``referee.games.mau_mau.luck``): the draws noted on hand-built positions,
the luck of a draw against its pool, and that the correction averages zero over many deals."""

from __future__ import annotations

import random
import statistics

import pytest

from referee.games.cards import StandardDeck
from referee.games.mau_mau import (
    DRAW,
    LUCK_FEATURES,
    ChanceDraw,
    MauMauPosition,
    MauMauState,
    discard_action,
    draw_luck_features,
    draws_from,
    luck_of,
    match_draws,
    match_luck,
    playable_after_card,
    seat_luck_features,
)
from referee.games.registry import ENTRIES, make_game

C = StandardDeck.parse
RANK = {name: LUCK_FEATURES.index(f"draw {name}") for name in "23456789TJQKA"}
PLAYABLE, SUIT_HELD = LUCK_FEATURES.index("draw playable"), LUCK_FEATURES.index("draw suit held")


def cards(text: str) -> tuple[int, ...]:
    return tuple(C(name) for name in text.split())


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def position(hands: tuple[str, ...], pile: str, stock: str) -> MauMauPosition:
    """Seat 0 to act, clockwise, on ``pile`` (oldest first), ``stock`` drawn from its end."""
    return MauMauPosition(
        hands=tuple(cards(h) for h in hands), pile=cards(pile), to_act=0, stock=cards(stock)
    )


# -- what is noted ----------------------------------------------------------------------------

NOTED = [
    (
        "a stuck seat draws the stock's last card, from the whole stock",
        position(("2H 3D", "KH 4H"), "KS", "4C 9S JC"),
        [DRAW],
        [ChanceDraw(0, cards("JC"), cards("4C 9S JC"), hand=mask("2H 3D"))],
    ),
    (
        "an 8 makes the next seat draw 3 from the stock's end",
        position(("8S 2C 3C", "KH 4H"), "KS", "2D 3H 4S 5D 6D"),
        [discard_action(C("8S"))],
        [ChanceDraw(1, cards("4S 5D 6D"), cards("2D 3H 4S 5D 6D"), hand=mask("KH 4H"))],
    ),
    (
        "a 7 makes the previous seat draw 2",
        position(("7S 2C 3C", "KH 4H", "QD 5C"), "KS", "2D 3H 4S"),
        [discard_action(C("7S"))],
        [ChanceDraw(2, cards("3H 4S"), cards("2D 3H 4S"), hand=mask("QD 5C"))],
    ),
]


@pytest.mark.parametrize("about, start, actions, expected", NOTED, ids=[case[0] for case in NOTED])
def test_draws_noted(
    about: str, start: MauMauPosition, actions: list[int], expected: list[ChanceDraw]
) -> None:
    state = start.state()
    noted = draws_from(state, actions)
    assert [(d.seat, sorted(d.cards), sorted(d.pool), d.hand) for d in noted] == [
        (d.seat, sorted(d.cards), sorted(d.pool), d.hand) for d in expected
    ]
    assert state.stock == list(start.stock)  # the state given is not played on


def test_drawing_the_whole_stock_is_no_chance_the_rest_comes_from_the_reshuffled_pile() -> None:
    start = position(("8S 2C 3C", "KH 4H"), "9D 5H KS", "6D")
    state = start.state()
    (draw,) = draws_from(state, [discard_action(C("8S"))])
    state.apply(discard_action(C("8S")))
    got = state.hands[1] & ~mask("KH 4H 6D")
    assert draw.seat == 1 and sorted(draw.pool) == sorted(cards("9D 5H KS"))
    assert len(draw.cards) == 2 and sum(1 << c for c in draw.cards) == got


def test_a_stuck_draw_notes_what_the_table_allowed() -> None:
    start = position(("2H 3D", "KH 4H"), "KS", "4C 9S JC")
    (draw,) = draws_from(start.state(), [DRAW])
    assert draw.playable == playable_after_card(C("KS"), True)


def test_each_deal_notes_every_seats_seven_cards_from_the_pack() -> None:
    game = make_game("mau-mau", 3)
    draws = match_draws(3, game.options, 11, [])
    state = game.new_state(11)
    assert isinstance(state, MauMauState)
    assert [(d.seat, d.dealt, len(d.pool)) for d in draws] == [(s, True, 52) for s in range(3)]
    assert [sum(1 << c for c in d.cards) for d in draws] == state.hands


# -- the luck of a draw -----------------------------------------------------------------------


def test_a_jack_from_a_jack_and_a_two_is_half_a_jack_ahead() -> None:
    luck = draw_luck_features(ChanceDraw(0, cards("JC"), cards("JC 2C"), hand=mask("3H 4H 5H")))
    assert luck[RANK["J"]] == 0.5 and luck[RANK["2"]] == -0.5
    assert sum(abs(v) for v in luck) == 1.0


def test_drawing_the_whole_pool_is_no_luck() -> None:
    assert draw_luck_features(ChanceDraw(0, cards("JC 2C 5H"), cards("JC 2C 5H"))) == [0.0] * len(
        LUCK_FEATURES
    )


def test_playable_and_suit_held_against_the_pool() -> None:
    # two of the four pool cards are clubs (playable on the table); the seat holds two clubs
    draw = ChanceDraw(
        0, cards("4C"), cards("4C 9C 5H 6D"), hand=mask("2C 3C KH"), playable=mask("4C 9C")
    )
    luck = draw_luck_features(draw)
    assert luck[PLAYABLE] == 1 - 2 / 4
    assert luck[SUIT_HELD] == 2 - (2 + 2 + 1 + 0) / 4


def test_a_spade_start_and_a_short_hand_count_again() -> None:
    draw = ChanceDraw(0, cards("JC"), cards("JC 2C"), hand=mask("3H"), spade_start=True)
    luck = draw_luck_features(draw)
    assert luck[LUCK_FEATURES.index("draw J on a spade start")] == 0.5
    assert luck[LUCK_FEATURES.index("draw J holding 1-2")] == 0.5
    assert luck[LUCK_FEATURES.index("draw 2 holding 1-2")] == -0.5


def test_a_dealt_card_counts_under_the_deal_features() -> None:
    luck = draw_luck_features(ChanceDraw(0, cards("JC"), cards("JC 2C"), dealt=True))
    assert luck[LUCK_FEATURES.index("deal J")] == 0.5
    assert luck[RANK["J"]] == 0.0 and luck[PLAYABLE] == 0.0


def test_a_seats_luck_is_its_draws_summed_and_weighted() -> None:
    draws = [
        ChanceDraw(1, cards("JC"), cards("JC 2C")),
        ChanceDraw(1, cards("JD"), cards("JD 2D 3D 4D")),
    ]
    features = seat_luck_features(draws, 2)
    assert features[0] == [0.0] * len(LUCK_FEATURES)
    assert features[1][RANK["J"]] == 0.5 + 0.75
    weights = [0.0] * len(LUCK_FEATURES)
    weights[RANK["J"]] = -20.0
    assert luck_of(features[1], weights) == -25.0


# -- unbiased: the correction averages zero -------------------------------------------------


def random_match(seats: int, seed: int) -> tuple[int, list[int]]:
    """A short match of random legal moves: its seed and moves."""
    game = make_game("mau-mau", seats, {"target": 150, "reshuffle": "deal_seeded"})
    state, rng, actions = game.new_state(seed), random.Random(seed), []
    while not state.is_terminal():
        actions.append(rng.choice(list(state.legal_actions())))
        state.apply(actions[-1])
    return seed, actions


def test_every_feature_s_luck_averages_zero_over_many_deals() -> None:
    """Each feature's luck has expectation zero given the history, so over many matches its
    mean is within a few standard errors of zero (here 4), seat by seat and summed."""
    seats = 3
    options = make_game("mau-mau", seats, {"target": 150, "reshuffle": "deal_seeded"}).options
    per_seat: list[list[float]] = []
    for seed in range(300):
        seed, actions = random_match(seats, seed)
        per_seat += seat_luck_features(match_draws(seats, options, seed, actions), seats)
    for k, name in enumerate(LUCK_FEATURES):
        values = [seat[k] for seat in per_seat]
        spread = statistics.stdev(values)
        if spread == 0:  # a rank's draws sum to zero over the ranks: one may carry nothing
            continue
        error = spread / len(values) ** 0.5
        assert abs(statistics.fmean(values)) < 4 * error, name


def test_the_registered_luck_hook_replays_the_match() -> None:
    game = make_game("mau-mau", 3, {"target": 150, "reshuffle": "deal_seeded"})
    seed, actions = random_match(3, 5)
    hook = ENTRIES["mau-mau"].luck
    assert hook is match_luck
    luck = hook(game, seed, actions)
    features = seat_luck_features(match_draws(3, game.options, seed, actions), 3)
    assert luck == tuple(luck_of(f) for f in features)
    assert all(entry.luck is None for entry in ENTRIES.values() if entry.name != "mau-mau")
