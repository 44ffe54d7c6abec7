"""What one Klaberjass seat sees (``observe``), and the card and action encoding every reader
shares.

The view is the only way a position leaves the rules: the codec, the bots and the tests read
``KlaberjassObservation``s, never the state. What every seat sees alike is kept between
observations, keyed on counters the rules bump when it changes: the ``table`` (bids, the dix,
declarations, the seats' public facts, a new hand: ``KlaberjassState.table_changes``), each
seat's public view within it (``seat_changes``) and the tricks won, card points and finished
tricks (``trick_changes``). Consecutive observations share those objects, so the codec encodes
each once. Standard library only.

Cards: ``id = 8 * (suit - 1) + r`` with ``r`` 0..7 for 7 8 9 T J Q K A (``Suit`` numbering), so
a run in sequence order is a run of adjacent bits. Actions: see ``referee.games.klaberjass.rules``.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from referee.games.api import PublicTable
from referee.games.cards import Rank, Suit

if TYPE_CHECKING:
    from referee.games.klaberjass.rules import KlaberjassState

DECK_SIZE = 32
SUITS = 4
CARDS_PER_SUIT = 8
TRICKS = 9
"""Tricks in a hand: nine cards each."""
CARD_POINTS_IN_HAND = 152
"""Every card's points together, whichever suit is trumps (the last trick's 10 apart)."""

# Actions (the module docstring of ``rules`` lists them).
BELLA_BASE = 32
"""``BELLA_BASE + c``: play K or Q of trumps ``c`` and announce bella."""
PASS = 64
ACCEPT = 65
NAME_BASE = 66
"""``NAME_BASE + s``: name suit ``s`` (``Suit - 1``) trumps."""
EXCHANGE = 70
KEEP = 71
NO_SEQUENCE = 72
DECLARE_BASE = 128
"""``DECLARE_BASE + 64*s + 8*(length-1) + low``: declare a run (``Run.action``)."""
DECLARE_PER_SUIT = 64
"""Declaring actions of one suit: a length 1..8 and a lowest rank index 0..7 (not all runs)."""
DECLARE_END = DECLARE_BASE + DECLARE_PER_SUIT * SUITS
"""Declaring actions are below this."""

# Phases of a hand.
BIDDING_TURN_UP = 1
BIDDING_OTHER_SUIT = 2
DIX = 3
DECLARING = 4
PLAYING = 5
GAME_OVER = 6

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
R7, R8, R9, RT, RJ, RQ, RK, RA = range(CARDS_PER_SUIT)
SUIT_BITS = (1 << CARDS_PER_SUIT) - 1
"""One suit's cards as the lowest byte of a mask (bit ``r`` for rank index ``r``)."""

SEQUENCE_OF_THREE = 20
SEQUENCE_OF_FOUR_OR_MORE = 50


def card_id(suit: Suit, rank: Rank) -> int:
    """The id of a card."""
    return CARDS_PER_SUIT * (suit - 1) + RANKS.index(rank)  # suit_card, inlined


def suit_card(suit: int, rank_index: int) -> int:
    """The id of the card of rank index ``rank_index`` in suit ``suit`` (``Suit - 1``)."""
    return CARDS_PER_SUIT * suit + rank_index


def suit_of(card: int) -> int:
    """The suit index (``Suit - 1``) of a card id."""
    return card // CARDS_PER_SUIT


def rank_index(card: int) -> int:
    """The rank index 0..7 (7 to ace) of a card id."""
    return card % CARDS_PER_SUIT


def bid_trump(action: int, turn_up: int) -> int:
    """The suit (``Suit - 1``) a bid makes trumps: the turn-up's for ACCEPT, the suit named;
    -1 for a pass."""
    if action == ACCEPT:
        return suit_of(turn_up)
    if NAME_BASE <= action < NAME_BASE + SUITS:
        return action - NAME_BASE
    return -1


def card_suit(card: int) -> Suit:
    """The ``Suit`` of a card id."""
    return Suit(suit_of(card) + 1)


def card_rank(card: int) -> Rank:
    """The ``Rank`` of a card id."""
    return RANKS[rank_index(card)]


def card_bit(card: int) -> int:
    """A card id as a one-card mask."""
    return 1 << card


def cards_in(mask: int, first: int, count: int) -> tuple[int, ...]:
    """The card ids of ``count`` bits of ``mask`` from bit ``first``, ascending (readable form
    of the tables ``cards_of`` looks up)."""
    return tuple(first + bit for bit in range(count) if mask >> (first + bit) & 1)


_LOW_BITS, _MID_BITS, _HIGH_BITS = 11, 11, 10
"""``cards_of`` splits a mask into bits 0-10, 11-21 and 22-31: three lookups of tables small
enough to build at import (``LOW_CARDS[mask & LOW_MASK]``, ``MID_CARDS[mask >> MID_SHIFT &
MID_MASK]``, ``HIGH_CARDS[mask >> HIGH_SHIFT]``)."""
LOW_MASK = (1 << _LOW_BITS) - 1
MID_SHIFT = _LOW_BITS
MID_MASK = (1 << _MID_BITS) - 1
HIGH_SHIFT = _LOW_BITS + _MID_BITS
LOW_CARDS = tuple(cards_in(m, 0, _LOW_BITS) for m in range(1 << _LOW_BITS))
MID_CARDS = tuple(cards_in(m << MID_SHIFT, MID_SHIFT, _MID_BITS) for m in range(1 << _MID_BITS))
HIGH_CARDS = tuple(
    cards_in(m << HIGH_SHIFT, HIGH_SHIFT, _HIGH_BITS) for m in range(1 << _HIGH_BITS)
)


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask, ascending."""
    return (
        LOW_CARDS[mask & LOW_MASK]
        + MID_CARDS[mask >> MID_SHIFT & MID_MASK]
        + HIGH_CARDS[mask >> HIGH_SHIFT]
    )


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
        return ((1 << self.length) - 1) << suit_card(self.suit, self.low)

    @property
    def action(self) -> int:
        """The action that declares it."""
        per_suit, per_length = DECLARE_PER_SUIT, CARDS_PER_SUIT
        return DECLARE_BASE + per_suit * self.suit + per_length * (self.length - 1) + self.low

    @classmethod
    def from_action(cls, action: int) -> Run:
        """The sequence a declaring action names (not checked against any hand)."""
        suit, rest = divmod(action - DECLARE_BASE, DECLARE_PER_SUIT)
        length_less_one, low = divmod(rest, CARDS_PER_SUIT)
        return cls(suit, low, length_less_one + 1)


# -- the view's types --------------------------------------------------------------------------


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


# -- observe -----------------------------------------------------------------------------------


_new = tuple.__new__
"""``_new(Cls, (a, b, ...))`` builds a NamedTuple from its fields in order, without the keyword
handling of ``Cls(...)``: for the views ``observe`` builds at every decision."""

FinishedTrick = tuple[int, int, int, int]
"""How the rules keep a finished trick: (leader, card led, card followed, winner)."""


class _TrickViews(dict[FinishedTrick, Trick]):
    """A finished trick's ``Trick`` by the rules' (leader, lead, follow, winner), made on first
    use and shared by every state (4,000 at most)."""

    __slots__ = ()

    def __missing__(self, trick: FinishedTrick) -> Trick:
        leader, lead, follow, winner = trick
        view = self[trick] = Trick(leader, (lead, follow), winner)
        return view


_TRICK_VIEWS = _TrickViews()
_WINNER = itemgetter(3)
_NEXT_TRICK = (Trick(0, (), -1), Trick(1, (), -1))
"""The current trick before its lead, by leader: shared by every observation."""
_LED_TRICK = tuple(Trick(leader, (card,), -1) for leader in (0, 1) for card in range(DECK_SIZE))
"""The current trick once led, at ``DECK_SIZE * leader + card``: shared by every observation."""

TableCache = tuple[TableView, TableView]
"""The table as seat 0 and as seat 1 sees it (one object but while a scoring sequence is
hidden), as of ``view_table_changes_cache``."""
SeatCache = tuple[int, SeatView, SeatView, int, SeatView, SeatView]
"""Per seat: the ``seat_changes`` its views are as of, the seat as the other seat sees it and
as it sees itself (one object but while its scoring sequence is hidden)."""
TrickCache = tuple[tuple[int, int], tuple[int, int], tuple[Trick, ...]]
"""(tricks won, card points, finished tricks) as of ``view_trick_changes_cache``."""
FinishedCache = tuple[list[FinishedTrick], tuple[Trick, ...], int]
"""One hand's list of finished tricks, their views and seat 1's count of them, which the next
``TrickCache`` extends by the trick just finished."""

_NO_SEAT = SeatView(0, 0, -1, 0, (), False, ())
_NO_TABLE = TableView(0, 0, 0, 0, 0, -1, -1, (), -1, -1, (_NO_SEAT, _NO_SEAT), -1, False, ())
NO_TABLES: TableCache = (_NO_TABLE, _NO_TABLE)
NO_SEATS: SeatCache = (-1, _NO_SEAT, _NO_SEAT, -1, _NO_SEAT, _NO_SEAT)
NO_TRICKS: TrickCache = ((0, 0), (0, 0), ())
"""What a state's caches start from, as of change -1 (the rules count from 0)."""


def observe(state: KlaberjassState, seat: int) -> KlaberjassObservation:
    """Everything ``seat`` may see now (``KlaberjassState.observe``)."""
    if state.view_table_changes_cache != state.table_changes:
        _tables(state)
    if state.view_trick_changes_cache != state.trick_changes:
        _tricks(state)
    tricks = state.view_trick_cache
    hands = state.hands
    lead = state.lead
    if lead >= 0:
        current = _LED_TRICK[DECK_SIZE * (1 - state.to_act) + lead]
    else:  # the next leader: the seat to play, or the non-dealer before play starts
        current = _NEXT_TRICK[state.to_act if state.phase == PLAYING else 1 - state.dealer]
    return _new(
        KlaberjassObservation,
        (
            seat,  # seat
            state.view_table_cache[seat],  # table
            hands[seat],  # hand
            (hands[0].bit_count(), hands[1].bit_count()),  # hand_sizes
            tricks[0],  # tricks_won
            tricks[1],  # card_points
            current,  # current_trick
            tricks[2],  # completed_tricks
        ),
    )


def public_table(state: KlaberjassState) -> PublicTable:
    """The turn-up of this hand, which every seat sees (after a dix exchange it is in the
    exchanger's hand, known to both)."""
    return PublicTable(turn_up=state.turn_up)


def _tricks(state: KlaberjassState) -> None:
    """The tricks won, card points and finished tricks as of ``trick_changes``."""
    completed = state.completed
    last = state.view_finished_cache
    if last is not None and last[0] is completed and len(last[1]) == len(completed) - 1:
        trick = completed[-1]
        views = last[1] + (_TRICK_VIEWS[trick],)
        taken = last[2] + trick[3]
    else:
        views = tuple(map(_TRICK_VIEWS.__getitem__, completed))
        taken = sum(map(_WINNER, completed))
    state.view_finished_cache = (completed, views, taken)
    points = state.card_points
    state.view_trick_cache = ((len(views) - taken, taken), (points[0], points[1]), views)
    state.view_trick_changes_cache = state.trick_changes


def _tables(state: KlaberjassState) -> None:
    """The table as each seat sees it, as of ``table_changes``."""
    seats = state.view_seat_cache
    changes0, changes1 = state.seat_changes
    if seats[0] != changes0 or seats[3] != changes1:
        seats = _seat_views(state, seats, changes0, changes1)
    _, public0, own0, _, public1, own1 = seats
    table = _new(
        TableView,
        (
            state.target,  # target_score
            state.hand_number,  # hand_number
            state.dealer,  # dealer
            state.phase,  # phase
            state.turn_up,  # turn_up
            state.trump,  # trump
            state.maker,  # maker
            tuple(state.bids),  # bids
            state.bottom_card,  # bottom_card
            state.dix_by,  # dix_exchanged_by
            (own0, public1),  # seats (as seat 0 sees them)
            state.sequence_winner,  # sequence_winner
            state.declarations_done,  # declarations_done
            state.previous_hands,  # previous_hands
        ),
    )
    if own0 is public0 and own1 is public1:
        state.view_table_cache = (table, table)
    else:
        state.view_table_cache = (table, table._replace(seats=(public0, own1)))
    state.view_table_changes_cache = state.table_changes


def _seat_views(
    state: KlaberjassState, seats: SeatCache, changes0: int, changes1: int
) -> SeatCache:
    """The seats' views as of ``seat_changes`` (``changes0``, ``changes1``), from ``seats``
    where a seat is unchanged."""
    zero = seats[:3] if seats[0] == changes0 else (changes0, *_seat_pair(state, 0))
    one = seats[3:] if seats[3] == changes1 else (changes1, *_seat_pair(state, 1))
    seats = state.view_seat_cache = zero + one
    return seats


def _seat_pair(state: KlaberjassState, seat: int) -> tuple[SeatView, SeatView]:
    """``seat`` as the other seat sees it and as it sees itself."""
    hidden = state.sequence_cards[seat] and not state.sequences_shown
    public = _seat_view(state, seat, shows_sequence=not hidden)
    return public, _seat_view(state, seat, shows_sequence=True) if hidden else public


def _seat_view(state: KlaberjassState, seat: int, shows_sequence: bool) -> SeatView:
    """What is public about ``seat``; its scoring sequence's cards if ``shows_sequence``."""
    declared = state.declared[seat]
    sequence = state.sequence_cards[seat]
    known = state.known & state.hands[seat]
    return _new(
        SeatView,
        (
            state.scores[seat],  # score
            declared.length if declared else 0,  # declared_length
            declared.top if declared else -1,  # declared_top
            state.sequence_points[seat],  # sequence_points
            cards_of(sequence) if sequence and shows_sequence else (),  # shown_sequences
            state.bella[seat],  # bella
            cards_of(known) if known else (),  # known_cards
        ),
    )
