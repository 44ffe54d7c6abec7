"""Oh Hell rules: the worked examples (docs/games/oh-hell.md) as table-driven tests, plus checks."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from referee.games.api import IllegalActionError, InvalidOptionsError
from referee.games.cards import StandardDeck
from referee.games.oh_hell import (
    BID_BASE,
    OhHellPosition,
    OhHellState,
    forbidden_dealer_bid,
    hand_points,
    hand_sizes,
    max_hand_size,
    position_of,
    trick_winner,
)
from referee.games.registry import make_game

C = StandardDeck.parse


def rigged_hand(
    num_seats: int,
    dealer: int,
    hands: dict[int, list[str]],
    trump: str,
    scoring: str = "positive",
    deal_style: str = "short_low",
) -> OhHellState:
    """A one-hand game from the given deal (worked examples fix the cards)."""
    position = OhHellPosition(
        hands=tuple(tuple(C(card) for card in hands[seat]) for seat in range(num_seats)),
        trump_card=C(trump),
        dealer=dealer,
        options={"scoring": scoring, "deal_style": deal_style},
    )
    return position.state()


def _oh_hell(state: object) -> OhHellState:
    assert isinstance(state, OhHellState)
    return state


# OH-E1: hand sequences.
@pytest.mark.parametrize(
    ("style", "seats", "hands", "first", "last"),
    [
        ("long", 4, 19, 10, 10),
        ("long", 3, 19, 10, 10),
        ("long", 5, 19, 10, 10),
        ("long", 6, 15, 8, 8),
        ("long", 7, 13, 7, 7),
        ("long_inverted", 4, 19, 1, 1),
        ("long_inverted", 7, 13, 1, 1),
        ("short_high_low", 3, 11, 6, 6),
        ("short_high_low", 7, 11, 6, 6),
        ("short_high", 4, 10, 1, 10),
        ("short_high", 6, 8, 1, 8),
        ("short_low", 7, 7, 7, 1),
    ],
)
def test_hand_sequences(style: str, seats: int, hands: int, first: int, last: int) -> None:
    sizes = hand_sizes(style, seats)
    assert len(sizes) == hands
    assert (sizes[0], sizes[-1]) == (first, last)
    turning = max(sizes) if style == "long_inverted" else 1
    assert sizes.count(turning) == 1, "the turning hand is played once (OH-A6)"


def test_long_game_with_four_players_has_109_tricks() -> None:
    assert sum(hand_sizes("long", 4)) == 109
    assert [max_hand_size(n) for n in range(3, 8)] == [10, 10, 10, 8, 7]


# OH-E2 and OH-E5: the dealer's restriction.
@pytest.mark.parametrize(
    ("hand_size", "other_bids", "forbidden"),
    [
        (5, [2, 0, 1], 2),
        (5, [3, 1, 2], None),
        (1, [0, 0], 1),
        (1, [1, 0], 0),
        (1, [1, 1], None),
    ],
)
def test_dealer_restriction(hand_size: int, other_bids: list[int], forbidden: int | None) -> None:
    assert forbidden_dealer_bid(hand_size, other_bids) == forbidden


def test_dealer_legal_bids_in_play() -> None:
    state = rigged_hand(3, 0, {1: ["AS"], 2: ["KS"], 0: ["7S"]}, "5D")
    state.apply(BID_BASE + 1)
    state.apply(BID_BASE + 0)
    assert state.current_seat() == 0
    assert list(state.legal_actions()) == [BID_BASE + 1]  # OH-E5: bids 1, 0 → dealer must bid 1
    with pytest.raises(IllegalActionError):
        state.apply(BID_BASE + 0)


# OH-E4: trick winners, diamonds trumps.
@pytest.mark.parametrize(
    ("cards", "winner"),
    [
        (["5S", "KS", "2D", "AS"], "2D"),
        (["5S", "KS", "AC", "9S"], "KS"),
        (["5S", "6D", "QD", "AS"], "QD"),
    ],
)
def test_trick_winner(cards: list[str], winner: str) -> None:
    ids = [C(card) for card in cards]
    assert cards[trick_winner(ids, C("5D") // 13)] == winner


# OH-E3: a complete 3-player, 3-card hand under each scoring style.
@pytest.mark.parametrize(
    ("scoring", "expected"),
    [("positive", (1, 12, 10)), ("neutral", (0, 12, 10)), ("negative", (-10, 10, 10))],
)
def test_complete_hand(scoring: str, expected: tuple[int, int, int]) -> None:
    hands = {1: ["AS", "2D", "9C"], 2: ["KS", "QS", "3H"], 0: ["7S", "AH", "4D"]}
    state = rigged_hand(3, 0, hands, "5D", scoring)
    state.apply(BID_BASE + 2)  # P1
    state.apply(BID_BASE + 0)  # P2
    assert BID_BASE + 1 not in state.legal_actions()  # dealer may not make it 3
    state.apply(BID_BASE + 0)  # P0
    plays = [("AS", "QS", "7S"), ("9C", "3H", "AH"), ("2D", "KS", "4D")]
    winners = [1, 1, 0]
    for trick, winner in zip(plays, winners, strict=True):
        for card in trick:
            if card == "4D":
                assert state.legal_actions() == (C("4D"),), "P0 must follow diamonds"
            state.apply(C(card))
        if not state.is_terminal():
            assert state.current_seat() == winner
    assert state.is_terminal()
    assert state.previous_hands[-1].tricks == (1, 2, 0)
    assert state.outcome().scores == expected


# OH-E6: negative scoring.
@pytest.mark.parametrize(("bid", "took", "points"), [(3, 5, -20), (0, 0, 10), (4, 3, -10)])
def test_negative_scoring(bid: int, took: int, points: int) -> None:
    assert hand_points("negative", bid, took) == points


def test_must_follow_suit_and_may_play_anything_when_void() -> None:
    state = rigged_hand(3, 0, {1: ["AS", "2D"], 2: ["KS", "3H"], 0: ["AH", "4D"]}, "5C")
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    state.apply(C("AS"))
    assert state.legal_actions() == (C("KS"),)
    with pytest.raises(IllegalActionError, match="follow suit"):
        state.apply(C("3H"))
    state.apply(C("KS"))
    assert set(state.legal_actions()) == {C("AH"), C("4D")}


def test_first_dealer_is_random_and_the_deal_rotates_clockwise() -> None:
    game = make_game("oh-hell", 4)
    firsts = {_oh_hell(game.new_state(seed)).dealer for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    state = game.new_state(5)
    assert isinstance(state, OhHellState)
    rng = random.Random(5)
    dealers = []
    while not state.is_terminal():
        if state.bidding and not any(b is not None for b in state.bids):
            dealers.append(state.dealer)
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    assert len(dealers) == 19
    assert all((b - a) % 4 == 1 for a, b in itertools.pairwise(dealers))


def test_bidding_starts_left_of_dealer_who_bids_last_and_leads_nothing() -> None:
    state = make_game("oh-hell", 5).new_state(9)
    assert isinstance(state, OhHellState)
    order = []
    while state.bidding:
        order.append(state.current_seat())
        state.apply(state.legal_actions()[0])
    dealer = state.dealer
    assert order == [(dealer + 1 + i) % 5 for i in range(5)]
    assert state.current_seat() == (dealer + 1) % 5, "the seat left of the dealer leads"


@pytest.mark.parametrize(
    ("tie_break", "ranks"), [("shared", (1, 1, 3)), ("most_exact_bids", (2, 1, 3))]
)
def test_tie_break_option(tie_break: str, ranks: tuple[int, int, int]) -> None:
    start = position_of(make_game("oh-hell", 3, {"tie_break": tie_break}).new_state(0))
    state = replace(start, scores=(30, 30, 10), exact_bids=(1, 2, 0)).state()
    assert state.outcome().ranks == ranks


def test_unknown_option_values_are_rejected() -> None:
    with pytest.raises(InvalidOptionsError, match="deal_style"):
        make_game("oh-hell", 4, {"deal_style": "medium"})
    with pytest.raises(InvalidOptionsError, match="takes a str"):
        make_game("oh-hell", 4, {"scoring": 3})
