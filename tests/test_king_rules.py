"""King rules: the worked examples of docs/games/king.md as table-driven tests, plus rule checks."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import pytest

from cardarena.game.v1 import game_pb2, king_pb2
from referee.games.api import IllegalActionError, InvalidOptionsError, OptionValue
from referee.games.cards import StandardDeck
from referee.games.king import (
    ACCEPT,
    KING_OF_HEARTS,
    MATCH_BASE,
    NEGATIVE_HAND_TOTALS,
    NO_HEARTS,
    NO_KING_OF_HEARTS,
    NO_KINGS_OR_JACKS,
    NO_LAST_TWO_TRICKS,
    NO_QUEENS,
    NO_TRICKS,
    NUM_ACTIONS,
    OFFER_BASE,
    OPT_OUT,
    PASS,
    PHASE_AUCTION,
    PHASE_COMPETITION,
    PHASE_DECISION,
    PHASE_PLAY,
    PHASE_TRUMP,
    POSITIVE,
    POSITIVE_HAND_TOTAL,
    REFUSE,
    TRUMP_BASE,
    KingPosition,
    KingState,
    contract_of_hand,
    negative_points,
    opt_out_points,
    positive_points,
    trick_winner,
)
from referee.games.registry import codec_for, make_game

C = StandardDeck.parse
SPADES, HEARTS, DIAMONDS, CLUBS = 3, 2, 1, 0


def new_game(seed: int = 0, /, **options: object) -> KingState:
    state = make_game("king", 4, options).new_state(seed)
    assert isinstance(state, KingState)
    return state


def offer(k: int) -> int:
    return OFFER_BASE + k


def match(k: int) -> int:
    return MATCH_BASE + k


def trump(suit: int) -> int:
    return TRUMP_BASE + suit


def mask(cards: Iterable[str]) -> int:
    return sum(1 << C(card) for card in cards)


def held(state: KingState, seat: int) -> tuple[int, ...]:
    """The cards ``seat`` holds, ascending (the order of ``legal_actions``)."""
    return state.observe(seat).hand


def deal(
    fixed: dict[int, list[str]],
    voids: dict[int, set[int]] | None = None,
    on_table: tuple[int, ...] = (),
    dealer: int = 0,
) -> tuple[tuple[int, ...], ...]:
    """Hands of each seat's ``fixed`` cards plus filler (never of a suit listed in ``voids``),
    13 cards each but for those who played the cards ``on_table`` (from the ``dealer``)."""
    voids = voids or {}
    hands = [[C(card) for card in fixed.get(seat, [])] for seat in range(4)]
    size = [13 - (0 <= (seat - dealer) % 4 < len(on_table)) for seat in range(4)]
    used = {*on_table, *(card for hand in hands for card in hand)}
    rest = [c for c in range(52) if c not in used]
    order = sorted(range(4), key=lambda seat: -len(voids.get(seat, set())))
    for seat in order:
        while len(hands[seat]) < size[seat]:
            card = next(c for c in rest if c // 13 not in voids.get(seat, set()))
            rest.remove(card)
            hands[seat].append(card)
    assert not rest
    return tuple(tuple(sorted(hand)) for hand in hands)


def rig_hand(
    hand_number: int,
    dealer: int,
    fixed: dict[int, list[str]],
    *,
    voids: dict[int, set[int]] | None = None,
    trick: Iterable[str] = (),
    calls: tuple[tuple[int, int], ...] = (),
    options: Mapping[str, OptionValue] | None = None,
) -> KingState:
    """A state in hand ``hand_number`` dealt by ``dealer`` (each seat holding its ``fixed``
    cards plus filler, never of a suit listed in ``voids``), after the auction's ``calls``,
    with the cards of ``trick`` played from the dealer."""
    current = tuple(C(card) for card in trick)
    position = KingPosition(
        hands=deal(fixed, voids, current, dealer),
        hand_number=hand_number,
        dealer=dealer,
        calls=calls,
        current_trick=current,
        options=options or {},
    )
    return position.state()


def play(state: KingState, *cards: str) -> None:
    for card in cards:
        state.apply(C(card))


# -- KING-E1: totals ------------------------------------------------------------------------------


def test_e1_seed_totals() -> None:
    assert [NEGATIVE_HAND_TOTALS[c] for c in range(1, 7)] == [-260, -260, -240, -200, -160, -180]
    assert sum(NEGATIVE_HAND_TOTALS.values()) == -1300
    assert POSITIVE_HAND_TOTAL == 325
    assert 4 * POSITIVE_HAND_TOTAL == 1300


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"auction": "simplified"},
        {"trump_lead_restricted": True},
        {"stop_when_penalties_exhausted": True},
    ],
)
def test_e1_every_game_keeps_the_seed_totals(options: dict[str, object]) -> None:
    for seed in range(60):
        state = new_game(seed, **options)
        rng = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        hands = state.previous_hands
        assert [h.contract for h in hands] == [1, 2, 3, 4, 5, 6, 7, 7, 7, 7]
        for hand in hands[:6]:
            assert sum(hand.points) == NEGATIVE_HAND_TOTALS[hand.contract]
        for hand in hands[6:]:
            assert sum(hand.points) == POSITIVE_HAND_TOTAL
        assert sum(state.negative_totals) == -1300
        assert sum(state.positive_totals) == 1300
        assert sum(state.outcome().scores) == 0


# -- KING-E2: hand 3 ------------------------------------------------------------------------------


def test_e2_kings_and_jacks() -> None:
    state = rig_hand(
        NO_KINGS_OR_JACKS,
        dealer=0,
        fixed={0: ["5S", "QD"], 1: ["KS", "JH"], 2: ["JS", "3D"], 3: ["AS", "2D"]},
        voids={1: {DIAMONDS}},
    )
    play(state, "5S", "KS", "JS", "AS")
    assert state.completed_tricks[-1][2] == 3
    assert state.hand_points_so_far() == (0, 0, 0, -60)
    assert state.current_seat() == 3
    play(state, "2D", "QD", "JH", "3D")
    assert state.completed_tricks[-1][2] == 0
    assert state.hand_points_so_far() == (-30, 0, 0, -60)


# -- KING-E3: hand 5 legality ---------------------------------------------------------------------


ALL_HEARTS = [StandardDeck.name(card) for card in range(26, 39)]


@pytest.mark.parametrize(
    ("holding", "voids", "trick", "legal"),
    [
        (["KH", "4H", "3S"], {DIAMONDS}, ["5D"], ["KH"]),  # void: the K♥ at the first chance
        (["KH", "4H", "3S"], {HEARTS}, ["5H"], ["4H", "KH"]),  # hearts led: any heart
        (["KH", "4H", "3S"], {CLUBS, DIAMONDS, SPADES}, [], ["3S"]),  # no heart lead but...
        (ALL_HEARTS, set(), [], ALL_HEARTS),  # ...with nothing but hearts
        (["KH", "4H", "3S"], {SPADES}, ["5S"], ["3S"]),  # the led suit first
    ],
)
def test_e3_king_of_hearts_hand(
    holding: list[str], voids: set[int], trick: list[str], legal: list[str]
) -> None:
    seat = len(trick)  # the dealer, seat 0, led
    state = rig_hand(NO_KING_OF_HEARTS, 0, fixed={seat: holding}, voids={seat: voids}, trick=trick)
    assert state.current_seat() == seat
    assert sorted(state.legal_actions()) == sorted(C(card) for card in legal)


def test_e3_taker_of_the_king_of_hearts_loses_160() -> None:
    state = rig_hand(
        NO_KING_OF_HEARTS,
        dealer=1,
        fixed={1: ["2D"], 2: ["KH"], 3: ["AD"], 0: ["3D"]},
        voids={2: {DIAMONDS}},
    )
    assert state.legal_actions() != (C("2D"),)  # the leader may lead any non-heart
    state.apply(C("2D"))
    assert state.legal_actions() == (KING_OF_HEARTS,)
    with pytest.raises(IllegalActionError):
        state.apply(next(c for c in range(52) if (state.hands[2] >> c) & 1 and c != C("KH")))
    play(state, "KH", "AD", "3D")
    assert state.hand_points_so_far() == (0, 0, 0, -160)


# -- KING-E4: hand 6 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        ((1, 3), (0, -90, 0, -90)),
        ((2, 2), (0, 0, -180, 0)),
        ((0, 1), (-90, -90, 0, 0)),
    ],
)
def test_e4_last_two_tricks(winners: tuple[int, int], expected: tuple[int, ...]) -> None:
    for seed in range(1000):  # random deals and play until one gives the last two tricks so
        rng = random.Random(seed)
        deck = rng.sample(range(52), 52)
        hands = tuple(tuple(sorted(deck[seat::4])) for seat in range(4))
        state = KingPosition(hands=hands, hand_number=NO_LAST_TWO_TRICKS).state()
        while len(state.completed_tricks) < 12:
            if len(state.completed_tricks) == 11:
                assert state.hand_points_so_far() == (0, 0, 0, 0)  # tricks 1-11 score nothing
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        twelfth, before = state.completed_tricks[-1][2], list(state.tricks_won)
        while state.hand_number == NO_LAST_TWO_TRICKS:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        hand = state.previous_hands[-1]
        last = next(seat for seat in range(4) if hand.tricks[seat] > before[seat])
        if (twelfth, last) == winners:
            assert hand.points == expected
            break
    else:
        pytest.fail(f"no playout gave tricks 12 and 13 to {winners}")
    assert negative_points(NO_LAST_TWO_TRICKS, 0, 13, True, True) == -180


# -- KING-E5: the auction -------------------------------------------------------------------------


def positive_hand(dealer: int = 0, **options: OptionValue) -> KingState:
    return rig_hand(POSITIVE, dealer, fixed={}, options=options)


def test_e5_auction_accept_then_competition() -> None:
    a, b, c, d = 0, 1, 2, 3
    state = positive_hand(dealer=a)
    assert (state.phase, state.current_seat()) == (PHASE_AUCTION, b)
    steps = [
        (b, PASS, PHASE_AUCTION),
        (c, offer(2), PHASE_AUCTION),
        (d, offer(3), PHASE_DECISION),
        (a, ACCEPT, PHASE_COMPETITION),
        (b, match(3), PHASE_COMPETITION),  # "pela mão": B has priority over D
        (c, offer(4), PHASE_COMPETITION),  # C must exceed B
        (d, PASS, PHASE_COMPETITION),
        (b, match(4), PHASE_COMPETITION),
        (c, PASS, PHASE_COMPETITION),
        (d, PASS, PHASE_TRUMP),
    ]
    for seat, action, phase_after in steps:
        assert state.current_seat() == seat
        assert action in state.legal_actions()
        if seat == c and action == offer(4):
            assert match(3) not in state.legal_actions()  # C has no priority over B
            assert offer(3) not in state.legal_actions()
        state.apply(action)
        assert state.phase == phase_after
    assert (state.buyer, state.price, state.current_seat()) == (b, 4, b)
    assert state.legal_actions() == tuple(trump(s) for s in range(4))
    state.apply(trump(SPADES))
    assert (state.phase, state.trump, state.current_seat()) == (PHASE_PLAY, SPADES, a)
    assert positive_points((3, 6, 2, 2), dealer=a, buyer=b, price=4) == (175, 50, 50, 50)


def test_e5_auction_played_through_pays_the_dealer() -> None:
    state = positive_hand(dealer=2)
    for action in (PASS, offer(2), offer(3), ACCEPT, match(3), offer(4), PASS, match(4), PASS):
        state.apply(action)
    state.apply(PASS)
    state.apply(trump(SPADES))
    rng = random.Random(5)
    while state.hand_number == 7:
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    hand = state.previous_hands[-1]
    assert (hand.buyer, hand.price, hand.trump, hand.dealer) == (3, 4, SPADES, 2)
    raw = [25 * t for t in hand.tricks]
    assert hand.points == (raw[0], raw[1], raw[2] + 100, raw[3] - 100)


def test_e5_refusals_raise_the_floor_and_force_the_dealer_to_play() -> None:
    a, b, c, d = 0, 1, 2, 3
    state = positive_hand(dealer=a)
    for action in (PASS, offer(2), offer(3)):
        state.apply(action)
    state.apply(REFUSE)
    assert (state.phase, state.current_seat(), state.minimum_offer) == (PHASE_AUCTION, b, 4)
    assert state.legal_actions() == (PASS, *(offer(k) for k in range(4, 14)))
    state.apply(offer(4))
    state.apply(PASS)
    assert state.current_seat() == d
    assert offer(4) not in state.legal_actions() and match(4) not in state.legal_actions()
    state.apply(offer(5))
    assert state.current_seat() == a
    assert state.legal_actions() == (ACCEPT, REFUSE)  # offers above 1: no opt-out
    state.apply(REFUSE)
    assert state.minimum_offer == 6
    for _ in (b, c, d):
        state.apply(PASS)
    assert (state.phase, state.current_seat()) == (PHASE_TRUMP, a)
    assert state.legal_actions() == tuple(trump(s) for s in range(4))
    state.apply(trump(HEARTS))
    assert state.buyer == -1 and state.current_seat() == a


# -- KING-E6: opt-out -----------------------------------------------------------------------------


def test_e6_opt_out() -> None:
    state = positive_hand(dealer=0)
    state.apply(offer(1))
    state.apply(PASS)
    state.apply(PASS)
    assert state.legal_actions() == (ACCEPT, REFUSE, OPT_OUT)
    state.apply(OPT_OUT)
    hand = state.previous_hands[-1]
    assert hand.opted_out and hand.tricks == (0, 0, 0, 0)
    assert hand.points == (100, 75, 75, 75) == opt_out_points(0)
    assert state.hand_number == 8 and state.positive_totals == [100, 75, 75, 75]


def test_e6_opt_out_when_nobody_offers() -> None:
    state = positive_hand(dealer=2)
    for _ in range(3):
        state.apply(PASS)
    assert (state.phase, state.current_seat()) == (PHASE_TRUMP, 2)
    assert state.legal_actions() == (*(trump(s) for s in range(4)), OPT_OUT)


# -- KING-E7: the buyer goes negative -------------------------------------------------------------


def test_e7_buyer_goes_negative() -> None:
    # dealer A = 0; D = 3 buys at 5 and takes 3 tricks; A takes 4.
    points = positive_points((4, 3, 3, 3), dealer=0, buyer=3, price=5)
    assert points[3] == 75 - 125 == -50
    assert points[0] == 25 * 4 + 125
    assert sum(points) == 325


# -- KING-E8: final balances ----------------------------------------------------------------------


def test_e8_final_balances() -> None:
    position = KingPosition(
        hands=deal({}),
        negative_totals=(-300, -420, -260, -320),
        positive_totals=(350, 300, 325, 325),
    )
    outcome = position.state().outcome()
    assert outcome.scores == (50, -120, 65, 5)
    assert sum(outcome.scores) == 0
    assert outcome.ranks == (2, 4, 1, 3)


def test_equal_balances_share_a_rank() -> None:
    position = KingPosition(
        hands=deal({}),
        negative_totals=(-300, -300, -400, -300),
        positive_totals=(350, 350, 300, 300),
    )
    assert position.state().outcome().ranks == (1, 1, 4, 3)


# -- other rules ----------------------------------------------------------------------------------


def test_deal_rotation_and_leader() -> None:
    state = new_game(7)
    d0 = state.dealer
    rng = random.Random(7)
    seen: list[tuple[int, int]] = []
    while not state.is_terminal():
        if not seen or seen[-1][0] != state.hand_number:
            seen.append((state.hand_number, state.dealer))
            assert [h.bit_count() for h in state.hands] == [13] * 4
            assert state.trick_leader == state.dealer
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    assert [dealer for _, dealer in seen] == [(d0 + h) % 4 for h in range(10)]
    assert sorted(dealer for hand, dealer in seen if hand >= 7) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("contract", "taken", "tricks", "points"),
    [
        (NO_TRICKS, [], 3, -60),
        (NO_HEARTS, ["2H", "AH", "KS"], 1, -40),
        (NO_KINGS_OR_JACKS, ["KS", "JH", "QD"], 1, -60),
        (NO_QUEENS, ["QS", "QH", "KH"], 1, -100),
        (NO_KING_OF_HEARTS, ["KH", "QH"], 1, -160),
        (NO_KING_OF_HEARTS, ["AH", "QH"], 1, 0),
    ],
)
def test_negative_penalties(contract: int, taken: list[str], tricks: int, points: int) -> None:
    assert negative_points(contract, mask(taken), tricks, False, False) == points


def test_hearts_lead_restricted_in_hand_2_but_discard_free() -> None:
    only_hearts = {CLUBS, DIAMONDS, SPADES}
    state = rig_hand(NO_HEARTS, 0, fixed={0: ["2H", "AH", "3C"]}, voids={0: only_hearts})
    assert state.legal_actions() == (C("3C"),)
    state = rig_hand(NO_HEARTS, 0, fixed={0: ALL_HEARTS})
    assert state.legal_actions() == held(state, 0)
    state = rig_hand(NO_HEARTS, 0, fixed={1: ["2S", "AH", "3D"]}, voids={1: {CLUBS}}, trick=["4C"])
    assert state.current_seat() == 1
    assert state.legal_actions() == held(state, 1)  # void in clubs: any card, hearts too


@pytest.mark.parametrize(
    ("cards", "trump_suit", "winner"),
    [
        (["5S", "KS", "2D", "AS"], DIAMONDS, 2),
        (["5S", "KS", "AC", "9S"], DIAMONDS, 1),
        (["5S", "6D", "QD", "AS"], DIAMONDS, 2),
        (["5S", "6D", "QD", "AS"], -1, 3),
        (["2H", "AH", "KH", "3C"], -1, 1),
    ],
)
def test_trick_winner(cards: list[str], trump_suit: int, winner: int) -> None:
    assert trick_winner([C(c) for c in cards], trump_suit) == winner


NO_SALE_SPADES = ((1, PASS), (2, PASS), (3, PASS), (0, TRUMP_BASE + SPADES))
"""A positive hand's auction, dealer 0: nobody offers, the dealer names spades."""


def test_positive_void_player_need_not_trump_and_trumps_may_be_led() -> None:
    state = rig_hand(POSITIVE, 0, fixed={0: ["2S", "3C"]}, calls=NO_SALE_SPADES)
    assert state.trump == SPADES and state.legal_actions() == held(state, 0)
    state = rig_hand(
        POSITIVE,
        0,
        fixed={1: ["2S", "3D"]},
        voids={1: {CLUBS}},
        trick=["4C"],
        calls=NO_SALE_SPADES,
    )
    assert state.current_seat() == 1
    assert state.legal_actions() == held(state, 1)  # neither a duty to trump nor not to


def test_trump_lead_restricted_option() -> None:
    restricted = {"trump_lead_restricted": True}
    state = rig_hand(POSITIVE, 0, fixed={0: ["2S", "3C"]}, calls=NO_SALE_SPADES, options=restricted)
    hand = held(state, 0)
    assert C("3C") in state.legal_actions()
    assert state.legal_actions() == tuple(card for card in hand if card // 13 != SPADES)
    all_spades = [StandardDeck.name(card) for card in range(39, 52)]
    state = rig_hand(POSITIVE, 0, fixed={0: all_spades}, calls=NO_SALE_SPADES, options=restricted)
    assert state.legal_actions() == held(state, 0)


def test_simplified_auction() -> None:
    state = positive_hand(dealer=0, auction="simplified")
    state.apply(offer(1))
    state.apply(offer(2))
    assert offer(2) not in state.legal_actions() and match(2) not in state.legal_actions()
    state.apply(PASS)
    assert state.legal_actions() == (ACCEPT, REFUSE)  # no opt-out in the simplified auction
    state.apply(REFUSE)
    assert (state.phase, state.current_seat()) == (PHASE_TRUMP, 0)
    assert OPT_OUT not in state.legal_actions()
    state = positive_hand(dealer=0, auction="simplified")
    for action in (PASS, offer(3), PASS, ACCEPT):
        state.apply(action)
    assert (state.buyer, state.price, state.current_seat()) == (2, 3, 2)


def test_stop_when_penalties_exhausted_gives_the_same_scores() -> None:
    for seed in range(20):
        plain, early = new_game(seed), new_game(seed, stop_when_penalties_exhausted=True)
        rng = random.Random(seed)
        while not early.is_terminal() and early.hand_number <= 6:
            legal = early.legal_actions()
            action = legal[rng.randrange(len(legal))]
            early.apply(action)
            plain.apply(action)
            if early.hand_number != plain.hand_number:  # early stopped: finish plain's hand
                while plain.hand_number == early.hand_number - 1:
                    plain.apply(plain.legal_actions()[0])
                assert plain.previous_hands[-1].points == early.previous_hands[-1].points
        assert [h.contract for h in early.previous_hands][:6] == [1, 2, 3, 4, 5, 6]


def test_hand_5_stops_early_when_the_king_of_hearts_is_taken() -> None:
    state = rig_hand(
        NO_KING_OF_HEARTS,
        dealer=1,
        fixed={1: ["2D"], 2: ["KH"], 3: ["AD"], 0: ["3D"]},
        voids={2: {DIAMONDS}},
        options={"stop_when_penalties_exhausted": True},
    )
    play(state, "2D", "KH", "AD", "3D")
    assert state.hand_number == 6
    assert state.previous_hands[-1].points == (0, 0, 0, -160)


def test_illegal_actions_raise() -> None:
    state = new_game()
    for action in (-1, 52, OFFER_BASE + 1, ACCEPT, trump(0), NUM_ACTIONS, 10_000):
        with pytest.raises(IllegalActionError):
            state.apply(action)
    not_mine = next(c for c in range(52) if not (state.hands[state.to_act] >> c) & 1)
    with pytest.raises(IllegalActionError):
        state.apply(not_mine)


def test_options_are_named_with_the_reference_defaults() -> None:
    game = make_game("king", 4)
    assert game.options == {
        "auction": "full",
        "trump_lead_restricted": False,
        "stop_when_penalties_exhausted": False,
    }
    with pytest.raises(InvalidOptionsError):
        make_game("king", 4, {"auction": "open"})
    with pytest.raises(InvalidOptionsError):
        make_game("king", 3)


def test_codec_round_trips_every_action_and_shows_the_auction() -> None:
    game = make_game("king", 4)
    codec = codec_for(game)
    for action in range(NUM_ACTIONS):
        assert codec.decode_action(codec.encode_action(action)) == action
    state = positive_hand(dealer=0)
    for action in (PASS, offer(2), offer(3), ACCEPT, match(3)):
        state.apply(action)
    wire = codec.observation(state.observe(2)).king
    assert wire.contract == king_pb2.KING_CONTRACT_POSITIVE
    assert wire.phase == king_pb2.KING_PHASE_COMPETITION
    assert [(c.seat, c.WhichOneof("call")) for c in wire.auction.calls] == [
        (1, "bid"),
        (2, "bid"),
        (3, "bid"),
        (0, "answer"),
        (1, "bid"),
    ]
    assert wire.auction.calls[-1].bid.kind == king_pb2.KING_BID_KIND_MATCH
    assert (wire.auction.best_offer, wire.auction.best_bidder) == (3, 1)
    assert wire.auction.accepted and not wire.auction.HasField("buyer")
    assert len(wire.hand) == 13 and len(wire.seats) == 4
    assert codec.encode_action(ACCEPT) == game_pb2.Action(
        king=king_pb2.KingAction(answer=king_pb2.KING_ANSWER_ACCEPT)
    )


def test_contract_order() -> None:
    assert [contract_of_hand(h) for h in range(1, 11)] == [1, 2, 3, 4, 5, 6, 7, 7, 7, 7]
    assert POSITIVE == 7 and NO_QUEENS == 4


@pytest.mark.parametrize(
    "options", [{}, {"trump_lead_restricted": True}, {"auction": "simplified"}]
)
def test_apply_accepts_exactly_the_legal_actions(options: dict[str, object]) -> None:
    for seed in range(2):
        state = new_game(seed, **options)
        rng = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            for action in range(-1, NUM_ACTIONS + 1):
                if action in legal:
                    state.copy().apply(action)
                else:
                    with pytest.raises(IllegalActionError):
                        state.apply(action)
            state.apply(legal[rng.randrange(len(legal))])


@pytest.mark.parametrize("options", [{}, {"stop_when_penalties_exhausted": True}])
def test_observed_hand_sizes_count_the_cards_held(options: dict[str, object]) -> None:
    """``cards_in_hand`` comes from sizes the engine keeps beside the hands: they must agree."""
    for seed in range(3):
        state = new_game(seed, **options)
        rng = random.Random(seed)
        while True:
            held = tuple(hand.bit_count() for hand in state.hands)
            for seat in range(4):
                obs = state.observe(seat)
                assert obs.cards_in_hand == held
                assert obs.hand == tuple(c for c in range(52) if state.hands[seat] >> c & 1)
            if state.is_terminal():
                break
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
