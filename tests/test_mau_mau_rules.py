"""Mau-Mau rules: every worked example of docs/games/mau-mau.md as a table, plus rule tests."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from cardarena.game.v1 import cards_pb2, game_pb2, mau_mau_pb2
from referee.games.api import IllegalActionError, InvalidOptionsError
from referee.games.cards import StandardDeck, Suit
from referee.games.mau_mau.rules import (
    DRAW,
    HAND_SIZE,
    LAST_CARD,
    PASS,
    MauMauState,
    action_cards,
    deal_multiplier,
    discard_action,
    hand_points,
    playable_after_card,
    playable_after_jack,
)
from referee.games.registry import codec_for, make_game
from tests.conformance import check_cached_observations, check_card_conservation, random_playout

C = StandardDeck.parse


def cards(text: str) -> list[int]:
    return [C(name) for name in text.split()]


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def setup(
    hands: Sequence[str],
    top: str,
    to_act: int,
    *,
    start: str | None = None,
    stock: str = "",
    announced: int | None = None,
    options: Mapping[str, object] | None = None,
    tallies: Sequence[int] | None = None,
) -> MauMauState:
    """A state mid-deal with the given hands, pile top and stock (drawn from its end)."""
    game = make_game("mau-mau", len(hands), options)
    state = game.new_state(0)
    assert isinstance(state, MauMauState)
    state.hands = [mask(h) for h in hands]
    state.counts = [len(h.split()) for h in hands]
    state.start_card = C(start or top)
    state.pile = (C(top),) if start is None or start == top else (C(start), C(top))
    state.stock = cards(stock)
    top_card = C(top)
    if announced is None:
        state.playable = playable_after_card(top_card, state.jack_wild)
        state.announced = 0
    else:
        state.playable = playable_after_jack(announced)
        state.announced = announced
    state.to_act = to_act
    state.direction = 1
    state.fines = [0] * len(hands)
    if tallies is not None:
        state.tallies = list(tallies)
    state._legal = None
    return state


def hand(state: MauMauState, seat: int) -> set[str]:
    return {StandardDeck.name(c) for c in range(52) if state.hands[seat] >> c & 1}


# -- MAU-E1: count and multipliers ------------------------------------------------------------

E1_HAND = "JD 8C 7H AS KD 9C 3H"


def test_e1_hand_value() -> None:
    assert hand_points(cards(E1_HAND)) == 92
    assert hand_points(range(52)) == 516


@pytest.mark.parametrize(
    ("final_jacks", "start", "points"),
    [
        (0, "5H", 92),
        (0, "5S", 184),
        (1, "5H", 184),
        (1, "5S", 368),
        (2, "5H", 368),
        (2, "5S", 736),
    ],
)
def test_e1_multipliers(final_jacks: int, start: str, points: int) -> None:
    assert hand_points(cards(E1_HAND)) * deal_multiplier(final_jacks, C(start)) == points
    # The same through a whole deal end: the winner goes out with a plain card, J or J+J.
    last = {0: "4H", 1: "JC", 2: "JC JS"}[final_jacks]
    state = setup([last, E1_HAND.replace("JD", "2D")], "4D", 0, start=start)
    second = C("JS") if final_jacks == 2 else None
    action = discard_action(C(last.split()[0]), 0, second)
    state.hands[1] = mask(E1_HAND)
    state.apply(action)
    deal = state.previous_deals[-1]
    assert deal.winner == 0
    assert deal.points[1] == points
    assert deal.multiplier == deal_multiplier(final_jacks, C(start))


# -- MAU-E2: turn order -----------------------------------------------------------------------

A, B, CC, D = 0, 1, 2, 3


@pytest.mark.parametrize(
    ("discard", "drawer", "drawn", "next_seat", "clockwise"),
    [
        ("7H", A, 2, CC, True),
        ("8H", CC, 3, D, True),
        ("AH", None, 0, D, True),
        ("QH", None, 0, A, False),
    ],
)
def test_e2_turn_order(
    discard: str, drawer: int | None, drawn: int, next_seat: int, clockwise: bool
) -> None:
    hands = ["2C 3C 4C", f"{discard} 5C 6C", "2D 3D 4D", "2S 3S 4S"]
    state = setup(hands, "9H", B, stock="TC TD TS KC KD KS")
    state.apply(discard_action(C(discard)))
    for seat in range(4):
        expected = 3 + (drawn if seat == drawer else 0) - (seat == B)
        assert state.counts[seat] == expected, seat
    assert state.current_seat() == next_seat
    assert (state.direction == 1) is clockwise


def test_e2_queen_then_seven_hits_b() -> None:
    hands = ["7H 3C 4C", "QH 5C 6C", "2D 3D 4D", "2S 3S 4S"]
    state = setup(hands, "9H", B, stock="TC TD TS KC KD KS")
    state.apply(discard_action(C("QH")))
    assert state.current_seat() == A
    state.apply(discard_action(C("7H")))
    assert state.counts[B] == 2 + 2  # B drew 2
    assert state.current_seat() == D
    state.apply(DRAW)  # D holds no heart or 7
    assert state.current_seat() == CC


# -- MAU-E3: Jacks ----------------------------------------------------------------------------


def legal_cards(state: MauMauState) -> set[str]:
    return {
        " ".join(StandardDeck.name(c) for c in action_cards(a))
        for a in state.legal_actions()
        if a not in (DRAW, PASS)
    }


@pytest.mark.parametrize(
    ("play", "announce", "allowed", "forbidden"),
    [
        ("JH", Suit.DIAMONDS, {"5D", "JC"}, {"9S", "5H"}),
        ("JH", 0, {"5D", "JC", "9S", "5H"}, set()),
        ("JH JS", Suit.HEARTS, {"5H", "JC"}, {"9S", "5D"}),
    ],
)
def test_e3_jacks(play: str, announce: int, allowed: set[str], forbidden: set[str]) -> None:
    jacks = cards(play)
    hands = [f"{play} 2C 3C", "5D 9S 5H JC"]
    state = setup(hands, "9C", 0)
    second = jacks[1] if len(jacks) == 2 else None
    state.apply(discard_action(jacks[0], announce, second))
    assert state.current_seat() == 1
    legal = legal_cards(state)
    assert allowed <= legal
    assert not forbidden & legal


def test_e3_two_jacks_as_last_cards_quadruple() -> None:
    state = setup(["JH JS", "5D 9S"], "9C", 0, start="2H")
    state.apply(discard_action(C("JH"), Suit.HEARTS, C("JS")))
    deal = state.previous_deals[-1]
    assert deal.final_jacks == 2 and deal.multiplier == 4
    assert deal.points == (0, (5 + 9) * 4)


# -- MAU-E4: last card ------------------------------------------------------------------------


@pytest.mark.parametrize(("announce", "cards_after"), [(False, 6), (True, 1)])
def test_e4_last_card(announce: bool, cards_after: int) -> None:
    state = setup(["4C 6D", "2S 3S"], "4H", 0, stock="2C 3C 4D 5D 6C 7C")
    assert set(state.legal_actions()) == {C("4C"), C("4C") | LAST_CARD}
    state.apply(discard_action(C("4C"), last_card=announce))
    assert state.counts[0] == cards_after


# -- MAU-E5: stuck player ---------------------------------------------------------------------


def test_e5_stuck_player_negative() -> None:
    state = setup(["2H 3D 9C", "KH"], "KS", 0, start="2D", stock="4C")
    assert state.legal_actions() == (DRAW,)
    state.apply(DRAW)
    assert state.counts[0] == 4 and state.fines[0] == 1
    assert state.current_seat() == 1  # the drawn card is not played
    state.apply(discard_action(C("KH")))  # seat 1 goes out
    assert state.previous_deals[-1].points == (hand_points(cards("2H 3D 9C 4C")) + 50, 0)


def test_e5_stuck_player_positive() -> None:
    state = setup(
        ["2H 3D 9C", "KH"], "KS", 0, start="2D", stock="4C", options={"scoring": "positive"}
    )
    state.apply(DRAW)
    state.apply(discard_action(C("KH")))
    assert state.previous_deals[-1].points == (0, hand_points(cards("2H 3D 9C 4C")) + 50)


def test_positive_winner_own_fine_is_void() -> None:
    state = setup(["KH", "3D 5C"], "KS", 0, start="2D", options={"scoring": "positive"})
    state.fines = [1, 2]
    state.apply(discard_action(C("KH")))
    assert state.previous_deals[-1].points == (8 + 2 * 50, 0)


def test_negative_fines_go_to_the_fined_seat_including_the_winner() -> None:
    state = setup(["KH", "3D 5C"], "KS", 0, start="2D")
    state.fines = [1, 2]
    state.apply(discard_action(C("KH")))
    assert state.previous_deals[-1].points == (50, 8 + 100)


# -- MAU-E6: end of game ----------------------------------------------------------------------


def test_e6_end_of_game() -> None:
    # B's cards are worth 40 (K Q T T), C's 25 (9 6 4 6).
    state = setup(
        ["JC", "KD QD TD TS", "9D 6C 4C 6S"],
        "5H",
        0,
        start="2H",
        tallies=[900, 700, 950],
    )
    state.fines = [0, 0, 1]
    state.apply(discard_action(C("JC")))
    assert state.is_terminal()
    assert state.tallies == [900, 780, 1050]
    outcome = state.outcome()
    assert outcome.scores == (900, 780, 1050)
    assert outcome.ranks == (2, 1, 3)


# -- deal, start card, turn order -------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_deal_one_at_a_time_from_the_dealers_left(seats: int) -> None:
    state = make_game("mau-mau", seats).new_state(42)
    assert isinstance(state, MauMauState)
    rng = random.Random(42)
    dealer = rng.randrange(seats)
    deck = list(range(52))
    rng.shuffle(deck)
    assert state.dealer == dealer
    for i in range(seats * HAND_SIZE):
        assert state.hands[(dealer + 1 + i) % seats] >> deck[i] & 1
    assert state.start_card == deck[seats * HAND_SIZE] == state.pile[-1]
    assert len(state.stock) == 52 - seats * HAND_SIZE - 1
    assert state.current_seat() == (dealer + 1) % seats
    assert state.counts == [HAND_SIZE] * seats


def test_start_card_effect_is_not_applied_and_dealer_moves_left() -> None:
    game = make_game("mau-mau", 4)
    seen = set()
    for seed in range(200):
        state = game.new_state(seed)
        assert isinstance(state, MauMauState)
        rank = StandardDeck.name(state.start_card)[0]
        seen.add(rank)
        assert state.current_seat() == (state.dealer + 1) % 4
        assert state.direction == 1 and state.counts == [7] * 4
        # it only sets the matching constraint
        assert state.playable == playable_after_card(state.start_card, True)
    assert {"8", "7", "A", "Q", "J"} <= seen
    state = game.new_state(7)
    assert isinstance(state, MauMauState)
    first = state.dealer
    rng = random.Random(7)
    while state.deal_number == 1:
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    assert state.dealer == (first + 1) % 4 or state.is_terminal()


@pytest.mark.parametrize(
    ("discard", "opponent_draws", "next_seat", "clockwise"),
    [("8H", 3, 0, True), ("AH", 0, 0, True), ("QH", 0, 1, False), ("7H", 2, 1, True)],
)
def test_two_player_specials(
    discard: str, opponent_draws: int, next_seat: int, clockwise: bool
) -> None:
    state = setup([f"{discard} 2C 3C", "2D 3D"], "9H", 0, stock="TC TD TS KC")
    state.apply(discard_action(C(discard)))
    assert state.counts[1] == 2 + opponent_draws
    assert state.current_seat() == next_seat
    assert (state.direction == 1) is clockwise


def test_going_out_does_not_apply_the_last_cards_effect() -> None:
    state = setup(["8H", "2D 3D", "4D 5D"], "9H", 0)
    state.apply(discard_action(C("8H")))
    deal = state.previous_deals[-1]
    assert deal.hand_points == (0, 5, 9)  # nobody drew 3


def test_no_stacking_the_next_player_simply_draws() -> None:
    state = setup(["8H 2C 3C", "8D 3D", "4D 5D"], "9H", 0, stock="TC TD TS KC")
    state.apply(discard_action(C("8H")))
    assert state.counts[1] == 5 and state.current_seat() == 2


# -- announcements ------------------------------------------------------------------------------


def test_last_card_flag_is_offered_only_when_one_card_would_remain() -> None:
    state = setup(["4C 6D 7S", "2S 3S"], "4H", 0)
    assert state.legal_actions() == (C("4C"),)
    state = setup(["JC JD 7S", "2S 3S"], "4H", 0)
    legal = state.legal_actions()
    singles = [a for a in legal if len(action_cards(a)) == 1]
    doubles = [a for a in legal if len(action_cards(a)) == 2]
    assert len(singles) == 2 * 5 and not any(a & LAST_CARD for a in singles)
    assert len(doubles) == 5 * 2 and sum(bool(a & LAST_CARD) for a in doubles) == 5


def test_forgotten_last_card_draws_five_before_the_cards_effect() -> None:
    state = setup(["8C 6D", "2S 3S", "4S"], "8H", 0, stock="2C 3C 4C 5C 6C 7C 9C TC")
    state.apply(discard_action(C("8C")))
    assert state.counts == [6, 5, 1]
    assert hand(state, 0) == {"6D", "TC", "9C", "7C", "6C", "5C"}
    assert state.current_seat() == 2


# -- the stock --------------------------------------------------------------------------------


def test_reshuffle_keeps_the_top_card_and_missing_draws_lapse() -> None:
    state = setup(["8H 2C 3C", "2D"], "9H", 0)
    state.pile = tuple(cards("4S 5S 9H"))
    state.apply(discard_action(C("8H")))  # seat 1 must draw 3; only 4S 5S 9H can be reshuffled
    assert state.pile == (C("8H"),)
    assert hand(state, 1) == {"2D", "4S", "5S", "9H"}
    assert state.reshuffles == 1
    assert state.stock == []


def test_several_reshuffles_happen_in_seeded_games() -> None:
    counts = []
    for seats in (2, 4, 6):
        game = make_game("mau-mau", seats)
        for seed in range(10):
            state, _ = random_playout(game, seed)
            assert isinstance(state, MauMauState)
            counts.append(state.reshuffles)
    assert max(counts) >= 5
    assert sum(c >= 2 for c in counts) >= len(counts) // 2


# -- options (D-MAU-1..4) ---------------------------------------------------------------------


def test_d_mau_1_draw_then_may_play() -> None:
    options = {"cannot_discard": "draw_then_may_play"}
    state = setup(["2H 3D", "4C 5C", "6C"], "KS", 0, stock="4D 9S", options=options)
    state.apply(DRAW)  # draws 9S, playable
    assert state.fines[0] == 1 and state.current_seat() == 0
    assert state.legal_actions() == (C("9S"), PASS)
    state.apply(C("9S"))
    assert state.current_seat() == 1 and state.counts[0] == 2
    state.apply(DRAW)  # seat 1 draws 4D, not playable on 9S: turn ends
    assert state.current_seat() == 2


def test_d_mau_1_draw_then_may_play_pass_keeps_the_card() -> None:
    options = {"cannot_discard": "draw_then_may_play"}
    state = setup(["2H 3D", "4C 5C"], "KS", 0, stock="9S", options=options)
    state.apply(DRAW)
    state.apply(PASS)
    assert state.current_seat() == 1 and state.counts[0] == 3


def test_d_mau_1_default_drawn_card_is_not_played() -> None:
    state = setup(["2H 3D", "4C 5C"], "KS", 0, stock="9S")
    state.apply(DRAW)
    assert state.current_seat() == 1 and state.counts[0] == 3


def test_d_mau_1_barred_for_deal() -> None:
    options = {"cannot_discard": "barred_for_deal"}
    state = setup(["2H 3D", "4C 5C", "TC 3C"], "KS", 0, stock="KD 9S", options=options)
    state.apply(DRAW)  # seat 0 is fined, draws 9S and is barred
    assert state.barred == [True, False, False]
    state.apply(DRAW)  # seat 1 too (draws KD)
    state.apply(DRAW)  # seat 2 too: everybody barred, so the bar is lifted
    assert state.barred == [False, False, False]
    state.barred = [True, False, False]
    state.hands[0] = mask("9H")
    state.counts[0] = 1
    state.playable = playable_after_card(C("9C"), True)
    state._legal = None
    assert state.legal_actions() == (DRAW,)  # 9H would go out


def test_d_mau_3_strict_jack() -> None:
    state = setup(["JH JC 2D", "3S"], "9C", 0, options={"jack_wild": False})
    assert {"JC", "JC JH"} == legal_cards(state) - set()
    state = setup(["JH 2D", "3S"], "9C", 0, options={"jack_wild": False})
    assert state.legal_actions() == (DRAW,)


def test_d_mau_4_seat_range() -> None:
    with pytest.raises(InvalidOptionsError):
        make_game("mau-mau", 2, {"seat_range": "3-6"}).new_state(0)
    make_game("mau-mau", 3, {"seat_range": "3-6"}).new_state(0)
    with pytest.raises(InvalidOptionsError):
        make_game("mau-mau", 7)


@pytest.mark.parametrize(
    "options",
    [
        {"cannot_discard": "draw_then_may_play"},
        {"cannot_discard": "barred_for_deal"},
        {"jack_wild": False},
        {"scoring": "positive"},
        {"scoring": "positive", "target": 300, "cannot_discard": "barred_for_deal"},
    ],
)
@pytest.mark.parametrize("seats", [2, 6])
def test_every_option_plays_to_the_end(options: dict[str, object], seats: int) -> None:
    game = make_game("mau-mau", seats, options)
    lower = options.get("scoring", "negative") == "negative"
    for seed in range(25):
        state, _ = random_playout(game, seed)
        outcome = state.outcome()
        target = int(str(options.get("target", 1000)))
        assert max(outcome.scores) >= target
        best = min(outcome.scores) if lower else max(outcome.scores)
        assert all(
            (r == 1) == (s == best) for s, r in zip(outcome.scores, outcome.ranks, strict=True)
        )
    state = game.new_state(1)
    rng = random.Random(1)
    while not state.is_terminal():
        check_card_conservation(state)
        state.observe(state.current_seat())  # fills the cached table, as the referee does
        check_cached_observations(state)  # under every option: none of its parts goes stale
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    check_cached_observations(state)


def test_illegal_discard_changes_nothing() -> None:
    state = setup(["4C 6D", "2S 3S"], "4H", 0)
    with pytest.raises(IllegalActionError):
        state.apply(C("6D"))
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)
    assert state.counts == [2, 2] and state.current_seat() == 0


# -- the wire ---------------------------------------------------------------------------------


def _wire(card: str) -> cards_pb2.Card:
    suit, rank = StandardDeck.suit(C(card)), StandardDeck.rank(C(card))
    return cards_pb2.Card(suit=int(suit), rank=int(rank))  # type: ignore[arg-type]


def test_codec_two_jacks_in_either_order_and_announcements() -> None:
    codec = codec_for(make_game("mau-mau", 4))
    for order in (["JS", "JH"], ["JH", "JS"]):
        message = game_pb2.Action(
            mau_mau=mau_mau_pb2.MauMauAction(
                discard=mau_mau_pb2.MauMauDiscard(
                    cards=[_wire(c) for c in order],
                    announced_suit=cards_pb2.SUIT_HEARTS,
                    announce_last_card=True,
                )
            )
        )
        assert codec.decode_action(message) == discard_action(
            C("JH"), Suit.HEARTS, C("JS"), last_card=True
        )


def test_observation_shows_hand_sizes_not_cards() -> None:
    game = make_game("mau-mau", 4)
    state = game.new_state(5)
    codec = codec_for(game)
    message = codec.observation(state.observe(1)).mau_mau
    assert len(message.hand) == 7
    assert [seat.hand_size for seat in message.seats] == [7, 7, 7, 7]
    assert message.top_card == codec.card(state.public_cards().__iter__().__next__())
    assert message.stock_size == 52 - 29


def test_a_forfeit_ranks_the_others_in_the_direction_of_the_scoring_in_force() -> None:
    from referee.match import Match

    for scoring, best in (("negative", 5), ("positive", 30)):
        match = Match(make_game("mau-mau", 3, {"scoring": scoring}), seed=1)
        match.state.tallies = [10, 5, 30]  # type: ignore[attr-defined]
        match.forfeit(0, "test")
        outcome = match.outcome()
        assert outcome is not None and outcome.ranks[0] == 3
        assert outcome.ranks[match.state.scores_so_far().index(best)] == 1
