"""Klaberjass rules: every worked example (KLAB-E1..E7, docs/games/klaberjass.md) and rule tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from cardarena.game.v1 import cards_pb2, game_pb2, klaberjass_pb2
from referee.codec.base import MalformedActionError
from referee.games.api import IllegalActionError, InvalidPositionError
from referee.games.klaberjass import (
    ACCEPT,
    BELLA_BASE,
    DECLARING,
    DIX,
    EXCHANGE,
    GAME_OVER,
    KEEP,
    NAME_BASE,
    NO_SEQUENCE,
    PASS,
    PLAYING,
    KlaberjassPosition,
    KlaberjassState,
    Run,
    best_sequence,
    card_points,
    game_winner,
    legal_follow_mask,
    parse_card,
    position_of,
    sequences_in,
    settle_hand,
    trick_winner,
)
from referee.games.registry import codec_for, make_game
from tests.conformance import check_card_conservation, check_observations, random_playout

N, D = 0, 1
"""Seats in the examples: N is the non-dealer (elder), D the dealer."""
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


def cards(text: str) -> list[int]:
    return [parse_card(word) for word in text.split()]


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def deck_for(elder: str, dealer: str, turn_up: str) -> list[int]:
    """A deck (top first) that deals these 9 cards to each seat around ``turn_up``."""
    e, d, up = cards(elder), cards(dealer), parse_card(turn_up)
    assert len(e) == len(d) == 9
    rest = [c for c in range(32) if c not in {*e, *d, up}]
    return e[0:3] + d[0:3] + e[3:6] + d[3:6] + [up] + e[6:9] + d[6:9] + rest


# -- KLAB-E1: totals ---------------------------------------------------------------------------


@pytest.mark.parametrize("trump", range(4))
def test_e1_card_points_total_152_and_162_with_the_last_trick(trump: int) -> None:
    assert sum(card_points(c, trump) for c in range(32)) == 152
    trumps = [c for c in range(32) if c // 8 == trump]
    assert sum(card_points(c, trump) for c in trumps) == 62
    for plain in set(range(4)) - {trump}:
        assert sum(card_points(c, trump) for c in range(32) if c // 8 == plain) == 30


# -- KLAB-E2: a complete hand ------------------------------------------------------------------

E2_ELDER = "JH 9H AH AS TS KS 7C 8C 7D"
E2_DEALER = "KH QH 7H QS JS AC KC QC 8D"
E2_TRICKS = [  # (leader's card, follower's card, winner, points)
    ("JH", "8H", N, 20),
    ("9H", "QH", N, 17),
    ("AH", "KH", N, 15),
    ("AS", "JS", N, 13),
    ("TS", "QS", N, 13),
    ("KS", "8D", N, 4),
    ("7D", "QC", N, 3),
    ("7C", "AC", D, 11),
    ("KC", "8C", D, 4),
]


def play_e2(maker: int, bella: bool = True, declare: bool = True) -> KlaberjassState:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), dealer=D)
    if maker == N:
        state.apply(ACCEPT)
    else:
        state.apply(PASS)
        state.apply(ACCEPT)
    assert state.trump == HEARTS and state.maker == maker
    assert state.phase == DIX and state.current_seat() == D
    state.apply(EXCHANGE)
    assert state.hands[D] == mask("KH QH 8H QS JS AC KC QC 8D")
    assert state.hands[N] == mask(E2_ELDER)
    # N has no sequence and is not asked; D may declare A-K-Q of clubs.
    assert state.phase == DECLARING and state.current_seat() == D
    ace_king_queen = Run(CLUBS, 5, 3).action
    assert set(state.legal_actions()) == {NO_SEQUENCE, ace_king_queen}
    state.apply(ace_king_queen if declare else NO_SEQUENCE)
    assert state.phase == PLAYING and state.current_seat() == N
    for lead, follow, winner, points in E2_TRICKS:
        before = state.card_points[winner]
        leader = state.current_seat()
        state.apply(parse_card(lead))
        card = parse_card(follow)
        if follow == "KH":  # D's second of K/Q of trumps: bella may be announced
            assert BELLA_BASE + card in state.legal_actions()
            state.apply(BELLA_BASE + card if bella else card)
        else:
            assert card in state.legal_actions()
            state.apply(card)
        if state.previous_hands:  # the hand is over and the next one dealt
            break
        assert state.completed[-1] == (leader, parse_card(lead), card, winner)
        assert state.card_points[winner] - before == points
    assert len(state.previous_hands) == 1
    return state


@pytest.mark.parametrize(
    ("maker", "bella", "declare", "totals", "points"),
    [
        (N, True, True, (85, 65), (85, 65)),  # N makes: 85 > 65, both score
        (D, True, True, (85, 65), (150, 0)),  # D makes and is bete: N scores both totals
        (D, False, True, (85, 45), (130, 0)),  # ... had D not announced bella
        (D, False, False, (85, 25), (110, 0)),  # ... nor declared the sequence
    ],
)
def test_e2_complete_hand(
    maker: int, bella: bool, declare: bool, totals: tuple[int, int], points: tuple[int, int]
) -> None:
    state = play_e2(maker, bella, declare)
    result = state.previous_hands[-1]
    assert result.maker == maker and result.trump == HEARTS and result.last_trick == D
    assert result.card_points == (85, 25 - 10)
    assert result.sequence_points == (0, 20 if declare else 0)
    assert result.bella == (False, bella)
    assert result.totals == totals
    assert result.points == points
    assert tuple(state.scores) == points
    assert state.dealer == N, "the deal alternates"


def test_e2_trick_by_trick_rules() -> None:
    # Trick 1: trump led, D cannot beat J♥, so any trump; trick 2: K and Q are below the 9.
    hearts = HEARTS
    d_hand = mask("KH QH 8H QS JS AC KC QC 8D")
    assert legal_follow_mask(d_hand, parse_card("JH"), hearts) == mask("KH QH 8H")
    assert trick_winner(parse_card("9H"), parse_card("QH"), hearts) == 0
    # Trick 6 and 7: void and no trumps, any card.
    assert legal_follow_mask(mask("QC 8D"), parse_card("KS"), hearts) == mask("QC 8D")


# -- KLAB-E3: ties and failures ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("maker_total", "opponent_total", "maker_scores", "opponent_scores"),
    [
        (81, 81, 0, 81),  # tie: maker 0, opponent his own
        (70, 142, 0, 212),  # maker 70, opponent 92 + a 50 sequence: opponent scores both
        (85, 65, 85, 65),  # maker ahead: both score
    ],
)
@pytest.mark.parametrize("maker", [N, D])
def test_e3_ties_and_failures(
    maker: int, maker_total: int, opponent_total: int, maker_scores: int, opponent_scores: int
) -> None:
    totals = [0, 0]
    totals[maker], totals[1 - maker] = maker_total, opponent_total
    scored = settle_hand(maker, totals)
    assert scored[maker] == maker_scores
    assert scored[1 - maker] == opponent_scores


# -- KLAB-E4: legal plays (trumps clubs) -------------------------------------------------------


@pytest.mark.parametrize(
    ("lead", "hand", "legal"),
    [
        ("TH", "7C AS", "7C"),  # void in hearts: must trump
        ("AC", "9C 8C", "9C"),  # trump led: must beat it, 9 > A in trumps
        ("AC", "KC 8C", "KC 8C"),  # cannot beat: any trump
        ("KD", "AD 7D", "AD 7D"),  # no need to head a plain suit
        ("KD", "AS 7H", "AS 7H"),  # void, no trumps: anything
        ("JC", "AD 7H", "AD 7H"),  # trump led, no trumps: anything
        ("7C", "JC 8C AD", "JC 8C"),  # beat the 7 with any higher trump
    ],
)
def test_e4_legal_plays(lead: str, hand: str, legal: str) -> None:
    assert legal_follow_mask(mask(hand), parse_card(lead), CLUBS) == mask(legal)


def test_e4_legal_plays_through_the_state() -> None:
    state = play_to_first_trick("TH 9S 8S KD QD JD 8H 7H 8D", "7C AS 9D TD AD 7S QS KS JS", "9C")
    state.apply(parse_card("TH"))
    assert list(state.legal_actions()) == [parse_card("7C")]
    with pytest.raises(IllegalActionError):
        state.apply(parse_card("AS"))


def play_to_first_trick(elder: str, dealer: str, turn_up: str) -> KlaberjassState:
    """Elder accepts the turn-up's suit, nobody exchanges or declares."""
    state = KlaberjassState.from_deck(deck_for(elder, dealer, turn_up), dealer=D)
    state.apply(ACCEPT)
    while state.phase != PLAYING:
        state.apply(KEEP if state.phase == DIX else NO_SEQUENCE)
    return state


# -- KLAB-E5: sequences ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("elder", "dealer", "trump", "winner"),
    [
        ("TD JD QD", "7S 8S 9S TS", HEARTS, D),  # 4 beats 3: D scores 50
        ("KH QH JH", "KS QS JS", SPADES, D),  # equal: the trump sequence wins
        ("KH QH JH", "KS QS JS", CLUBS, None),  # equal, neither in trumps: nobody
        ("AH KH QH", "KS QS JS", SPADES, N),  # higher top beats trumps
        ("7H 8H 9H TH JH", "7S 8S 9S TS", CLUBS, N),  # 5 beats 4
    ],
)
def test_e5_sequence_comparison(elder: str, dealer: str, trump: int, winner: int | None) -> None:
    (first,) = sequences_in(mask(elder))
    (second,) = sequences_in(mask(dealer))
    assert best_sequence(first, second, trump) == winner
    assert best_sequence(first, None, trump) == N
    assert best_sequence(None, second, trump) == D
    assert best_sequence(None, None, trump) is None


def test_e5_sequence_points_in_play() -> None:
    # N holds 10-J-Q♦, D holds 7-8-9-10♠: D scores 50, N 0.
    state = KlaberjassState.from_deck(
        deck_for("TD JD QD AH 7C 9C KC 8D AS", "7S 8S 9S TS QH JC QC KD KH", "JH"), dealer=D
    )
    state.apply(ACCEPT)
    assert state.phase == DECLARING and state.current_seat() == N
    state.apply(Run(DIAMONDS, 3, 3).action)
    obs = state.observe(D)
    assert (obs.seats[N].declared_length, obs.seats[N].declared_top) == (3, 5)  # up to Q
    assert obs.seats[N].shown_sequences == ()
    state.apply(Run(SPADES, 0, 4).action)
    assert state.sequence_points == [0, 50] and state.sequence_winner == D
    # Shown to N only once the first trick is over; D sees its own (each seat its own view).
    own = set(cards("7S 8S 9S TS"))
    assert set(state.observe(D).seats[D].shown_sequences) == own
    assert state.observe(N).seats[D].shown_sequences == ()
    assert set(state.observe(D).seats[D].shown_sequences) == own
    state.apply(parse_card("AS"))
    state.apply(parse_card("7S"))
    shown = state.observe(N).seats[D].shown_sequences
    assert set(shown) == set(cards("7S 8S 9S TS"))
    assert set(state.observe(N).seats[D].known_cards) == set(cards("8S 9S TS"))


@pytest.mark.parametrize(("mode", "points"), [("best_only", 20), ("all_of_best_holder", 40)])
def test_d_klab_2_sequences_scored(mode: str, points: int) -> None:
    state = KlaberjassState.from_deck(
        deck_for("AH KH QH 7C 8C 9C AD TS 8D", "7S 8S JS TD JD 8H 9H KD 7D", "JH"),
        dealer=D,
        options={"sequences_scored": mode},
    )
    state.apply(ACCEPT)
    assert set(state.legal_actions()) == {
        NO_SEQUENCE,
        Run(HEARTS, 5, 3).action,
        Run(CLUBS, 0, 3).action,
    }
    state.apply(Run(HEARTS, 5, 3).action)
    assert state.phase == PLAYING  # D has no run of three and is not asked
    assert state.sequence_points == [points, 0]


# -- KLAB-E6: end of game ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "target", "result"),
    [
        ((515, 520), 500, 1),  # both past 500: the higher wins
        ((515, 515), 500, -1),  # equal past 500: a tie (another hand by default)
        ((480, 430), 500, None),
        ((500, 499), 500, 0),  # reaching means >= 500
    ],
)
def test_e6_game_winner(scores: tuple[int, int], target: int, result: int | None) -> None:
    assert game_winner(scores, target) == result


@pytest.mark.parametrize(
    ("before", "after", "ranks"),
    [
        ((450, 450), (535, 515), (1, 2)),  # both pass 500: N higher
        ((430, 480), (515, 545), (2, 1)),  # both pass 500: D higher
        ((480, 300), (565, 365), (1, 2)),
    ],
)
def test_e6_game_ends_after_the_hand(
    before: tuple[int, int], after: tuple[int, int], ranks: tuple[int, int]
) -> None:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), D, scores=before)
    state.apply(ACCEPT)
    state.apply(EXCHANGE)
    state.apply(Run(CLUBS, 5, 3).action)
    for lead, follow, _, _ in E2_TRICKS:
        state.apply(parse_card(lead))
        state.apply(BELLA_BASE + parse_card(follow) if follow == "KH" else parse_card(follow))
    assert state.is_terminal() and state.phase == GAME_OVER
    assert state.outcome().scores == after
    assert state.outcome().ranks == ranks


@pytest.mark.parametrize(("mode", "over"), [("another_hand", False), ("shared_win", True)])
def test_d_klab_3_equal_totals_past_the_target(mode: str, over: bool) -> None:
    state = KlaberjassState.from_deck(
        deck_for(E2_ELDER, E2_DEALER, "8H"), D, {"tie_at_target": mode}, scores=(515, 515)
    )
    for _ in range(4):  # a void hand leaves the totals equal
        state.apply(PASS)
    assert state.is_terminal() == over
    if over:
        assert state.outcome().ranks == (1, 1)
    else:
        assert state.hand_number == 2 and state.dealer == N


# -- KLAB-E7: void hand ------------------------------------------------------------------------


def test_e7_void_hand() -> None:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), dealer=D)
    assert state.current_seat() == N and list(state.legal_actions()) == [PASS, ACCEPT]
    state.apply(PASS)
    assert state.current_seat() == D
    state.apply(PASS)
    assert state.current_seat() == N
    # Round 2: any suit but the turn-up's (hearts).
    assert list(state.legal_actions()) == [PASS, NAME_BASE + CLUBS, NAME_BASE + 1, NAME_BASE + 3]
    with pytest.raises(IllegalActionError):
        state.apply(NAME_BASE + HEARTS)
    state.apply(PASS)
    state.apply(PASS)
    assert state.scores == [0, 0]
    assert state.previous_hands[-1].trump == -1
    assert state.previous_hands[-1].points == (0, 0)
    assert state.dealer == N and state.current_seat() == D  # N deals, so D bids first


# -- other rules -------------------------------------------------------------------------------


def test_card_order_trump_and_plain() -> None:
    def order(suit: str, trump: int) -> str:
        """Ranks from highest to lowest, by how many cards of the suit each one beats."""
        ranked = {rank: parse_card(rank + suit) for rank in "789TJQKA"}
        beaten = {
            rank: sum(
                trick_winner(other, card, trump) for other in ranked.values() if other != card
            )
            for rank, card in ranked.items()
        }
        return "".join(sorted(ranked, key=lambda rank: -beaten[rank]))

    assert order("H", HEARTS) == "J9ATKQ87"
    assert order("H", CLUBS) == "ATKQJ987"


def test_any_trump_beats_a_plain_lead() -> None:
    assert trick_winner(parse_card("AS"), parse_card("7C"), CLUBS) == 1
    assert trick_winner(parse_card("7S"), parse_card("AD"), CLUBS) == 0  # discard loses


def test_named_trump_and_dix_option() -> None:
    # D holds the 7 of spades; N names spades in round 2 (turn-up is a heart).
    deck = deck_for("JS 9S AH AS TS KS 7C 8C 7D", "KH QH 7S QS JH AC KC QC 8D", "8H")
    for allowed in (False, True):
        state = KlaberjassState.from_deck(deck, D, {"dix_with_named_trump": allowed})
        for action in (PASS, PASS, NAME_BASE + SPADES):
            state.apply(action)
        assert state.trump == SPADES and state.maker == N
        assert (state.phase == DIX) == allowed
        if allowed:
            assert state.current_seat() == D
            state.apply(EXCHANGE)
            assert state.hands[D] >> parse_card("8H") & 1
            assert not state.hands[D] >> parse_card("7S") & 1


def test_dix_is_not_offered_when_nobody_holds_the_seven() -> None:
    # The 7 of hearts is in the stock.
    state = KlaberjassState.from_deck(
        deck_for("JH 9H AH AS TS KS 7C 8C 7D", "KH QH TH QS JS AC KC QC 8D", "8H"), D
    )
    state.apply(ACCEPT)
    assert state.phase != DIX


def test_dix_keep_and_exchange_views() -> None:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), D)
    state.apply(ACCEPT)
    obs = state.observe(N)
    assert obs.table.bottom_card >= 0 and not obs.hand >> obs.table.bottom_card & 1
    state.apply(EXCHANGE)
    # Everyone knows D holds the 8♥ now; it is not private any more.
    assert state.observe(N).seats[D].known_cards == (parse_card("8H"),)
    assert parse_card("8H") not in state.private_cards(D)
    assert parse_card("8H") in state.public_cards()
    assert state.observe(N).table.dix_exchanged_by == D


def test_bella_needs_both_and_is_announced_with_the_second() -> None:
    state = play_e2_until_trick(2)
    # D plays Q♥ first: no bella yet.
    state.apply(parse_card("9H"))
    assert BELLA_BASE + parse_card("QH") not in state.legal_actions()
    with pytest.raises(IllegalActionError):
        state.apply(BELLA_BASE + parse_card("QH"))
    state.apply(parse_card("QH"))
    state.apply(parse_card("AH"))
    assert BELLA_BASE + parse_card("KH") in state.legal_actions()
    # N never held both; he may not announce.
    assert state.bella_seat == D


def test_bella_is_not_possible_without_both() -> None:
    state = play_to_first_trick("KH 9S 8S KD QD JD 8H 7H 8D", "QH AS 9D TD AD 7S QS KS JH", "9C")
    assert state.trump == CLUBS
    assert not any(a >= BELLA_BASE for a in state.legal_actions())


def play_e2_until_trick(number: int) -> KlaberjassState:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), D)
    state.apply(ACCEPT)
    state.apply(EXCHANGE)
    state.apply(NO_SEQUENCE)
    for lead, follow, _, _ in E2_TRICKS[: number - 1]:
        state.apply(parse_card(lead))
        state.apply(parse_card(follow))
    return state


def test_illegal_actions_change_nothing() -> None:
    state = play_e2_until_trick(1)
    before = (state.current_seat(), tuple(state.legal_actions()), state.hands[:])
    for action in (-1, 32, 63, 64, 65, 70, 72, 200, 10_000, parse_card("KH")):
        with pytest.raises(IllegalActionError):
            state.apply(action)
    assert (state.current_seat(), tuple(state.legal_actions()), state.hands) == before


def test_nine_cards_each_and_concealed_stock() -> None:
    game = make_game("klaberjass", 2)
    state = game.new_state(7)
    assert isinstance(state, KlaberjassState)
    assert all(h.bit_count() == 6 for h in state.hands)
    assert len(state.concealed_cards()) == 19
    state.apply(ACCEPT)
    assert all(h.bit_count() == 9 for h in state.hands)
    assert len(state.concealed_cards()) == 12  # 14 left: turn-up and bottom card are shown


# -- codec -------------------------------------------------------------------------------------


def test_codec_round_trips_every_kind_of_action() -> None:
    codec = codec_for(make_game("klaberjass", 2))
    actions: Sequence[int] = [
        *range(32),
        BELLA_BASE + parse_card("KH"),
        PASS,
        ACCEPT,
        *(NAME_BASE + s for s in range(4)),
        EXCHANGE,
        KEEP,
        NO_SEQUENCE,
        *(
            Run(s, low, length).action
            for s in range(4)
            for length in range(3, 9)
            for low in range(0, 9 - length)
        ),
    ]
    for action in actions:
        assert codec.decode_action(codec.encode_action(action)) == action


@pytest.mark.parametrize(
    "move",
    [
        klaberjass_pb2.KlaberjassAction(),
        klaberjass_pb2.KlaberjassAction(call=klaberjass_pb2.KLABERJASS_CALL_UNSPECIFIED),
        klaberjass_pb2.KlaberjassAction(name_trump=cards_pb2.SUIT_UNSPECIFIED),
        klaberjass_pb2.KlaberjassAction(
            play=klaberjass_pb2.KlaberjassPlay(
                card=cards_pb2.Card(suit=cards_pb2.SUIT_CLUBS, rank=cards_pb2.RANK_TWO)
            )
        ),
        klaberjass_pb2.KlaberjassAction(
            declare_sequence=klaberjass_pb2.KlaberjassSequence(
                suit=cards_pb2.SUIT_CLUBS, top=cards_pb2.RANK_EIGHT, length=3
            )
        ),
    ],
)
def test_codec_rejects_malformed_actions(move: klaberjass_pb2.KlaberjassAction) -> None:
    codec = codec_for(make_game("klaberjass", 2))
    with pytest.raises(MalformedActionError):
        codec.decode_action(game_pb2.Action(klaberjass=move))


def test_observation_on_the_wire_hides_the_other_hand() -> None:
    state = KlaberjassState.from_deck(deck_for(E2_ELDER, E2_DEALER, "8H"), D)
    codec = codec_for(make_game("klaberjass", 2))
    message = codec.observation(state.observe(N)).klaberjass
    assert len(message.hand) == 6 and message.seats[D].hand_size == 6
    assert message.phase == klaberjass_pb2.KLABERJASS_PHASE_BIDDING_TURN_UP
    assert not message.HasField("bottom_card") and not message.HasField("maker")
    shown = {(c.suit, c.rank) for c in message.hand}
    dealer = {(codec.card(c).suit, codec.card(c).rank) for c in cards(E2_DEALER)}
    assert not shown & dealer


# -- hidden information and invariants under every option ---------------------------------------

OPTION_SETS = [
    {},
    {"dix_with_named_trump": True},
    {"sequences_scored": "all_of_best_holder"},
    {"tie_at_target": "shared_win", "target_score": 150},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "defaults")
def test_random_playouts_hide_cards_and_conserve_them_under_every_option(
    options: dict[str, object],
) -> None:
    game = make_game("klaberjass", 2, options)
    for seed in range(8):
        state = game.new_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            check_card_conservation(state)
            check_observations(game, state)
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        outcome = state.outcome()
        assert max(outcome.scores) >= game.options["target_score"]  # type: ignore[operator]
    for seed in range(100):
        random_playout(game, seed)


def test_spectators_learn_a_declared_sequences_length_and_top_not_its_cards() -> None:
    import random as _random

    from referee.games.registry import make_game as _make_game

    for seed in range(200):
        state = _make_game("klaberjass", 2).new_state(seed)
        rng = _random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            for action in legal:
                private = state.describe_action(action)
                if private.startswith("declare ") and private != "declare no sequence":
                    public = state.describe_public_action(action)
                    assert public.startswith("declare a sequence of "), public
                    assert not any(suit in public.split()[-1] for suit in "SHDC♠♥♦♣")
                    return
            state.apply(legal[rng.randrange(len(legal))])
    raise AssertionError("no sequence was declarable in 200 seeded games")


@pytest.mark.parametrize(
    "options",
    [
        {"dix_with_named_trump": True, "target_score": 200},
        {"sequences_scored": "all_of_best_holder", "tie_at_target": "shared_win"},
    ],
)
def test_positions_round_trip_with_every_option(options: dict[str, object]) -> None:
    for seed in range(3):
        state = make_game("klaberjass", 2, options).new_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            position = position_of(state)
            rebuilt = position.state()
            assert position_of(rebuilt) == position
            assert list(rebuilt.legal_actions()) == list(state.legal_actions())
            assert [rebuilt.observe(s) for s in (0, 1)] == [state.observe(s) for s in (0, 1)]
            assert rebuilt.concealed_cards() == state.concealed_cards()
            assert rebuilt.public_cards() == state.public_cards()
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])


def _trump_led(dealer_hand: str) -> KlaberjassPosition:
    """Hearts trumps (the elder, seat 0, accepted the 7H turned up); the elder led the 9H."""
    elder, dealer = cards("AH TH KS QS JS 7C 8C 9C"), cards(dealer_hand)
    used = {*elder, *dealer, parse_card("9H"), parse_card("7H")}
    stock = tuple(card for card in range(32) if card not in used)
    return KlaberjassPosition(
        hands=(tuple(elder), tuple(dealer)),
        turn_up=parse_card("7H"),
        stock=stock,
        dealer=D,
        to_act=D,
        bids=(ACCEPT,),
        lead=parse_card("9H"),
    )


@pytest.mark.parametrize(
    ("dealer_hand", "legal"),
    [
        ("JH 8H AC TC KC QC AD TD KD", "JH"),  # a trump that beats the 9 must be played
        ("QH 8H AC TC KC QC AD TD KD", "8H QH"),  # none beats it: any trump
        ("AC TC KC QC JC AD TD KD QD", "AC TC KC QC JC AD TD KD QD"),  # no trump: any card
    ],
)
def test_e4_a_trump_lead_is_beaten_if_possible_from_a_position(
    dealer_hand: str, legal: str
) -> None:
    state = _trump_led(dealer_hand).state()
    assert state.trump == HEARTS and state.maker == N
    assert sorted(state.legal_actions()) == sorted(cards(legal))
    assert position_of(state).hands == tuple(
        tuple(sorted(h)) for h in _trump_led(dealer_hand).hands
    )


def test_a_position_refuses_a_follow_out_of_turn() -> None:
    position = _trump_led("JH 8H AC TC KC QC AD TD KD")
    with pytest.raises(InvalidPositionError, match="seat 1 plays next"):
        KlaberjassPosition(**{**position.__dict__, "to_act": N}).state()
