"""Klaberjass, two-handed Belote with 32 cards, game to 500 (docs/games/klaberjass.md).

Each hand the dealer deals 3+3 cards to each player, non-dealer first, and turns up the next card.
Round 1 of bidding: the non-dealer, then the dealer, may ACCEPT the turn-up's suit as trump or
PASS. Round 2: each in the same order may NAME another suit or PASS. Whoever accepts or names is
the maker; four passes void the hand (nothing scores, the deal passes). Otherwise 3 more cards
each, non-dealer first (9 each), and the bottom card of the stock is shown to both. The holder of
the 7 of trumps may exchange it for the turn-up (only when the turn-up's suit is trump, by
default). Then the non-dealer and the dealer may each declare one sequence (3+ cards in a row of
one suit, order A K Q J T 9 8 7): the longer wins, then the higher top card, then the one in
trumps, else neither; only the best scores, 20 for three cards and 50 for four or more, and it is
shown once the first trick is over. Nine tricks follow, the non-dealer leading: follow suit; if
void, trump; when trump is led, beat it if possible. Trumps rank J 9 A T K Q 8 7 and plain suits
A T K Q J 9 8 7. Card points: trump J 20, trump 9 14, A 11, T 10, K 4, Q 3, plain J 2; the last
trick 10. A player who holds K and Q of trumps may announce bella (+20) when playing the second.
Each side's total is card points + last trick + sequence + bella. If the maker's total beats the
opponent's, both score their totals; on a tie the maker scores 0 and the opponent his own; if the
maker is beaten the opponent scores both totals. The game ends after a hand in which someone has
reached 500: the higher total wins.

Decisions the traditional rules leave open (docs/games/klaberjass.md, decisions): the first
dealer is drawn at random and the deal alternates every hand (KLAB-A2); packets go to the
non-dealer first (A3); the non-dealer leads (A5); round 2 may not name the turn-up's suit (A7);
the dix exchange comes before declarations (A9); declaring and announcing bella are optional
(A12, A13), and sequences, bella and the last trick count in the maker's test (A14); a trump led
that cannot be beaten is still followed with a trump (A15); plain leads need not be headed (A16).
The D-KLAB-* decisions are options: ``dix_with_named_trump`` (D-KLAB-1),
``sequences_scored`` (D-KLAB-2), ``tie_at_target`` (D-KLAB-3); ``target_score`` sets the 500.

Simplifications for a referee: a player is offered only the maximal runs in his hand to
declare (a shorter part of a run never compares better), and a seat with no run of three, or a
seat not holding the 7 of trumps, is not asked at all; so keeping the 7 and declaring nothing
are not public (``is_public_action``): nothing the other seat or a spectator is sent shows them.
When two declarations meet, both seats see each declared length and top rank at once (the "how
high?" exchange of the table); the scoring sequence's cards are shown after trick 1. In the
``all_of_best_holder`` variant the best holder also scores every other maximal run in his hand.

Cards: ``id = 8 * (suit - 1) + r`` with ``r`` 0..7 for 7 8 9 T J Q K A (``Suit`` numbering), so a
run in sequence order is a run of adjacent bits.

Actions:
- ``0..31``: play that card; ``32 + c``: play K or Q of trumps ``c`` and announce bella;
- ``64`` PASS; ``65`` ACCEPT the turn-up's suit; ``66 + s`` NAME suit ``s`` (``Suit - 1``);
- ``70`` EXCHANGE the 7 of trumps for the turn-up; ``71`` KEEP it;
- ``72`` declare no sequence; ``128 + 64*s + 8*(length-1) + low`` declare the run of ``length``
  cards of suit ``s`` whose lowest card has rank index ``low``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import starmap
from operator import itemgetter
from typing import Any

from referee.games.api import (
    GameType,
    IllegalActionError,
    OptionSpec,
    OptionValue,
    Outcome,
    State,
    ranks_from_keys,
)
from referee.games.cards import RANK_LETTERS, SUIT_LETTERS, Suit
from referee.games.cards import parse_card as parse_standard_card
from referee.games.klaberjass.view import (
    ACCEPT,
    BELLA_BASE,
    BIDDING_OTHER_SUIT,
    BIDDING_TURN_UP,
    CARDS_PER_SUIT,
    DECK_SIZE,
    DECLARE_BASE,
    DECLARE_END,
    DECLARING,
    DIX,
    EXCHANGE,
    GAME_OVER,
    HIGH_CARDS,
    HIGH_SHIFT,
    KEEP,
    LOW_CARDS,
    LOW_MASK,
    MID_CARDS,
    MID_MASK,
    MID_SHIFT,
    NAME_BASE,
    NO_SEATS,
    NO_SEQUENCE,
    NO_TABLES,
    NO_TRICKS,
    PASS,
    PLAYING,
    R7,
    R8,
    R9,
    RA,
    RANKS,
    RJ,
    RK,
    RQ,
    RT,
    SUIT_BITS,
    SUITS,
    TRICKS,
    FinishedCache,
    FinishedTrick,
    HandResult,
    Run,
    SeatCache,
    TableCache,
    TrickCache,
    bid_trump,
    card_bit,
    card_id,
    card_rank,
    card_suit,
    cards_in,
    cards_of,
    observe,
    public_table,
    rank_index,
    suit_card,
    suit_of,
)

LAST_TRICK_BONUS = 10
BELLA_POINTS = 20
TRUMP_ORDER = (R7, R8, RQ, RK, RT, RA, R9, RJ)
"""Trump ranks from lowest to highest: 7 8 Q K T A 9 J."""
PLAIN_ORDER = (R7, R8, R9, RJ, RQ, RK, RT, RA)
"""Plain-suit ranks from lowest to highest: 7 8 9 J Q K T A."""
TRUMP_POINTS = {RJ: 20, R9: 14, RA: 11, RT: 10, RK: 4, RQ: 3}
PLAIN_POINTS = {RA: 11, RT: 10, RK: 4, RQ: 3, RJ: 2}

SEQUENCE_MODES = ("best_only", "all_of_best_holder")
TIE_MODES = ("another_hand", "shared_win")

KLABERJASS = GameType(
    name="klaberjass",
    title="Klaberjass",
    min_seats=2,
    max_seats=2,
    rules_section="docs/games/klaberjass.md",
    options=(
        OptionSpec(
            "dix_with_named_trump",
            False,
            "D-KLAB-1. Whether the holder of the 7 of trumps may exchange it for the turn-up"
            " when trump was named in round 2: false = no, the turn-up is turned down (default);"
            " true = yes (the traditional rule).",
        ),
        OptionSpec(
            "sequences_scored",
            "best_only",
            "D-KLAB-2. best_only = only the single best declared sequence scores (traditional);"
            " all_of_best_holder = its holder also scores every other sequence in his hand.",
            choices=SEQUENCE_MODES,
        ),
        OptionSpec(
            "tie_at_target",
            "another_hand",
            "D-KLAB-3. Both players at or past the target with equal totals: another_hand ="
            " play on until the totals differ (default); shared_win = the game ends, both rank 1.",
            choices=TIE_MODES,
        ),
        OptionSpec(
            "target_score",
            500,
            "The game ends after a hand in which a player has reached this total"
            " (traditionally 500).",
            minimum=1,
            maximum=100_000,
        ),
    ),
)

# -- card tables -------------------------------------------------------------------------------


def card_name(card: int) -> str:
    """``"JH"`` for the jack of hearts."""
    return RANK_LETTERS[card_rank(card)] + SUIT_LETTERS[card_suit(card)]


def parse_card(text: str) -> int:
    """The id of a card written ``"JH"``, ``"10♥"`` or ``"TH"``."""
    suit, rank = parse_standard_card(text)
    if rank not in RANKS:
        raise ValueError(f"no {text!r} in the 32-card deck")
    return card_id(suit, rank)


_SUIT_SHIFT = tuple(suit_card(suit, R7) for suit in range(SUITS))
"""``[suit]``: the bit of the suit's 7, where ``suit_byte`` shifts from."""
SUIT_MASK = tuple(SUIT_BITS << shift for shift in _SUIT_SHIFT)
"""``SUIT_MASK[s]``: every card of suit ``s`` as a mask."""
SUIT_BYTES = 1 << CARDS_PER_SUIT
"""How many sets of one suit's cards there are (the size of the per-suit tables)."""
_ALL_CARDS = frozenset(range(DECK_SIZE))
_DECK_ORDER = tuple(range(DECK_SIZE))
_NO_ARGS = ((),) * DECK_SIZE
_HAND_START: dict[str, object] = {
    "bottom_card": -1,
    "trump": -1,
    "maker": -1,
    "phase": BIDDING_TURN_UP,
    "dix_by": -1,
    "declarations_done": False,
    "sequence_winner": -1,
    "sequences_shown": False,
    "bella_seat": -1,
    "known": 0,
    "lead": -1,
}
"""The per-hand attributes that start every deal with these (immutable) values."""

# Where the cards of a hand's deck (top first) go.
_FIRST_DEAL_TO_ELDER = itemgetter(0, 1, 2, 6, 7, 8)
_FIRST_DEAL_TO_DEALER = itemgetter(3, 4, 5, 9, 10, 11)
"""3 cards to the non-dealer, 3 to the dealer, 3 and 3 again."""
TURN_UP_AT = 12
COMPLETION_AT = 13
"""Where the completion deal starts: 3 more cards each, non-dealer first."""
_COMPLETION_TO_ELDER = itemgetter(13, 14, 15)
_COMPLETION_TO_DEALER = itemgetter(16, 17, 18)
STOCK_AT = 19
"""Where the stock starts once the deal is complete; its last card is the bottom card."""
_CARD_BIT = tuple(card_bit(card) for card in range(DECK_SIZE)).__getitem__
"""``card_bit`` from a table, for ``_dealt``."""


def _dealt(
    cards: Sequence[int], to_elder: itemgetter[Any], to_dealer: itemgetter[Any]
) -> tuple[int, int]:
    """The non-dealer's and the dealer's packets of the deck (each ``itemgetter`` picks their
    places) as masks."""
    return sum(map(_CARD_BIT, to_elder(cards))), sum(map(_CARD_BIT, to_dealer(cards)))


def suit_byte(hand: int, suit: int) -> int:
    """The cards of ``suit`` in ``hand`` as a byte, bit ``r`` for rank index ``r``."""
    return hand >> _SUIT_SHIFT[suit] & SUIT_BITS


def _strength(card: int, trump: int) -> int:
    r = rank_index(card)
    return TRUMP_ORDER.index(r) if suit_of(card) == trump else PLAIN_ORDER.index(r)


def card_points(card: int, trump: int) -> int:
    """Points of a card when ``trump`` (``Suit - 1``) is trumps."""
    r = rank_index(card)
    return TRUMP_POINTS.get(r, 0) if suit_of(card) == trump else PLAIN_POINTS.get(r, 0)


def _follower_wins(lead: int, follow: int, trump: int) -> bool:
    if suit_of(follow) == suit_of(lead):
        return _strength(follow, trump) > _strength(lead, trump)
    return suit_of(follow) == trump


def higher_trumps(card: int) -> int:
    """The cards of ``card``'s suit that beat it when that suit is trumps, as a mask."""
    suit, strength = suit_of(card), TRUMP_ORDER.index(rank_index(card))
    beaten_by = [r for r in range(CARDS_PER_SUIT) if TRUMP_ORDER.index(r) > strength]
    return sum(card_bit(suit_card(suit, r)) for r in beaten_by)


def trick_index(lead: int, follow: int) -> int:
    """Where a trick's two cards are in ``_FOLLOWER_WINS`` and ``_TRICK_POINTS``."""
    return DECK_SIZE * lead + follow


# Tables for the hot path (playouts), built at import from the functions above.
_FOLLOWER_WINS = tuple(
    tuple(_follower_wins(a, b, t) for a in range(DECK_SIZE) for b in range(DECK_SIZE))
    for t in range(SUITS)
)
"""``[trump][trick_index(lead, follow)]``: whether the follower's card takes the trick."""
_TRICK_POINTS = tuple(
    tuple(card_points(a, t) + card_points(b, t) for a in range(DECK_SIZE) for b in range(DECK_SIZE))
    for t in range(SUITS)
)
"""``[trump][trick_index(lead, follow)]``: the card points of a trick."""
_HIGHER_TRUMP = tuple(higher_trumps(card) for card in range(DECK_SIZE))
_SUIT_CARDS = tuple(
    tuple(cards_in(byte << shift, shift, CARDS_PER_SUIT) for byte in range(SUIT_BYTES))
    for shift in _SUIT_SHIFT
)
"""``[suit][suit_byte(hand, suit)]``: the card ids of one suit's cards in a hand."""


def bella_cards(trump: int) -> tuple[int, int]:
    """The K and Q of trumps, which announce bella when held together."""
    return suit_card(trump, RK), suit_card(trump, RQ)


_BELLA_CARDS = tuple(bella_cards(trump) for trump in range(SUITS))
_BELLA_MASK = tuple(sum(map(card_bit, cards)) for cards in _BELLA_CARDS)
"""``[trump]``: the K and Q of trumps (``bella_cards``) as a mask."""
_SEVEN_OF_TRUMPS = tuple(suit_card(trump, R7) for trump in range(SUITS))


def bella_holder(hands: Sequence[int], trump: int) -> int:
    """The seat holding both K and Q of trumps in ``hands``; -1 if neither does."""
    both = _BELLA_MASK[trump]
    for seat in (0, 1):
        if hands[seat] & both == both:
            return seat
    return -1


def trick_points(lead: int, follow: int, trump: int) -> int:
    """The card points of a trick (``card_points`` of both cards)."""
    return _TRICK_POINTS[trump][trick_index(lead, follow)]


def trick_winner(lead: int, follow: int, trump: int) -> int:
    """0 if the leader's card takes the trick, 1 if the follower's (KLAB-E2, E4)."""
    return 1 if _FOLLOWER_WINS[trump][trick_index(lead, follow)] else 0


def legal_follow_mask(hand: int, lead: int, trump: int) -> int:
    """The cards of ``hand`` that may follow ``lead`` ("Rules in brief", KLAB-E4): follow suit,
    and when trump is led beat it if possible; if void, trump; if void in trumps too, any
    card."""
    led = lead // CARDS_PER_SUIT  # suit_of(lead), inlined on the hot path
    in_suit = hand & SUIT_MASK[led]
    if led == trump:
        if in_suit:
            return in_suit & _HIGHER_TRUMP[lead] or in_suit
        return hand
    if in_suit:
        return in_suit
    return hand & SUIT_MASK[trump] or hand


_TRUMP_FOLLOWS = tuple(
    tuple(
        cards_of(legal_follow_mask(held << _SUIT_SHIFT[suit_of(lead)], lead, suit_of(lead)))
        for held in range(SUIT_BYTES)
    )
    for lead in range(DECK_SIZE)
)
"""``[lead][suit_byte(hand, led suit)]``: the cards that may follow a trump lead from a hand
holding ``held`` trumps (``legal_follow_mask``), for ``legal_actions``; a plain lead's are all
of them (``_SUIT_CARDS``)."""


def _runs(byte: int) -> tuple[tuple[int, int], ...]:
    """The (low rank index, length) of each run of three or more set bits of one suit's byte."""
    runs = []
    r = 0
    while r < CARDS_PER_SUIT:
        if byte >> r & 1:
            low = r
            while r < CARDS_PER_SUIT and byte >> r & 1:
                r += 1
            if r - low >= 3:
                runs.append((low, r - low))
        else:
            r += 1
    return tuple(runs)


_RUNS = tuple(_runs(byte) for byte in range(SUIT_BYTES))


def sequences_in(hand: int) -> tuple[Run, ...]:
    """Every maximal run of three or more cards in ``hand``."""
    return tuple(
        Run(s, low, length) for s in range(SUITS) for low, length in _RUNS[suit_byte(hand, s)]
    )


_RUN_ACTIONS = tuple(
    tuple(
        tuple(Run(s, low, length).action for low, length in _RUNS[byte])
        for byte in range(SUIT_BYTES)
    )
    for s in range(SUITS)
)
"""``[suit][suit_byte(hand, suit)]``: the actions declaring each maximal run of that suit."""
_, _DIAMONDS_SHIFT, _HEARTS_SHIFT, _SPADES_SHIFT = _SUIT_SHIFT


_RUN_OF_ACTION = {
    run.action: run
    for run in (
        Run(s, low, length)
        for s in range(SUITS)
        for low in range(CARDS_PER_SUIT - 2)
        for length in range(3, CARDS_PER_SUIT + 1 - low)
    )
}
"""Every possible run by the action declaring it (``Run.from_action`` without building one)."""


def declaration_actions(hand: int) -> tuple[int, ...]:
    """The actions declaring each maximal run in ``hand`` (empty if it has none)."""
    clubs, diamonds, hearts, spades = _RUN_ACTIONS  # suit_byte(hand, s), unrolled
    return (
        clubs[hand & SUIT_BITS]
        + diamonds[hand >> _DIAMONDS_SHIFT & SUIT_BITS]
        + hearts[hand >> _HEARTS_SHIFT & SUIT_BITS]
        + spades[hand >> _SPADES_SHIFT]
    )


def best_sequence(first: Run | None, second: Run | None, trump: int) -> int | None:
    """Which of two declarations scores: 0, 1 or None (KLAB-E5).

    Longer beats shorter, then the higher top card, then the one in trumps; else neither.
    """
    if first is None or second is None:
        return None if first is None and second is None else (0 if second is None else 1)
    key0 = (first.length, first.top, first.suit == trump)
    key1 = (second.length, second.top, second.suit == trump)
    if key0 == key1:
        return None
    return 0 if key0 > key1 else 1


def settle_hand(maker: int, totals: Sequence[int]) -> tuple[int, int]:
    """Points each seat scores for a hand, given the maker and each side's total (KLAB-E2, E3)."""
    opponent = 1 - maker
    scored = [0, 0]
    if totals[maker] > totals[opponent]:
        scored = [totals[0], totals[1]]
    elif totals[maker] == totals[opponent]:
        scored[opponent] = totals[opponent]
    else:
        scored[opponent] = totals[0] + totals[1]
    return scored[0], scored[1]


def game_winner(scores: Sequence[int], target: int) -> int | None:
    """After a hand: the winning seat, -1 for equal totals past the target, None to play on."""
    if max(scores) < target:
        return None
    if scores[0] == scores[1]:
        return -1
    return 0 if scores[0] > scores[1] else 1


_ROUND_TWO_ACTIONS = tuple(
    (PASS, *(NAME_BASE + s for s in range(SUITS) if s != up)) for up in range(SUITS)
)
"""Round 2 of bidding, by the turn-up's suit: pass or name any other suit."""


# -- the state ---------------------------------------------------------------------------------


class KlaberjassState(State):
    """A whole game of Klaberjass, from the first deal to 500."""

    game_type = KLABERJASS

    table_changes = 0
    """Bumped wherever the observations' shared table changes: every action outside card
    play, a seat's public facts (``seat_changes``) and a new hand."""
    seat_changes: list[int]
    """Per seat, bumped when what is public about it changes: it declares, exchanges the dix,
    scores a sequence (when play starts, and when trick 1 shows it), announces bella or plays
    a known card; both at a new hand."""
    trick_changes = 0
    """Bumped when a trick is over and at a new hand."""
    view_table_cache: TableCache = NO_TABLES
    view_table_changes_cache = -1
    view_seat_cache: SeatCache = NO_SEATS
    view_trick_cache: TrickCache = NO_TRICKS
    view_trick_changes_cache = -1
    view_finished_cache: FinishedCache | None = None
    """The view's (``view.observe``); the rules never read them."""

    observe = observe
    public_table = public_table

    # Set at each deal from _HAND_START by one dict update.
    bottom_card: int
    trump: int
    maker: int
    phase: int
    dix_by: int
    declarations_done: bool
    sequence_winner: int
    sequences_shown: bool
    bella_seat: int
    """The seat that held both K and Q of trumps when play began (-1: none)."""
    known: int
    """Cards in a hand that both seats know of (taken turn-up, shown sequence)."""
    lead: int

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        self._configure(num_seats, options, rng)
        self.scores = [0, 0]
        self.previous_hands: tuple[HandResult, ...] = ()
        """Every finished hand, oldest first (a tuple: replaced, never changed, so the views
        share it)."""
        self.hand_number = 0
        self.dealer = rng.randrange(2)
        self._deal()

    def _configure(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        """What the options decide, for a new game and for a position (``positions``)."""
        State.__init__(self, num_seats, options, rng)
        self.dix_with_named_trump = bool(options["dix_with_named_trump"])
        self.all_sequences = options["sequences_scored"] == "all_of_best_holder"
        self.shared_win = options["tie_at_target"] == "shared_win"
        self.target = int(options["target_score"])
        self.seat_changes = [0, 0]

    @classmethod
    def from_deck(
        cls,
        deck: Sequence[int],
        dealer: int,
        options: Mapping[str, object] | None = None,
        scores: tuple[int, int] = (0, 0),
    ) -> KlaberjassState:
        """A game whose current hand is dealt by ``dealer`` from ``deck`` (top card first).

        For tests and worked examples; later hands are shuffled from a fixed seed.
        """
        state = cls(2, KLABERJASS.resolve_options(options), random.Random(0))
        state.scores = list(scores)
        state.hand_number = 0
        state.dealer = dealer
        state._deal(deck)
        return state

    # -- dealing and bidding -------------------------------------------------------------------

    def _deal(self, deck: Sequence[int] | None = None) -> None:
        """Start a hand; ``deck`` (top first) fixes the cards for tests, else a seeded shuffle."""
        if deck is None:  # a uniform shuffle: sort on random keys (faster than rng.shuffle)
            keys = list(starmap(self.rng.random, _NO_ARGS))  # one rng.random() per card, in C
            cards = sorted(_DECK_ORDER, key=keys.__getitem__)
        else:
            cards = list(deck)
            if sorted(cards) != list(range(DECK_SIZE)):
                raise ValueError("a deck holds each of the 32 cards once")
        cards = self.arrange_deal(cards)
        self._everything_changes()
        self.deck = cards
        self.hand_number += 1
        elder = 1 - self.dealer
        hands = [0, 0]
        hands[elder], hands[self.dealer] = _dealt(
            cards, _FIRST_DEAL_TO_ELDER, _FIRST_DEAL_TO_DEALER
        )
        self.hands = hands
        self.turn_up = cards[TURN_UP_AT]
        self.to_act = elder
        self.__dict__.update(_HAND_START)
        self.bids: list[tuple[int, int]] = []
        self.declared: list[Run | None] = [None, None]
        self.sequence_points = [0, 0]
        self.sequence_cards = [0, 0]
        self.bella = [False, False]
        self.card_points = [0, 0]
        self.completed: list[FinishedTrick] = []

    def current_seat(self) -> int:
        return self.to_act

    def _bid_actions(self) -> tuple[int, ...]:
        if self.phase == BIDDING_TURN_UP:
            return (PASS, ACCEPT)
        return _ROUND_TWO_ACTIONS[self.turn_up // CARDS_PER_SUIT]  # suit_of(turn_up), inlined

    def _declare_actions(self, seat: int) -> tuple[int, ...]:
        return (NO_SEQUENCE, *declaration_actions(self.hands[seat]))

    def legal_actions(self) -> Sequence[int]:
        phase = self.phase
        seat = self.to_act
        if phase == PLAYING:
            hand = self.hands[seat]
            lead = self.lead
            if lead < 0:  # cards_of(hand), inlined on the hot path
                acts = (
                    LOW_CARDS[hand & LOW_MASK]
                    + MID_CARDS[hand >> MID_SHIFT & MID_MASK]
                    + HIGH_CARDS[hand >> HIGH_SHIFT]
                )
            else:
                led = lead // CARDS_PER_SUIT
                held = hand >> _SUIT_SHIFT[led] & SUIT_BITS  # suit_byte(hand, led), inlined
                if held:  # following suit: a single table lookup
                    acts = (
                        _TRUMP_FOLLOWS[lead][held] if led == self.trump else _SUIT_CARDS[led][held]
                    )
                else:
                    acts = cards_of(legal_follow_mask(hand, lead, self.trump))
            if seat == self.bella_seat:
                second = self._bella_second(hand)
                if second >= 0 and second in acts:
                    return (*acts, BELLA_BASE + second)
            return acts
        if phase in (BIDDING_TURN_UP, BIDDING_OTHER_SUIT):
            return self._bid_actions()
        if phase == DIX:
            return (EXCHANGE, KEEP)
        if phase == DECLARING:
            return self._declare_actions(seat)
        return ()

    def apply(self, action: int) -> None:
        phase = self.phase
        if phase != PLAYING:
            self.table_changes += 1  # every bidding action, the dix and declarations show there
            if phase in (BIDDING_TURN_UP, BIDDING_OTHER_SUIT):
                self._bid(action)
            elif phase == DIX:
                self._dix(action)
            elif phase == DECLARING:
                self._declare(action)
            else:
                raise IllegalActionError("the game is over")
            return
        # Card play: the hot path of every playout.
        seat = self.to_act
        hands = self.hands
        hand = hands[seat]
        card = action if 0 <= action < DECK_SIZE else self._bella_play(seat, hand, action)
        lead = self.lead
        if lead < 0:  # a lead and a follow each remove the card (one test of lead per card)
            if not hand >> card & 1:
                raise self._illegal(action)
            hands[seat] = hand ^ (1 << card)
            if action != card or self.known >> card & 1:
                self._play_public(seat, card, action != card)
            self.lead = card
            self.to_act = 1 - seat
            return
        trump = self.trump
        if not legal_follow_mask(hand, lead, trump) >> card & 1:
            raise self._illegal(action)
        hands[seat] = hand ^ (1 << card)
        if action != card or self.known >> card & 1:
            self._play_public(seat, card, action != card)
        # The trick is over: it goes to its winner, who leads the next.
        index = DECK_SIZE * lead + card  # trick_index(lead, card), inlined on the hot path
        winner = seat if _FOLLOWER_WINS[trump][index] else 1 - seat
        self.trick_changes += 1
        self.card_points[winner] += _TRICK_POINTS[trump][index]
        completed = self.completed
        completed.append((1 - seat, lead, card, winner))
        self.lead = -1
        self.to_act = winner
        if len(completed) == 1:
            self._show_sequences()
        elif len(completed) == TRICKS:
            self._score_hand(winner)

    def _play_public(self, seat: int, card: int, bella: bool) -> None:
        """``seat`` plays a card both seats knew it held, or announces bella with it."""
        self.known &= ~(1 << card)
        if bella:
            self.bella[seat] = True
        self._seat_changes(seat)

    def _bella_play(self, seat: int, hand: int, action: int) -> int:
        """The card of a play-and-announce-bella action; raises unless this seat may announce."""
        card = action - BELLA_BASE
        if not 0 <= card < DECK_SIZE or seat != self.bella_seat:
            raise self._illegal(action)
        if card != self._bella_second(hand):
            raise self._illegal(action)
        return card

    def _show_sequences(self) -> None:
        if self.sequence_winner >= 0:  # its cards are everyone's to see now
            self._seat_changes(self.sequence_winner)
        self.sequences_shown = True
        for s in (0, 1):
            self.known |= self.sequence_cards[s] & self.hands[s]

    def _bella_second(self, hand: int) -> int:
        """The K or Q of trumps if it is the only one of the two left in ``hand``, else -1."""
        king, queen = _BELLA_CARDS[self.trump]
        has_king, has_queen = hand >> king & 1, hand >> queen & 1
        if has_king == has_queen:
            return -1
        return king if has_king else queen

    def _illegal(self, action: int) -> IllegalActionError:
        return IllegalActionError(f"seat {self.to_act} may not {self.describe_action(action)} now")

    def _bid(self, action: int) -> None:
        if action not in self._bid_actions():
            raise self._illegal(action)
        seat = self.to_act
        self.bids.append((seat, action))
        if action == PASS:
            if seat != self.dealer:
                self.to_act = self.dealer
            elif self.phase == BIDDING_TURN_UP:
                self.phase = BIDDING_OTHER_SUIT
                self.to_act = 1 - self.dealer
            else:
                self._void_hand()
            return
        self.maker = seat
        self.trump = bid_trump(action, self.turn_up)
        self._complete_deal()

    def _complete_deal(self) -> None:
        cards = self.deck
        elder, dealer = 1 - self.dealer, self.dealer
        hands = self.hands
        to_elder, to_dealer = _dealt(cards, _COMPLETION_TO_ELDER, _COMPLETION_TO_DEALER)
        hands[elder] |= to_elder
        hands[dealer] |= to_dealer
        self.bottom_card = cards[DECK_SIZE - 1]
        trump = self.trump
        seven = _SEVEN_OF_TRUMPS[trump]
        # suit_of(turn_up), inlined: once a hand, but every playout's
        if trump == self.turn_up // CARDS_PER_SUIT or self.dix_with_named_trump:
            for seat in (elder, dealer):
                if hands[seat] >> seven & 1:
                    self.phase = DIX
                    self.to_act = seat
                    return
        self._start_declarations()

    def _dix(self, action: int) -> None:
        if action != EXCHANGE and action != KEEP:
            raise self._illegal(action)
        if action == EXCHANGE:
            seat = self.to_act
            seven = _SEVEN_OF_TRUMPS[self.trump]
            self.hands[seat] ^= card_bit(seven) | card_bit(self.turn_up)
            self.known |= card_bit(self.turn_up)
            self.dix_by = seat
            self._seat_changes(seat)
        self._start_declarations()

    def _start_declarations(self) -> None:
        self.phase = DECLARING
        elder = 1 - self.dealer
        for seat in (elder, self.dealer):
            if declaration_actions(self.hands[seat]):
                self.to_act = seat
                return
        self._start_play()

    def _declare(self, action: int) -> None:
        seat = self.to_act
        if action not in self._declare_actions(seat):
            raise self._illegal(action)
        if action != NO_SEQUENCE:
            self.declared[seat] = _RUN_OF_ACTION[action]
            self._seat_changes(seat)
        if seat != self.dealer and declaration_actions(self.hands[self.dealer]):
            self.to_act = self.dealer
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.declarations_done = True
        self._score_sequences()
        if self.sequence_winner >= 0:
            self._seat_changes(self.sequence_winner)
        self.bella_seat = bella_holder(self.hands, self.trump)
        self.phase = PLAYING
        self.to_act = 1 - self.dealer

    def _score_sequences(self) -> None:
        """The best declaration's holder, points and cards, as play starts."""
        best = best_sequence(self.declared[0], self.declared[1], self.trump)
        if best is None:
            return
        self.sequence_winner = best
        declared = self.declared[best]
        assert declared is not None
        scoring = [declared]
        if self.all_sequences:
            scoring += [s for s in sequences_in(self.hands[best]) if s != declared]
        self.sequence_points[best] = sum(s.points for s in scoring)
        self.sequence_cards[best] = sum(s.mask for s in scoring)

    # -- play ----------------------------------------------------------------------------------

    def _score_hand(self, last: int) -> None:
        totals = [
            self.card_points[s]
            + (LAST_TRICK_BONUS if s == last else 0)
            + self.sequence_points[s]
            + (BELLA_POINTS if self.bella[s] else 0)
            for s in (0, 1)
        ]
        points = settle_hand(self.maker, totals)
        self._finish_hand(last, tuple(totals), points)

    def _void_hand(self) -> None:
        self._finish_hand(-1, (0, 0), (0, 0))

    def _finish_hand(self, last: int, totals: tuple[int, ...], points: tuple[int, int]) -> None:
        self.scores[0] += points[0]
        self.scores[1] += points[1]
        self.previous_hands += (
            HandResult(
                self.dealer,
                self.turn_up,
                self.trump,
                self.maker,
                tuple(self.card_points),
                last,
                tuple(self.sequence_points),
                tuple(self.bella),
                totals,
                points,
            ),
        )
        winner = game_winner(self.scores, self.target)
        if winner is not None and (winner >= 0 or self.shared_win):
            self.phase = GAME_OVER
            self.to_act = -1
            self._everything_changes()  # else the next deal's does
            return
        self.dealer = 1 - self.dealer
        self._deal()

    def _seat_changes(self, seat: int) -> None:
        """Something public about ``seat`` changes (and so the table)."""
        self.seat_changes[seat] += 1
        self.table_changes += 1

    def _everything_changes(self) -> None:
        """A new hand, or scores, are coming: every part of the observations changes."""
        self.seat_changes[0] += 1
        self.seat_changes[1] += 1
        self.table_changes += 1
        self.trick_changes += 1

    # -- results -------------------------------------------------------------------------------

    def outcome(self) -> Outcome:
        return Outcome(tuple(self.scores), ranks_from_keys(self.scores))

    def scores_so_far(self) -> tuple[int, ...]:
        return tuple(self.scores)

    def describe_action(self, action: int) -> str:
        if 0 <= action < DECK_SIZE:
            return f"play {card_name(action)}"
        if BELLA_BASE <= action < BELLA_BASE + DECK_SIZE:
            return f"play {card_name(action - BELLA_BASE)} and announce bella"
        if action == PASS:
            return "pass"
        if action == ACCEPT:
            return "accept the turn-up's suit"
        if NAME_BASE <= action < NAME_BASE + SUITS:
            return f"name {Suit(action - NAME_BASE + 1).name.lower()}"
        if action == EXCHANGE:
            return "exchange the 7 of trumps for the turn-up"
        if action == KEEP:
            return "keep the 7 of trumps"
        if action == NO_SEQUENCE:
            return "declare no sequence"
        if action in _RUN_OF_ACTION:
            seq = _RUN_OF_ACTION[action]
            cards = [card_name(suit_card(seq.suit, r)) for r in range(seq.top, seq.low - 1, -1)]
            return "declare " + "-".join(cards)
        return f"action {action}"

    def describe_public_action(self, action: int) -> str:
        if DECLARE_BASE <= action < DECLARE_END:  # length and top rank, not the cards
            seq = Run.from_action(action)
            top = RANK_LETTERS[RANKS[seq.top]]
            return f"declare a sequence of {seq.length} to the {top}"
        return self.describe_action(action)

    def is_public_action(self, action: int) -> bool:
        # Only the holder of the 7 of trumps is asked about the dix, and only a holder of a run
        # whether to declare: keeping the 7 and declaring nothing must leave no trace.
        return action != KEEP and action != NO_SEQUENCE

    def private_cards(self, seat: int) -> frozenset[int]:
        return frozenset(cards_of(self.hands[seat] & ~self.known))

    def concealed_cards(self) -> frozenset[int]:
        if self.bottom_card < 0:  # before the completion deal: everything below the turn-up
            return frozenset(self.deck[COMPLETION_AT:])
        return frozenset(self.deck[STOCK_AT : DECK_SIZE - 1])

    def public_cards(self) -> frozenset[int]:
        hidden = self.concealed_cards() | self.private_cards(0) | self.private_cards(1)
        return _ALL_CARDS - hidden

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS
