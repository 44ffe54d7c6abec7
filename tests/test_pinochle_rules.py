"""Two-handed Pinochle: every worked example (PIN-E1..E6, docs/games/pinochle.md) as a table,
plus the rules around them (deal, draws, dix, meld turns, phase 2, declaring out, the wire)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from cardarena.game.v1 import game_pb2, pinochle_pb2
from referee.codec import MalformedActionError
from referee.games.api import IllegalActionError, OptionValue
from referee.games.pinochle import (
    ACE,
    DECLARE_OUT,
    DIX_BASE,
    DRAW,
    HOLDS_FOURS,
    HOLDS_MARRIAGE,
    HOLDS_PINOCHLE,
    JACK,
    KING,
    MELD_BASE,
    MELD_CLASS,
    MELDS,
    NINE,
    PHASE_MELD,
    PHASE_NO_STOCK,
    PHASE_STOCK,
    QUEEN,
    USED_FLUSH,
    USED_FOURS,
    USED_MARRIAGE,
    USED_PINOCHLE,
    PinochlePosition,
    PinochleState,
    Trick,
    allowed_melds,
    any_meld_allowed,
    card_points,
    cards_of,
    follower_wins,
    held_families,
    held_meld_actions,
    legal_follow_mask,
    mask_of,
    parse_card,
    position_of,
    settle,
    shuffled_deck,
)
from referee.games.registry import codec_for, make_game
from tests.conformance import check_card_conservation, check_observations, random_playout
from tests.pinochle_oracles import legal_melds, may_meld, meld_is_legal

SUITS = "CDHS"


def cards(text: str) -> list[int]:
    """``"QS JD#1"`` as card ids (copy 0 unless ``#1``)."""
    return [parse_card(word) for word in text.split()]


def meld_id(text: str) -> int:
    """The action of the meld made of exactly these cards."""
    mask = mask_of(cards(text))
    return MELD_BASE + next(m for m, spec in enumerate(MELDS) if spec.mask == mask)


def position(
    hand0: str,
    hand1: str,
    turn_up: str,
    options: dict[str, OptionValue] | None = None,
    **fields: Any,
) -> PinochleState:
    """Phase 1 with these hands and turn-up, seat 0 to lead, no meld points yet; the stock: the
    other cards, nines first (so that the draws of a few meld turns bring no new meld)."""
    h0, h1, up = tuple(cards(hand0)), tuple(cards(hand1)), parse_card(turn_up)
    used = mask_of([*h0, *h1, up])
    stock = sorted((c for c in range(48) if not used >> c & 1), key=lambda c: (c >> 1) % 6)
    return PinochlePosition(
        hands=(h0, h1),
        turn_up=up,
        stock=tuple(stock),
        options={"declare_out": "disabled", **(options or {})},
        **{"hand_points": (0, 0), **fields},
    ).state()


def phase2(
    hand0: str, hand1: str, trump: str, options: dict[str, OptionValue] | None = None, **fields: Any
) -> PinochleState:
    """Phase 2 with these hands, seat 0 to act, ``trump`` the hand's turn-up: every other card
    lies in this hand's finished tricks, each led and won by seat 0."""
    h0, h1 = tuple(cards(hand0)), tuple(cards(hand1))
    held = mask_of([*h0, *h1])
    rest = [c for c in range(48) if not held >> c & 1]
    tricks = tuple(Trick(0, (rest[i], rest[i + 1]), 0) for i in range(0, len(rest), 2))
    return PinochlePosition(
        hands=(h0, h1),
        turn_up=None,
        dealt_turn_up=parse_card(trump),
        completed=tricks,
        options={"declare_out": "disabled", **(options or {})},
        **fields,
    ).state()


def last_trick(
    leader: int, options: dict[str, OptionValue] | None = None, **fields: Any
) -> PinochleState:
    """The state after trick 24, which ``leader`` won (the card led wins: 9S, then 9S#1)."""
    hands = ["9S", "9S#1"] if leader == 0 else ["9S#1", "9S"]
    state = phase2(hands[0], hands[1], "TC", options, to_act=leader, **fields)
    state.apply(parse_card(hands[leader]))
    state.apply(parse_card(hands[1 - leader]))
    return state


def meld_turn(state: PinochleState, seat: int) -> PinochleState:
    """The same position, with ``seat`` in the meld turn after a phase-1 trick it won."""
    at = position_of(state)
    return replace(at, to_act=seat, trick_leader=seat, meld_turn=True).state()


def given(state: PinochleState, seat: int, card: str) -> PinochleState:
    """The same position, with ``card`` taken from the stock into ``seat``'s hand."""
    at = position_of(state)
    taken = parse_card(card)
    hands = list(at.hands)
    hands[seat] = (*hands[seat], taken)
    stock = tuple(c for c in at.stock if c != taken)
    return replace(at, hands=(hands[0], hands[1]), stock=stock).state()


# -- PIN-E1: trick resolution in phase 1 (trumps ♥) -------------------------------------------

E1 = [
    ("TS", "AS", "follower", "higher card of the led suit"),
    ("AC", "9H", "follower", "trump beats a plain suit"),
    ("KD", "AS", "leader", "a different plain suit cannot win"),
    ("QS", "QS#1", "leader", "identical cards: the card led wins"),
    ("9H", "JH", "follower", "J > 9 in the trump suit"),
]


@pytest.mark.parametrize(("lead", "follow", "winner", "why"), E1, ids=[r[3] for r in E1])
def test_e1_trick_winner(lead: str, follow: str, winner: str, why: str) -> None:
    hearts = SUITS.index("H")
    assert follower_wins(parse_card(lead), parse_card(follow), hearts) == (winner == "follower")


def test_e1_through_the_engine_winner_melds_then_draws_first() -> None:
    state = position("AC KD QD", "9H 9S JS", "TH")
    top, second = state.stock[0], state.stock[1]
    state.apply(parse_card("AC"))
    state.apply(parse_card("9H"))
    assert state.tricks_won == [0, 1]
    assert state.trick_points == [0, 11]
    assert state.to_act == 1 and state.phase == PHASE_STOCK  # nothing to meld: drew at once
    assert state.hands[1] >> top & 1 and state.hands[0] >> second & 1


# -- PIN-E2: progressive melding (trumps ♥) ---------------------------------------------------


def test_e2_royal_marriage_then_flush_with_new_cards() -> None:
    state = position("KH QH AH TH JH 9C", "9S", "9D#1", trump=SUITS.index("H"))
    state = meld_turn(state, 0)
    state.apply(meld_id("KH QH"))
    assert state.hand_points[0] == 40
    state = meld_turn(state, 0)
    state.apply(meld_id("AH TH KH QH JH"))
    assert state.hand_points[0] == 190
    assert [m.points for m in state.melds] == [40, 150]


def test_e2_flush_then_royal_marriage_is_illegal() -> None:
    state = position("KH QH AH TH JH KH#1 QH#1", "9S", "9D#1", trump=SUITS.index("H"))
    state = meld_turn(state, 0)
    state.apply(meld_id("AH TH KH QH JH"))
    state = meld_turn(state, 0)
    legal = state.legal_actions()
    assert meld_id("KH QH") not in legal  # lower value, same class, no new card
    assert meld_id("KH#1 QH") not in legal  # a new card, but the tabled queen: same class, lower
    assert meld_id("KH QH#1") not in legal
    assert meld_id("KH#1 QH#1") in legal  # all-new cards: a second royal marriage
    with pytest.raises(IllegalActionError):
        state.apply(meld_id("KH QH"))


# -- PIN-E3: reuse across classes (trumps ♣) --------------------------------------------------


def test_e3_reuse_across_classes() -> None:
    state = position("QS JD QH QD QC KS QS#1 JD#1", "9S", "9C#1")
    assert state.trump == SUITS.index("C")
    steps = [
        ("QS JD", True, 40),  # 1. pinochle
        ("QS QH QD QC", True, 60),  # 2. four queens, Q♠ tabled: another class
        ("KS QS", True, 20),  # 3. marriage from the tabled Q♠: class A
        ("QS#1 QH QD QC", False, 0),  # 4. four queens again from tabled queens: illegal
        ("QS#1 JD#1", True, 40),  # 5. a second pinochle of all-new cards
    ]
    total = 0
    for meld, legal, points in steps:
        state = meld_turn(state, 0)
        action = meld_id(meld)
        assert (action in state.legal_actions()) == legal, meld
        if legal:
            state.apply(action)
            total += points
            assert state.hand_points[0] == total
        else:
            with pytest.raises(IllegalActionError):
                state.apply(action)
    assert total == 160


def test_a_meld_needs_a_card_from_the_concealed_hand() -> None:
    state = position("KS QS KH QH KD QD KC QC", "9S", "9H#1")
    state = meld_turn(state, 0)
    state.apply(meld_id("KS QS"))
    for m in ("KH QH", "KD QD", "KC QC"):
        state = meld_turn(state, 0)
        state.apply(meld_id(m))
    # Every king and queen is on the table: no new card, nothing to meld (so the turn does not
    # even open: test_meld_turns_of_random_games_offer_exactly_the_legal_melds).
    state = meld_turn(state, 0)
    assert not state.meld_actions() and state.legal_actions() == (DRAW,)
    state = meld_turn(given(state, 0, "KS#1"), 0)
    legal = state.legal_actions()
    assert meld_id("KS#1 KH KD KC") in legal  # one new king + tabled kings: another class
    assert meld_id("KS#1 QS") not in legal  # marriage again from a tabled queen: same value


def test_one_meld_per_won_trick_and_flush_only_in_trumps() -> None:
    state = position("KS QS KH QH AS TS JS", "9S#1", "9H")
    state = meld_turn(state, 0)
    legal = state.legal_actions()
    assert meld_id("KS QS") in legal and meld_id("KH QH") in legal
    assert meld_id("AS TS KS QS JS") not in legal  # spades are not trumps
    state.apply(meld_id("KS QS"))
    assert state.phase == PHASE_STOCK  # no dix to exchange either: the turn ended, drew
    assert meld_id("KH QH") not in state.legal_actions()


def test_trump_marriage_scores_40_only_and_plain_marriage_20() -> None:
    state = position("KH QH KS QS", "9C", "9H#1")
    state = meld_turn(state, 0)
    state.apply(meld_id("KH QH"))
    state = meld_turn(state, 0)
    state.apply(meld_id("KS QS"))
    assert [(m.kind, m.points) for m in state.melds] == [(2, 40), (1, 20)]
    assert state.hand_points[0] == 60


# -- the dix -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dix_points", [0, 10])
def test_dix_exchange_then_meld_in_the_same_turn(dix_points: int) -> None:
    state = position("9H#1 KH QH TH JH", "9S", "AH", {"dix_points": dix_points})
    state = meld_turn(state, 0)
    assert state.phase == PHASE_MELD
    legal = state.legal_actions()
    assert DIX_BASE + 1 in legal and DIX_BASE not in legal and DRAW in legal
    state.apply(DIX_BASE + 1)
    assert state.turn_up == parse_card("9H#1")
    assert state.hands[0] >> parse_card("AH") & 1
    assert state.known[0] >> parse_card("AH") & 1  # the opponent saw it go into the hand
    assert state.hand_points[0] == dix_points
    state.apply(meld_id("AH TH KH QH JH"))  # the exchanged ace completes a flush
    assert state.hand_points[0] == dix_points + 150
    assert state.phase == PHASE_STOCK


def test_second_dix_is_shown_only_when_it_scores() -> None:
    for dix_points, offered in ((0, False), (10, True)):
        state = position("9H KS", "9S", "9H#1", {"dix_points": dix_points})
        state = meld_turn(state, 0)
        assert (DIX_BASE in state.legal_actions()) == offered
        if offered:
            state.apply(DIX_BASE)
            assert state.hand_points[0] == 10
            assert state.turn_up == parse_card("9H#1")


def test_turn_up_is_drawn_last_by_the_loser_of_trick_12_then_phase_2() -> None:
    game = make_game("pinochle", 2, {"declare_out": "disabled", "dix_points": 10})
    for seed in range(20):
        state = game.new_state(seed)
        assert isinstance(state, PinochleState)
        rng = random.Random(seed)
        while state.phase != PHASE_NO_STOCK:
            face_up, last_face_down = state.turn_up, state.stock[-1]
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        assert len(state.completed) == 12 and state.stock_pos == len(state.stock) == 23
        winner = state.completed[-1].winner
        assert state.hands[1 - winner] >> face_up & 1 and state.known[1 - winner] >> face_up & 1
        assert state.hands[winner] >> last_face_down & 1
        assert state.hands[0].bit_count() == state.hands[1].bit_count() == 12
        assert state.tabled == [0, 0] and state.turn_up == -1  # melds back into the hands
        assert state.to_act == winner and not state.observe(winner).meld_options
        assert not [a for a in state.legal_actions() if a >= MELD_BASE]  # no melds in phase 2


# -- deal --------------------------------------------------------------------------------------


def test_deal_packets_of_four_non_dealer_first_and_turn_up_sets_trump() -> None:
    for seed in range(20):
        state = make_game("pinochle", 2).new_state(seed)
        assert isinstance(state, PinochleState)
        rng = random.Random(seed)
        dealer = rng.randrange(2)
        deck = shuffled_deck(rng)
        assert sorted(deck) == list(range(48))
        assert state.dealer == dealer and state.to_act == 1 - dealer
        nd = mask_of(deck[0:4] + deck[8:12] + deck[16:20])
        assert state.hands[1 - dealer] == nd
        assert state.hands[dealer].bit_count() == 12
        assert state.turn_up == deck[24] and state.trump == deck[24] // 12
        assert state.stock == deck[25:]


@pytest.mark.parametrize(("rank_option", "bonus_rank"), [("10", "T"), ("9", "9")])
def test_turn_up_bonus(rank_option: str, bonus_rank: str) -> None:
    game = make_game("pinochle", 2, {"turnup_bonus_rank": rank_option})
    seen = set()
    for seed in range(400):
        state = game.new_state(seed)
        assert isinstance(state, PinochleState)
        name = state.describe_action(state.turn_up)
        expected = 10 if name[5] == bonus_rank else 0
        assert state.hand_points[state.dealer] == expected
        assert state.hand_points[1 - state.dealer] == 0
        seen.add(expected)
    assert seen == {0, 10}


# -- PIN-E4: hand tally ------------------------------------------------------------------------


def test_e4_hand_tally() -> None:
    for option, dealer_total in (("10", 180), ("9", 170)):
        p1, p2 = 0, 1
        bonus = 10 if option == "10" else 0
        state = last_trick(
            p1,
            {"turnup_bonus_rank": option},
            dealer=p2,
            hand_points=(40 + 150 + 80, 40 + 20 + bonus),
            trick_points=(130, 110),
        )
        assert state.scores == [410, dealer_total]


def test_a_played_out_hand_has_240_card_points_and_a_last_trick() -> None:
    game = make_game("pinochle", 2, {"declare_out": "disabled"})
    for seed in range(30):
        state = game.new_state(seed)
        assert isinstance(state, PinochleState)
        rng = random.Random(seed)
        while state.hand_number == 1:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        result = state.previous_hands[0]
        assert sum(result.card_points) == 240
        assert sorted(result.last_trick) == [0, 10]
        assert result.totals == tuple(
            m + c + last
            for m, c, last in zip(
                result.meld_points, result.card_points, result.last_trick, strict=True
            )
        )
        assert card_points(mask_of(range(48))) == 240


# -- PIN-E5: game end --------------------------------------------------------------------------

E5 = [
    ((1020, 980), 1000, 0, 1000),
    ((1100, 1040), 1000, None, 1250),
    ((1300, 1280), 1250, None, 1500),
    ((1480, 1510), 1500, 1, 1500),
    ((990, 999), 1000, None, 1000),
    ((1300, 1260), 1000, None, 1500),  # both already past 1,250 too ("nesse momento")
    ((1300, 1100), 1000, 0, 1250),  # both reached 1,000; only A has reached 1,250
]


@pytest.mark.parametrize(("scores", "target", "winner", "next_target"), E5)
def test_e5_game_end(
    scores: tuple[int, int], target: int, winner: int | None, next_target: int
) -> None:
    assert settle(scores, target) == (winner, next_target)


def test_e5_through_the_engine() -> None:
    state = last_trick(0, scores=(1100 - 10, 1040), hand_points=(0, 0), trick_points=(0, 0))
    assert state.target == 1250 and not state.is_terminal() and state.hand_number == 2
    state = last_trick(
        1, scores=(1480, 1510 - 10), target=1500, hand_points=(0, 0), trick_points=(0, 0)
    )
    assert state.is_terminal()
    assert state.outcome().ranks == (2, 1) and state.outcome().scores == (1480, 1510)


# -- PIN-E6: phase-2 legality (trumps ♥) -------------------------------------------------------

E6 = [
    ("KC", "TC JC AH", "standard", "TC JC"),
    ("KC", "TC JC AH", "must_head", "TC"),
    ("KC", "TC JC AH", "free", "TC JC AH"),
    ("QH", "KH 9H AS", "standard", "KH"),
    ("QH", "KH 9H AS", "must_head", "KH"),
    ("AS", "9H KD", "standard", "9H"),
    ("AS", "9H KD", "must_head", "9H"),
    ("AH", "KH 9H AS", "standard", "KH 9H"),  # cannot beat the trump lead: any trump
    ("AS", "KD QC", "standard", "KD QC"),  # neither suit nor trump: anything
    ("TS", "AS KS", "must_head", "AS"),
    ("TS", "AS#1", "standard", "AS#1"),
]


@pytest.mark.parametrize(("lead", "hand", "rule", "legal"), E6)
def test_e6_phase2_legality(lead: str, hand: str, rule: str, legal: str) -> None:
    hearts = SUITS.index("H")
    got = legal_follow_mask(mask_of(cards(hand)), parse_card(lead), hearts, rule)
    assert got == mask_of(cards(legal))


def test_e6_through_the_engine_and_phase_1_has_no_obligation() -> None:
    state = position("KC", "TC JC AH", "9H")
    state.apply(parse_card("KC"))
    assert set(state.legal_actions()) == set(cards("TC JC AH"))  # phase 1: anything
    state = phase2("KC", "TC JC AH", "9H")
    assert state.phase == PHASE_NO_STOCK
    state.apply(parse_card("KC"))
    assert set(state.legal_actions()) == set(cards("TC JC"))
    with pytest.raises(IllegalActionError):
        state.apply(parse_card("AH"))


# -- tabled cards ------------------------------------------------------------------------------


def test_tabled_cards_may_be_played_and_are_public() -> None:
    state = position("KS QS 9C", "9D", "9H#1")
    state = meld_turn(state, 0)
    state.apply(meld_id("KS QS"))
    assert parse_card("KS") in state.legal_actions()
    assert parse_card("KS") not in state.private_cards(0)
    assert parse_card("KS") in state.public_cards()
    king = parse_card("KS")
    obs = state.observe(1)
    assert obs.table.seats[0].tabled >> king & 1 and not obs.hand >> king & 1
    state.apply(parse_card("KS"))
    assert not state.tabled[0] >> parse_card("KS") & 1
    check_card_conservation(state)


# -- declaring out (D-PIN-3) -------------------------------------------------------------------


def _declare_position(rule: str, scores: list[int], points: list[int]) -> PinochleState:
    return position(
        "KS 9C",
        "9D QD",
        "9H#1",
        {"declare_out": rule},
        scores=(scores[0], scores[1]),
        hand_points=(points[0], points[1]),
    )


def test_declare_out_right_wins() -> None:
    state = _declare_position("standard", [900, 950], [110, 0])
    assert DECLARE_OUT in state.legal_actions()
    state.apply(DECLARE_OUT)
    assert state.is_terminal()
    assert state.outcome().ranks == (1, 2)
    assert state.outcome().scores == (1010, 950)


def test_declare_out_wrong_loses() -> None:
    state = _declare_position("standard", [900, 700], [90, 0])
    state.apply(DECLARE_OUT)
    assert state.outcome().ranks == (2, 1)
    assert state.outcome().scores == (0, 700)


def test_declare_out_literal_and_disabled() -> None:
    state = _declare_position("literal", [900, 950], [30, 0])
    state.apply(DECLARE_OUT)  # nobody reached 1,000: the higher tally wins
    assert state.outcome().ranks == (2, 1) and state.outcome().scores == (930, 950)
    state = _declare_position("literal", [990, 500], [20, 0])
    state.apply(DECLARE_OUT)
    assert state.outcome().ranks == (1, 2)
    state = _declare_position("disabled", [900, 950], [110, 0])
    assert DECLARE_OUT not in state.legal_actions()


# -- whole games, views, the wire --------------------------------------------------------------

OPTION_SETS = [
    {"declare_out": "disabled"},
    {"declare_out": "disabled", "phase2_rule": "must_head", "dix_points": 10},
    {"declare_out": "disabled", "phase2_rule": "free", "turnup_bonus_rank": "9"},
    {},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_whole_random_games_keep_the_invariants(options: dict[str, object]) -> None:
    game = make_game("pinochle", 2, options)
    for seed in range(40):
        state, _ = random_playout(game, seed)
        outcome = state.outcome()
        assert sorted(outcome.ranks) == [1, 2]
        assert outcome.scores == state.scores_so_far()
        assert isinstance(state, PinochleState)
        if options.get("declare_out") == "disabled":
            winner = outcome.ranks.index(1)
            assert outcome.scores[winner] >= state.target > outcome.scores[1 - winner]


def test_views_hide_the_other_hand_and_the_stock_in_whole_games() -> None:
    game = make_game("pinochle", 2, {"declare_out": "disabled", "dix_points": 10})
    for seed in range(3):
        state = game.new_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            check_card_conservation(state)
            check_observations(game, state)
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])


def test_codec_round_trip_and_meld_options() -> None:
    game = make_game("pinochle", 2)
    codec = codec_for(game)
    for action in range(DECLARE_OUT + 1):
        assert codec.decode_action(codec.encode_action(action)) == action
    state = position("KH QH KS QS", "9C", "9H#1")
    state.observe(0)  # a table to be dropped by the meld turn
    state = meld_turn(state, 0)
    message = codec.observation(state.observe(0)).pinochle
    assert message.phase == pinochle_pb2.PINOCHLE_PHASE_MELD
    assert [(m.type, m.points) for m in message.meld_options] == [
        (pinochle_pb2.PINOCHLE_MELD_TYPE_ROYAL_MARRIAGE, 40),
        (pinochle_pb2.PINOCHLE_MELD_TYPE_MARRIAGE, 20),
    ]
    melds = [a for a in state.legal_actions() if MELD_BASE <= a < DIX_BASE]
    assert [codec.encode_action(a).pinochle.meld.cards for a in melds] == [
        m.cards for m in message.meld_options
    ]
    assert not codec.observation(state.observe(1)).pinochle.meld_options
    bad = game_pb2.Action(
        pinochle=pinochle_pb2.PinochleAction(
            meld=pinochle_pb2.PinochleMeldAction(cards=[codec.card(0), codec.card(2)])
        )
    )
    with pytest.raises(MalformedActionError):
        codec.decode_action(bad)


def test_cards_of_and_identity() -> None:
    assert cards_of(mask_of([0, 47, 13])) == (0, 13, 47)
    assert len({parse_card(f"{r}{s}#{c}") for r in "9JQKTA" for s in SUITS for c in "01"}) == 48


def test_legal_melds_match_the_brute_force_definition() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        hand = mask_of(rng.sample(range(48), rng.randrange(8, 20)))
        tabled = hand & mask_of(rng.sample(range(48), 24))
        usage = [rng.choice((0, 0, 20, 40, 60, 150)) for _ in range(144)]
        trump = rng.randrange(4)
        expected = tuple(
            m for m in range(len(MELDS)) if meld_is_legal(m, hand, tabled, usage, trump)
        )
        assert legal_melds(hand, tabled, usage, trump) == expected
        assert (not tabled and bool(expected)) == (not tabled and may_meld(hand))


# -- the quick meld tests behind the meld turn -------------------------------------------------


def test_held_families_flags_match_the_meld_table() -> None:
    rng = random.Random(11)
    families = {
        HOLDS_MARRIAGE: range(0, 16),  # a flush holds a royal marriage: no flag of its own
        HOLDS_PINOCHLE: range(144, 148),
        HOLDS_FOURS: range(148, 212),
    }
    for _ in range(3000):
        hand = mask_of(rng.sample(range(48), rng.randrange(6, 20)))
        held = held_families(hand)
        for flag, melds in families.items():
            assert bool(held & flag) == any(a - MELD_BASE in melds for a in legal_melds_of(hand))
        for trump in range(4):
            assert may_meld(hand) == bool(held_meld_actions(hand, trump))


def legal_melds_of(hand: int) -> tuple[int, ...]:
    """Every meld action ``hand`` holds, flushes of every suit included (no tabled cards)."""
    return tuple(sorted({a for trump in range(4) for a in held_meld_actions(hand, trump)}))


def _random_meld_history(
    rng: random.Random, hand: int, tabled: int, trump: int
) -> tuple[list[int], list[int]]:
    """``used`` masks and the ``usage`` table of the same (possible) meld history."""
    used = [0, 0, 0, 0]
    usage = [0] * 144
    four_points = {ACE: 100, KING: 80, QUEEN: 60, JACK: 40}
    for card in cards_of(tabled):
        suit, rank = card // 12, (card >> 1) % 6
        if suit == trump and rank != NINE and rng.random() < 0.3:
            used[USED_FLUSH] |= 1 << card
            used[USED_MARRIAGE] |= 1 << card
            usage[3 * card] = 150
        elif rank in (KING, QUEEN) and rng.random() < 0.5:
            used[USED_MARRIAGE] |= 1 << card
            usage[3 * card] = 40 if suit == trump else 20
        if rank in four_points and rng.random() < 0.4:
            used[USED_FOURS] |= 1 << card
            usage[3 * card + 1] = four_points[rank]
        if card >> 1 in (parse_card("QS") >> 1, parse_card("JD") >> 1) and rng.random() < 0.5:
            used[USED_PINOCHLE] |= 1 << card
            usage[3 * card + 2] = 40
    return used, usage


def test_reuse_masks_match_meld_is_legal() -> None:
    """``allowed_melds`` and ``any_meld_allowed`` (four masks) agree with the per-card table."""
    rng = random.Random(7)
    for _ in range(6000):
        hand = mask_of(rng.sample(range(48), rng.randrange(8, 20)))
        tabled = hand & mask_of(rng.sample(range(48), rng.randrange(4, 30)))
        trump = rng.randrange(4)
        used, usage = _random_meld_history(rng, hand, tabled, trump)
        expected = tuple(MELD_BASE + m for m in legal_melds(hand, tabled, usage, trump))
        assert allowed_melds(held_meld_actions(hand, trump), tabled, used) == expected
        held = held_families(hand)
        assert any_meld_allowed(hand, tabled, used, trump, held) == bool(expected)


def test_meld_turns_of_random_games_offer_exactly_the_legal_melds() -> None:
    """Whole games: every meld turn opens iff a meld or the dix is legal, and offers them all."""
    game = make_game("pinochle", 2, {"declare_out": "disabled", "dix_points": 10})
    opened = 0
    for seed in range(40):
        state = game.new_state(seed)
        assert isinstance(state, PinochleState)
        rng = random.Random(seed)
        while not state.is_terminal():
            usage = [0] * 144
            for meld in state.melds:
                for card in meld.cards:
                    slot = 3 * card + MELD_CLASS[meld.kind]
                    usage[slot] = max(usage[slot], meld.points)
            seat = state.current_seat()
            melds = legal_melds(state.hands[seat], state.tabled[seat], usage, state.trump)
            legal = state.legal_actions()
            if state.phase == PHASE_MELD and not state._melded:
                opened += 1
                assert [a - MELD_BASE for a in legal if a < DIX_BASE] == list(melds)
                assert melds or any(DIX_BASE <= a < DRAW for a in legal)
            state.apply(legal[rng.randrange(len(legal))])
    assert opened > 100


def test_the_table_is_shared_until_something_public_changes() -> None:
    """The view keeps the table while ``table_changes`` stands: leading an unseen card keeps
    it (only ``current_trick`` changes), the end of the trick makes a new one."""
    state = position("AC KD QD", "9H 9S JS", "TH")
    table = state.observe(0).table
    assert state.observe(1).table is table
    state.apply(parse_card("AC"))
    led = state.observe(1)
    assert led.table is table and led.current_trick == (parse_card("AC"),)
    assert led.legal_cards == mask_of(cards("9H 9S JS"))  # phase 1: any card
    assert state.observe(0).legal_cards == 0  # not its turn
    state.apply(parse_card("9H"))
    after = state.observe(1)
    assert after.table is not table and after.table.completed_tricks == state.completed
    assert after == state.copy().observe(1)  # a copy builds it afresh
