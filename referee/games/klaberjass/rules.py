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
from dataclasses import dataclass
from itertools import starmap
from operator import itemgetter
from typing import NamedTuple

from referee.games.api import (
    GameType,
    IllegalActionError,
    OptionSpec,
    OptionValue,
    Outcome,
    PublicTable,
    State,
    ranks_from_keys,
)
from referee.games.cards import RANK_LETTERS, SUIT_LETTERS, Rank, Suit
from referee.games.cards import parse_card as parse_standard_card

DECK_SIZE = 32
TRICKS = 9

BELLA_BASE = 32
PASS = 64
ACCEPT = 65
NAME_BASE = 66
EXCHANGE = 70
KEEP = 71
NO_SEQUENCE = 72
DECLARE_BASE = 128

# Phases of a hand.
BIDDING_TURN_UP = 1
BIDDING_OTHER_SUIT = 2
DIX = 3
DECLARING = 4
PLAYING = 5
GAME_OVER = 6

LAST_TRICK_BONUS = 10
BELLA_POINTS = 20
SEQUENCE_OF_THREE = 20
SEQUENCE_OF_FOUR_OR_MORE = 50

RANKS = (
    Rank.SEVEN,
    Rank.EIGHT,
    Rank.NINE,
    Rank.TEN,
    Rank.JACK,
    Rank.QUEEN,
    Rank.KING,
    Rank.ACE,
)
"""Rank of each rank index 0..7 (sequence order, low to high)."""
R7, R8, R9, RT, RJ, RQ, RK, RA = range(8)

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


def card_id(suit: Suit, rank: Rank) -> int:
    """The id of a card."""
    return 8 * (suit - 1) + RANKS.index(rank)


def card_suit(card: int) -> Suit:
    """The ``Suit`` of a card id."""
    return Suit(card // 8 + 1)


def card_rank(card: int) -> Rank:
    """The ``Rank`` of a card id."""
    return RANKS[card % 8]


def card_name(card: int) -> str:
    """``"JH"`` for the jack of hearts."""
    return RANK_LETTERS[card_rank(card)] + SUIT_LETTERS[card_suit(card)]


def parse_card(text: str) -> int:
    """The id of a card written ``"JH"``, ``"10♥"`` or ``"TH"``."""
    suit, rank = parse_standard_card(text)
    if rank not in RANKS:
        raise ValueError(f"no {text!r} in the 32-card deck")
    return card_id(suit, rank)


SUIT_MASK = tuple(0xFF << (8 * s) for s in range(4))
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


def _strength(card: int, trump: int) -> int:
    r = card % 8
    return TRUMP_ORDER.index(r) if card // 8 == trump else PLAIN_ORDER.index(r)


def card_points(card: int, trump: int) -> int:
    """Points of a card when ``trump`` (``Suit - 1``) is trumps."""
    r = card % 8
    return TRUMP_POINTS.get(r, 0) if card // 8 == trump else PLAIN_POINTS.get(r, 0)


def _follower_wins(lead: int, follow: int, trump: int) -> bool:
    if follow // 8 == lead // 8:
        return _strength(follow, trump) > _strength(lead, trump)
    return follow // 8 == trump


# _FOLLOWER_WINS[trump][32 * lead + follow], _TRICK_POINTS[trump][32 * lead + follow]
_FOLLOWER_WINS = tuple(
    tuple(_follower_wins(a, b, t) for a in range(DECK_SIZE) for b in range(DECK_SIZE))
    for t in range(4)
)
_TRICK_POINTS = tuple(
    tuple(card_points(a, t) + card_points(b, t) for a in range(DECK_SIZE) for b in range(DECK_SIZE))
    for t in range(4)
)
# _HIGHER_TRUMP[c]: the cards of c's suit that beat c when that suit is trumps.
_HIGHER_TRUMP = tuple(
    sum(
        1 << (8 * (c // 8) + r) for r in range(8) if TRUMP_ORDER.index(r) > TRUMP_ORDER.index(c % 8)
    )
    for c in range(DECK_SIZE)
)
_BYTE_CARDS = tuple(
    tuple(tuple(8 * s + r for r in range(8) if byte >> r & 1) for byte in range(256))
    for s in range(4)
)


# Card ids of a mask in three table lookups: bits 0-10, 11-21 and 22-31.
_LOW_CARDS = tuple(tuple(r for r in range(11) if m >> r & 1) for m in range(1 << 11))
_MID_CARDS = tuple(tuple(11 + r for r in range(11) if m >> r & 1) for m in range(1 << 11))
_HIGH_CARDS = tuple(tuple(22 + r for r in range(10) if m >> r & 1) for m in range(1 << 10))


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask, ascending."""
    return _LOW_CARDS[mask & 0x7FF] + _MID_CARDS[(mask >> 11) & 0x7FF] + _HIGH_CARDS[mask >> 22]


def trick_winner(lead: int, follow: int, trump: int) -> int:
    """0 if the leader's card takes the trick, 1 if the follower's (KLAB-E2, E4)."""
    return 1 if _FOLLOWER_WINS[trump][32 * lead + follow] else 0


def legal_follow_mask(hand: int, lead: int, trump: int) -> int:
    """The cards of ``hand`` that may follow ``lead`` ("Rules in brief", KLAB-E4)."""
    led = lead // 8
    in_suit = hand & SUIT_MASK[led]
    if led == trump:
        if in_suit:
            return in_suit & _HIGHER_TRUMP[lead] or in_suit
        return hand
    if in_suit:
        return in_suit
    return hand & SUIT_MASK[trump] or hand


def _runs(byte: int) -> tuple[tuple[int, int], ...]:
    runs = []
    r = 0
    while r < 8:
        if byte >> r & 1:
            low = r
            while r < 8 and byte >> r & 1:
                r += 1
            if r - low >= 3:
                runs.append((low, r - low))
        else:
            r += 1
    return tuple(runs)


_RUNS = tuple(_runs(byte) for byte in range(256))


@dataclass(frozen=True, order=True)
class Run:
    """A run of at least three cards of one suit: ``low`` rank index and ``length``."""

    suit: int
    low: int
    length: int

    @property
    def top(self) -> int:
        """Rank index of the highest card."""
        return self.low + self.length - 1

    @property
    def points(self) -> int:
        """20 for three cards, 50 for four or more."""
        return SEQUENCE_OF_THREE if self.length == 3 else SEQUENCE_OF_FOUR_OR_MORE

    @property
    def mask(self) -> int:
        """Its cards as a bitmask."""
        return ((1 << self.length) - 1) << (8 * self.suit + self.low)

    @property
    def action(self) -> int:
        """The action that declares it."""
        return DECLARE_BASE + 64 * self.suit + 8 * (self.length - 1) + self.low

    @classmethod
    def from_action(cls, action: int) -> Run:
        """The sequence a declaring action names (not checked against any hand)."""
        a = action - DECLARE_BASE
        return cls(a // 64, a % 8, (a // 8) % 8 + 1)


def sequences_in(hand: int) -> tuple[Run, ...]:
    """Every maximal run of three or more cards in ``hand``."""
    return tuple(
        Run(s, low, length) for s in range(4) for low, length in _RUNS[(hand >> (8 * s)) & 0xFF]
    )


# _RUN_ACTIONS[s][byte]: the actions declaring each maximal run of suit s whose bits are byte.
_RUN_ACTIONS = tuple(
    tuple(tuple(Run(s, low, length).action for low, length in _RUNS[byte]) for byte in range(256))
    for s in range(4)
)


_RUN_OF_ACTION = {
    run.action: run
    for run in (
        Run(s, low, length) for s in range(4) for low in range(6) for length in range(3, 9 - low)
    )
}
"""Every possible run by the action declaring it (``Run.from_action`` without building one)."""


def declaration_actions(hand: int) -> tuple[int, ...]:
    """The actions declaring each maximal run in ``hand`` (empty if it has none)."""
    return (
        _RUN_ACTIONS[0][hand & 0xFF]
        + _RUN_ACTIONS[1][(hand >> 8) & 0xFF]
        + _RUN_ACTIONS[2][(hand >> 16) & 0xFF]
        + _RUN_ACTIONS[3][hand >> 24]
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


# -- views -------------------------------------------------------------------------------------


class SeatView(NamedTuple):
    """What everyone knows about one seat in the current hand but its hand size, tricks and card
    points (which change with every card or trick: ``KlaberjassObservation.hand_sizes``,
    ``tricks_won`` and ``card_points``)."""

    score: int
    declared_length: int
    """Length of its declared sequence; 0 if it declared none (or has not declared yet)."""
    declared_top: int
    """Rank index 0..7 of its declared sequence's top card; -1 if none."""
    sequence_points: int
    shown_sequences: tuple[int, ...]
    """Cards of its scoring sequence(s): for everyone once trick 1 is over, else only its own."""
    bella: bool
    known_cards: tuple[int, ...]
    """Cards in its hand that both seats know of (taken turn-up, shown sequence)."""


class Trick(NamedTuple):
    """A trick: the leader and the cards in play order; the winner once complete."""

    leader: int
    cards: tuple[int, ...]
    winner: int


class HandResult(NamedTuple):
    """How one finished (or void) hand went (a named tuple: made once per hand, cheaply)."""

    dealer: int
    turn_up: int
    trump: int
    """``Suit - 1``, or -1 for a void hand."""
    maker: int
    card_points: tuple[int, ...]
    last_trick: int
    sequence_points: tuple[int, ...]
    bella: tuple[bool, ...]
    totals: tuple[int, ...]
    points: tuple[int, ...]


class TableView(NamedTuple):
    """Everything public that changes only with a bidding action, the dix, a declaration, a seat
    view or a new hand: ``observe`` builds it once per change and the observations share it (so
    a codec can keep its bytes while it is the same object). The two seats see the same table
    but before the first trick is over, when a scoring sequence is its holder's to see only."""

    target_score: int
    hand_number: int
    dealer: int
    phase: int
    turn_up: int
    trump: int
    maker: int
    bids: tuple[tuple[int, int], ...]
    """(seat, action) of every bidding action this hand."""
    bottom_card: int
    dix_exchanged_by: int
    seats: tuple[SeatView, SeatView]
    sequence_winner: int
    declarations_done: bool
    previous_hands: tuple[HandResult, ...]


class KlaberjassObservation(NamedTuple):
    """What one seat sees: its hand and everything public; never the other hand or the stock.

    Per decision only the fields here change; the rest is the shared ``table``, and the fields
    about finished tricks are shared until the next trick is over.
    """

    seat: int
    table: TableView
    hand: int
    """The seat's cards as a bitmask of card ids (``cards_of`` lists them)."""
    hand_sizes: tuple[int, int]
    tricks_won: tuple[int, int]
    card_points: tuple[int, int]
    current_trick: Trick
    completed_tricks: tuple[Trick, ...]

    @property
    def dealer(self) -> int:
        return self.table.dealer

    @property
    def phase(self) -> int:
        return self.table.phase

    @property
    def trump(self) -> int:
        return self.table.trump

    @property
    def maker(self) -> int:
        return self.table.maker

    @property
    def seats(self) -> tuple[SeatView, SeatView]:
        return self.table.seats

    @property
    def sequence_winner(self) -> int:
        return self.table.sequence_winner


_ROUND_TWO_ACTIONS = tuple((PASS, *(NAME_BASE + s for s in range(4) if s != up)) for up in range(4))
"""Round 2 of bidding, by the turn-up's suit: pass or name any other suit."""


# -- the state ---------------------------------------------------------------------------------


_new = tuple.__new__
"""``_new(Cls, (a, b, ...))`` builds a NamedTuple from its fields in order, without the keyword
handling of ``Cls(...)``: for the views ``observe`` builds at every decision."""


class _TrickViews(dict[tuple[int, int, int, int], Trick]):
    """A finished trick's ``Trick`` by the engine's (leader, lead, follow, winner), made on
    first use and shared by every state (4,000 at most)."""

    __slots__ = ()

    def __missing__(self, trick: tuple[int, int, int, int]) -> Trick:
        leader, lead, follow, winner = trick
        view = self[trick] = Trick(leader, (lead, follow), winner)
        return view


_TRICK_VIEWS = _TrickViews()
_WINNER = itemgetter(3)


_NEXT_TRICK = (Trick(0, (), -1), Trick(1, (), -1))
"""The current trick before its lead, by leader: shared by every observation."""
_LED_TRICK = tuple(Trick(leader, (card,), -1) for leader in (0, 1) for card in range(DECK_SIZE))
"""The current trick once led, at ``32 * leader + card``: shared by every observation."""


class KlaberjassState(State):
    """A whole game of Klaberjass, from the first deal to 500."""

    game_type = KLABERJASS

    _table_cache: tuple[TableView, TableView] | None = None
    """``observe``'s table for each seat (one object but while a scoring sequence is hidden),
    dropped at every public change but a card played and a trick taken: every action outside
    play, a seat view dropped (``_seat_changed``), the end of a hand (``_drop_views``)."""
    _seat_cache: list[SeatView | None] | None = None
    """The tables' seat views, kept while their seat is unchanged: seat 0 and seat 1 as the
    other seat sees them, then as each sees itself (the same view but while a scoring sequence
    is hidden). A seat's two are dropped when it declares, exchanges the dix, scores a sequence
    (when play starts, and when trick 1 shows it), announces bella or plays a known card; all
    of them at the end of a hand."""
    _trick_cache: tuple[tuple[int, int], tuple[int, int], tuple[Trick, ...]] | None = None
    """``observe``'s tricks won, card points and finished tricks, dropped when a trick is over
    and at a new deal."""
    _finished_cache: tuple[list[tuple[int, int, int, int]], tuple[Trick, ...], int] | None = None
    """One list of finished tricks, their views and seat 1's count of them, which the next
    ``_trick_cache`` extends by the trick just finished."""
    _previous_cache: tuple[HandResult, ...] | None = None
    """The previous hands for the tables of one hand; dropped at the end of the hand."""

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
        super().__init__(num_seats, options, rng)
        self.dix_with_named_trump = bool(options["dix_with_named_trump"])
        self.all_sequences = options["sequences_scored"] == "all_of_best_holder"
        self.shared_win = options["tie_at_target"] == "shared_win"
        self.target = int(options["target_score"])
        self.scores = [0, 0]
        self.previous_hands: list[HandResult] = []
        self.hand_number = 0
        self.dealer = rng.randrange(2)
        self._deal()

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
        self._drop_views()
        self.deck = cards
        self.hand_number += 1
        elder = 1 - self.dealer
        b = [1 << c for c in cards[:12]]  # 3 to elder, 3 to dealer, 3, 3
        hands = [0, 0]
        hands[elder] = b[0] | b[1] | b[2] | b[6] | b[7] | b[8]
        hands[self.dealer] = b[3] | b[4] | b[5] | b[9] | b[10] | b[11]
        self.hands = hands
        self.turn_up = cards[12]
        self.to_act = elder
        self.__dict__.update(_HAND_START)
        self.bids: list[tuple[int, int]] = []
        self.declared: list[Run | None] = [None, None]
        self.sequence_points = [0, 0]
        self.sequence_cards = [0, 0]
        self.bella = [False, False]
        self.card_points = [0, 0]
        self.completed: list[tuple[int, int, int, int]] = []  # leader, lead, follow, winner

    def current_seat(self) -> int:
        return self.to_act

    def _bid_actions(self) -> tuple[int, ...]:
        if self.phase == BIDDING_TURN_UP:
            return (PASS, ACCEPT)
        return _ROUND_TWO_ACTIONS[self.turn_up // 8]

    def _declare_actions(self, seat: int) -> tuple[int, ...]:
        return (NO_SEQUENCE, *declaration_actions(self.hands[seat]))

    def legal_actions(self) -> Sequence[int]:
        phase = self.phase
        seat = self.to_act
        if phase == PLAYING:
            hand = self.hands[seat]
            lead = self.lead
            if lead >= 0:
                led = lead >> 3
                in_suit = hand & SUIT_MASK[led]
                if in_suit:  # one suit: a single table lookup
                    if led == self.trump:
                        in_suit = in_suit & _HIGHER_TRUMP[lead] or in_suit
                    mask = in_suit
                    acts = _BYTE_CARDS[led][in_suit >> (8 * led)]
                else:
                    mask = legal_follow_mask(hand, lead, self.trump)
                    acts = cards_of(mask)
            else:
                mask = hand
                acts = (
                    _LOW_CARDS[hand & 0x7FF]
                    + _MID_CARDS[(hand >> 11) & 0x7FF]
                    + _HIGH_CARDS[hand >> 22]
                )
            if seat == self.bella_seat:
                second = self._bella_second(hand)
                if second >= 0 and mask >> second & 1:
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
            self._table_cache = None  # every bidding action, the dix and declarations show there
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
        card = action if 0 <= action < 32 else self._bella_play(seat, hand, action)
        lead = self.lead
        if lead < 0:
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
        index = 32 * lead + card
        winner = seat if _FOLLOWER_WINS[trump][index] else 1 - seat
        self._trick_cache = None
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
        self._seat_changed(seat)

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
            self._seat_changed(self.sequence_winner)
        self.sequences_shown = True
        for s in (0, 1):
            self.known |= self.sequence_cards[s] & self.hands[s]

    def _bella_second(self, hand: int) -> int:
        """The K or Q of trumps if it is the only one of the two left in ``hand``, else -1."""
        king, queen = 8 * self.trump + RK, 8 * self.trump + RQ
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
        self.trump = self.turn_up // 8 if action == ACCEPT else action - NAME_BASE
        self._complete_deal()

    def _complete_deal(self) -> None:
        cards = self.deck
        elder = 1 - self.dealer
        self.hands[elder] |= (1 << cards[13]) | (1 << cards[14]) | (1 << cards[15])
        self.hands[self.dealer] |= (1 << cards[16]) | (1 << cards[17]) | (1 << cards[18])
        self.bottom_card = cards[DECK_SIZE - 1]
        seven = 8 * self.trump + R7
        if self.trump == self.turn_up // 8 or self.dix_with_named_trump:
            for seat in (elder, self.dealer):
                if self.hands[seat] >> seven & 1:
                    self.phase = DIX
                    self.to_act = seat
                    return
        self._start_declarations()

    def _dix(self, action: int) -> None:
        if action != EXCHANGE and action != KEEP:
            raise self._illegal(action)
        if action == EXCHANGE:
            seat = self.to_act
            seven = 8 * self.trump + R7
            self.hands[seat] ^= (1 << seven) | (1 << self.turn_up)
            self.known |= 1 << self.turn_up
            self.dix_by = seat
            self._seat_changed(seat)
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
            self._seat_changed(seat)
        if seat != self.dealer and declaration_actions(self.hands[self.dealer]):
            self.to_act = self.dealer
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.declarations_done = True
        best = best_sequence(self.declared[0], self.declared[1], self.trump)
        if best is not None:
            self.sequence_winner = best
            declared = self.declared[best]
            assert declared is not None
            scoring = [declared]
            if self.all_sequences:
                scoring += [s for s in sequences_in(self.hands[best]) if s != declared]
            self.sequence_points[best] = sum(s.points for s in scoring)
            self.sequence_cards[best] = sum(s.mask for s in scoring)
            self._seat_changed(best)
        king, queen = 8 * self.trump + RK, 8 * self.trump + RQ
        for seat in (0, 1):
            hand = self.hands[seat]
            if hand >> king & 1 and hand >> queen & 1:
                self.bella_seat = seat
        self.phase = PLAYING
        self.to_act = 1 - self.dealer

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
        self._drop_views()
        self.scores[0] += points[0]
        self.scores[1] += points[1]
        self.previous_hands.append(
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
            )
        )
        winner = game_winner(self.scores, self.target)
        if winner is not None and (winner >= 0 or self.shared_win):
            self.phase = GAME_OVER
            self.to_act = -1
            return
        self.dealer = 1 - self.dealer
        self._deal()

    # -- results and views ---------------------------------------------------------------------

    def outcome(self) -> Outcome:
        return Outcome(tuple(self.scores), ranks_from_keys(self.scores))

    def scores_so_far(self) -> tuple[int, ...]:
        return tuple(self.scores)

    def public_table(self) -> PublicTable:
        """The turn-up of this hand, which every seat sees (after a dix exchange it is in the
        exchanger's hand, known to both)."""
        return PublicTable(turn_up=self.turn_up)

    def observe(self, seat: int) -> KlaberjassObservation:
        tables = self._table_cache or self._tables()
        tricks = self._trick_cache or self._tricks()
        hands = self.hands
        lead = self.lead
        if lead >= 0:
            current = _LED_TRICK[32 * (1 - self.to_act) + lead]
        else:  # the next leader: the seat to play, or the non-dealer before play starts
            current = _NEXT_TRICK[self.to_act if self.phase == PLAYING else 1 - self.dealer]
        return _new(
            KlaberjassObservation,
            (
                seat,  # seat
                tables[seat],  # table
                hands[seat],  # hand
                (hands[0].bit_count(), hands[1].bit_count()),  # hand_sizes
                tricks[0],  # tricks_won
                tricks[1],  # card_points
                current,  # current_trick
                tricks[2],  # completed_tricks
            ),
        )

    def _tricks(self) -> tuple[tuple[int, int], tuple[int, int], tuple[Trick, ...]]:
        """The tricks won, card points and finished tricks now, kept in ``_trick_cache``."""
        completed = self.completed
        last = self._finished_cache
        if last is not None and last[0] is completed and len(last[1]) == len(completed) - 1:
            trick = completed[-1]
            views = last[1] + (_TRICK_VIEWS[trick],)
            taken = last[2] + trick[3]
        else:
            views = tuple(map(_TRICK_VIEWS.__getitem__, completed))
            taken = sum(map(_WINNER, completed))
        self._finished_cache = (completed, views, taken)
        points = self.card_points
        tricks = self._trick_cache = ((len(views) - taken, taken), (points[0], points[1]), views)
        return tricks

    def _tables(self) -> tuple[TableView, TableView]:
        """The table as each seat sees it now, kept in ``_table_cache``."""
        views = self._seat_cache or self._new_seat_cache()
        public0 = views[0] or self._seat_view(0, 1)  # as seat 1 sees seat 0
        public1 = views[1] or self._seat_view(1, 0)
        own0 = views[2] or self._seat_view(0, 0)  # as seat 0 sees itself
        own1 = views[3] or self._seat_view(1, 1)
        previous = self._previous_cache
        if previous is None:
            previous = self._previous_cache = tuple(self.previous_hands)
        table = _new(
            TableView,
            (
                self.target,  # target_score
                self.hand_number,  # hand_number
                self.dealer,  # dealer
                self.phase,  # phase
                self.turn_up,  # turn_up
                self.trump,  # trump
                self.maker,  # maker
                tuple(self.bids),  # bids
                self.bottom_card,  # bottom_card
                self.dix_by,  # dix_exchanged_by
                (own0, public1),  # seats (as seat 0 sees them)
                self.sequence_winner,  # sequence_winner
                self.declarations_done,  # declarations_done
                previous,  # previous_hands
            ),
        )
        if own0 is public0 and own1 is public1:
            tables = self._table_cache = (table, table)
        else:
            tables = self._table_cache = (table, table._replace(seats=(public0, own1)))
        return tables

    def _new_seat_cache(self) -> list[SeatView | None]:
        views: list[SeatView | None] = [None, None, None, None]
        self._seat_cache = views
        return views

    def _seat_view(self, s: int, observer: int) -> SeatView:
        """Seat ``s``'s view as ``observer`` sees it, kept in ``_seat_cache``."""
        declared = self.declared[s]
        sequence = self.sequence_cards[s]
        hidden = sequence and not self.sequences_shown  # its own view shows it, the other's not
        known = self.known & self.hands[s]
        view = _new(
            SeatView,
            (
                self.scores[s],  # score
                declared.length if declared else 0,  # declared_length
                declared.low + declared.length - 1 if declared else -1,  # declared_top
                self.sequence_points[s],  # sequence_points
                cards_of(sequence) if sequence and (s == observer or not hidden) else (),  # shown
                self.bella[s],  # bella
                cards_of(known) if known else (),  # known_cards
            ),
        )
        views = self._seat_cache
        assert views is not None
        if not hidden:  # both seats see the same
            views[s] = views[s + 2] = view
        else:
            views[s + 2 if s == observer else s] = view
        return view

    def _seat_changed(self, seat: int) -> None:
        """Drop ``observe``'s views of ``seat`` and the tables: something public about it
        changes."""
        self._table_cache = None
        views = self._seat_cache
        if views is not None:
            views[seat] = views[seat + 2] = None

    def _drop_views(self) -> None:
        """Forget everything ``observe`` keeps: a new hand, or scores, are coming."""
        self._table_cache = None
        self._seat_cache = None
        self._trick_cache = None
        self._previous_cache = None

    def describe_action(self, action: int) -> str:
        if 0 <= action < DECK_SIZE:
            return f"play {card_name(action)}"
        if BELLA_BASE <= action < BELLA_BASE + DECK_SIZE:
            return f"play {card_name(action - BELLA_BASE)} and announce bella"
        if action == PASS:
            return "pass"
        if action == ACCEPT:
            return "accept the turn-up's suit"
        if NAME_BASE <= action < NAME_BASE + 4:
            return f"name {Suit(action - NAME_BASE + 1).name.lower()}"
        if action == EXCHANGE:
            return "exchange the 7 of trumps for the turn-up"
        if action == KEEP:
            return "keep the 7 of trumps"
        if action == NO_SEQUENCE:
            return "declare no sequence"
        if DECLARE_BASE <= action < DECLARE_BASE + 256:
            seq = Run.from_action(action)
            if seq.low + seq.length <= 8 and seq.length >= 3:
                cards = [card_name(8 * seq.suit + r) for r in range(seq.top, seq.low - 1, -1)]
                return "declare " + "-".join(cards)
        return f"action {action}"

    def describe_public_action(self, action: int) -> str:
        if DECLARE_BASE <= action < DECLARE_BASE + 256:  # length and top rank, not the cards
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
            return frozenset(self.deck[13:])
        return frozenset(self.deck[19 : DECK_SIZE - 1])

    def public_cards(self) -> frozenset[int]:
        hidden = self.concealed_cards() | self.private_cards(0) | self.private_cards(1)
        return _ALL_CARDS - hidden

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS
