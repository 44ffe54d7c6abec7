"""What one Pinochle seat sees (``observe``), and the names every reader of it shares.

The view is the only way a position leaves the rules: the codec, the bots and the tests read
``PinochleObservation``s, never the state. What both players see that changes only between
tricks, in a meld turn or when a card known to the other player is played (the ``table``) is
kept between observations, keyed on ``PinochleState.table_changes`` (the rules bump it at each
of those events), so consecutive observations share it and the codec encodes it once; each
seat's part of it is kept while it is unchanged. The observation of the seat to act also
carries its legal card plays as a mask (``legal_cards``), so the codec writes the legal actions
from the view alone.

Also here: the card ids, the action ids and the meld table, which the rules, the codec and the
bots share. Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from referee.games.api import PublicTable
from referee.games.bits import suit_card_tables
from referee.games.cards import Rank, Suit, card_name

if TYPE_CHECKING:
    from referee.games.pinochle.rules import PinochleState

NUM_CARDS = 48
HAND_SIZE = 12
PHASE1_TRICKS = 12
TRICKS_PER_HAND = 24

NINE, JACK, QUEEN, KING, TEN, ACE = range(6)
RANKS = (Rank.NINE, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.TEN, Rank.ACE)
"""Engine rank index (ascending strength) to the shared ``Rank``."""
CARD_POINTS = (0, 2, 3, 4, 10, 11)
"""Points of a card in tricks, by engine rank index."""
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)

MELD_BASE = 48
NUM_MELDS = 212
DIX_BASE = MELD_BASE + NUM_MELDS
DRAW = DIX_BASE + 2
DECLARE_OUT = DRAW + 1

# Meld kinds (also the wire's PinochleMeldType numbering) and classes.
MARRIAGE, ROYAL_MARRIAGE, FLUSH, PINOCHLE, FOUR_ACES, FOUR_KINGS, FOUR_QUEENS, FOUR_JACKS = range(
    1, 9
)
MELD_NAMES = {
    MARRIAGE: "marriage",
    ROYAL_MARRIAGE: "royal marriage",
    FLUSH: "flush",
    PINOCHLE: "pinochle",
    FOUR_ACES: "four aces",
    FOUR_KINGS: "four kings",
    FOUR_QUEENS: "four queens",
    FOUR_JACKS: "four jacks",
}
MELD_POINTS = {
    MARRIAGE: 20,
    ROYAL_MARRIAGE: 40,
    FLUSH: 150,
    PINOCHLE: 40,
    FOUR_ACES: 100,
    FOUR_KINGS: 80,
    FOUR_QUEENS: 60,
    FOUR_JACKS: 40,
}
CLASS_A, CLASS_B, CLASS_C = range(3)
MELD_CLASS = {
    MARRIAGE: CLASS_A,
    ROYAL_MARRIAGE: CLASS_A,
    FLUSH: CLASS_A,
    PINOCHLE: CLASS_C,
    FOUR_ACES: CLASS_B,
    FOUR_KINGS: CLASS_B,
    FOUR_QUEENS: CLASS_B,
    FOUR_JACKS: CLASS_B,
}

# -- cards ----------------------------------------------------------------------------------


def card_id(suit: int, rank: int, copy: int = 0) -> int:
    """The id of a card from engine suit (0..3), engine rank (0..5) and copy."""
    return 12 * suit + 2 * rank + copy


def card_suit(card: int) -> int:
    """Engine suit 0..3 (♣ ♦ ♥ ♠) of a card id."""
    return card // 12


def card_rank(card: int) -> int:
    """Engine rank 0..5 (9 J Q K 10 A) of a card id."""
    return (card >> 1) % 6


def pinochle_card_name(card: int) -> str:
    """``"QS#1"``: the queen of spades, copy 1."""
    return f"{card_name(Suit(card // 12 + 1), RANKS[(card >> 1) % 6])}#{card & 1}"


def parse_card(text: str) -> int:
    """The id of ``"QS#1"`` (copy defaults to 0: ``"QS"``); also ``10``/``T`` and suit symbols."""
    from referee.games.cards import parse_card as parse_face

    face, _, copy = text.partition("#")
    suit, rank = parse_face(face)
    return card_id(suit - 1, RANKS.index(rank), int(copy or 0))


SUIT_BITS = 0xFFF
"""The 12 card bits of one suit: suit ``s`` of a mask is ``mask >> 12 * s & SUIT_BITS``."""
SUIT_MASKS = tuple(SUIT_BITS << (12 * s) for s in range(4))
ALL_CARDS_MASK = (1 << NUM_CARDS) - 1


SUIT_CARDS = suit_card_tables(4, 12)
"""``[suit][bits]``: the card ids of those 12 bits of the suit, ascending."""
BOTH_COPIES = 3
"""The two copy bits of a card face: ``mask >> (card & ~1) & BOTH_COPIES``."""


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask, ascending."""
    return (
        SUIT_CARDS[0][mask & SUIT_BITS]
        + SUIT_CARDS[1][(mask >> 12) & SUIT_BITS]
        + SUIT_CARDS[2][(mask >> 24) & SUIT_BITS]
        + SUIT_CARDS[3][(mask >> 36) & SUIT_BITS]
    )


def mask_of(cards: Sequence[int]) -> int:
    """The bitmask of some card ids."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


# -- melds


@dataclass(frozen=True)
class MeldSpec:
    """One entry of the meld table: a meld type over specific physical cards."""

    kind: int
    """MARRIAGE (royal when ``suit`` is trumps), FLUSH, PINOCHLE or FOUR_*."""
    suit: int
    """The suit of a marriage or flush; -1 otherwise."""
    cards: tuple[int, ...]
    mask: int

    def kind_in(self, trump: int) -> int:
        """The meld type once trump is known (a marriage in trumps is royal)."""
        if self.kind == MARRIAGE and self.suit == trump:
            return ROYAL_MARRIAGE
        return self.kind

    def points(self, trump: int) -> int:
        """What the meld scores with this trump."""
        return MELD_POINTS[self.kind_in(trump)]


def _meld_table() -> tuple[MeldSpec, ...]:
    table: list[MeldSpec] = []
    for suit in range(4):
        for king in range(2):
            for queen in range(2):
                cards: tuple[int, ...] = (card_id(suit, KING, king), card_id(suit, QUEEN, queen))
                table.append(MeldSpec(MARRIAGE, suit, cards, mask_of(cards)))
    for suit in range(4):
        for bits in range(32):
            ranks = (ACE, TEN, KING, QUEEN, JACK)
            cards = tuple(card_id(suit, r, (bits >> (4 - i)) & 1) for i, r in enumerate(ranks))
            table.append(MeldSpec(FLUSH, suit, cards, mask_of(cards)))
    for queen in range(2):
        for jack in range(2):
            cards = (card_id(SPADES, QUEEN, queen), card_id(DIAMONDS, JACK, jack))
            table.append(MeldSpec(PINOCHLE, -1, cards, mask_of(cards)))
    for kind, rank in (
        (FOUR_ACES, ACE),
        (FOUR_KINGS, KING),
        (FOUR_QUEENS, QUEEN),
        (FOUR_JACKS, JACK),
    ):
        for bits in range(16):
            cards = tuple(card_id(s, rank, (bits >> s) & 1) for s in range(4))
            table.append(MeldSpec(kind, -1, cards, mask_of(cards)))
    assert len(table) == NUM_MELDS
    return tuple(table)


MELDS = _meld_table()


class Meld(NamedTuple):
    """A meld as declared: who, which table entry, its type and points then."""

    seat: int
    meld: int
    kind: int
    cards: tuple[int, ...]
    points: int


class Trick(NamedTuple):
    """A finished trick."""

    leader: int
    cards: tuple[int, int]
    winner: int


@dataclass(frozen=True)
class HandResult:
    """How a finished (or declared) hand went, per seat."""

    dealer: int
    turn_up: int
    meld_points: tuple[int, ...]
    """Melds, turn-up bonus and dix points, as announced."""
    card_points: tuple[int, ...]
    last_trick: tuple[int, ...]
    totals: tuple[int, ...]
    """Scores after the hand."""


class SeatView(NamedTuple):
    """What both players know of one seat this hand, its hand size aside (see ``observe``)."""

    score: int
    """Total of the finished hands."""
    hand_points: int
    """Melds, turn-up bonus and dix points of this hand, as announced."""
    trick_points: int
    tricks_won: int
    tabled: int
    """Melded cards on the table (phase 1), as a bitmask of card ids."""
    known: int
    """Cards in this hand the other player has seen go there (melded, the turn-up): a bitmask."""


class TableView(NamedTuple):
    """Everything both players see that changes only between tricks, in a meld turn, or when a
    tabled card is played: ``observe`` builds it once per change and both seats' observations
    share it (so a codec can keep its bytes while it is the same object)."""

    hand_number: int
    dealer: int
    target: int
    trump: int
    turn_up: int | None
    stock_size: int
    phase: int
    seats: tuple[SeatView, SeatView]
    """Each kept while its fields are unchanged."""
    melds: tuple[Meld, ...]
    """This hand's melds (both seats) in the order declared."""
    trick_leader: int
    completed_tricks: tuple[Trick, ...]
    previous_hands: tuple[HandResult, ...]
    declared_by: int | None


class PinochleObservation(NamedTuple):
    """What one seat sees: its hand, the table, public history; never the other hand or stock.

    Per decision only the fields here change; the rest is the shared ``table``, whose most
    read fields the properties below also give (``obs.trump``).
    """

    seat: int
    table: TableView
    hand: int
    """The seat's cards as a bitmask of card ids (``cards_of`` lists them)."""
    hand_sizes: tuple[int, int]
    current_trick: tuple[int, ...]
    """The card led, if any."""
    meld_options: tuple[int, ...]
    """Meld ids (``MELDS``) the seat may declare now: in its meld turn only."""
    legal_cards: int
    """The cards the seat may play now, as a mask: the seat to act, while cards are played
    (its legal actions are these cards in id order, then declaring out if open); else 0."""

    @property
    def dealer(self) -> int:
        return self.table.dealer

    @property
    def trump(self) -> int:
        return self.table.trump

    @property
    def phase(self) -> int:
        return self.table.phase

    @property
    def completed_tricks(self) -> tuple[Trick, ...]:
        return self.table.completed_tricks

    @property
    def trick_points(self) -> tuple[int, int]:
        seat0, seat1 = self.table.seats
        return seat0.trick_points, seat1.trick_points


PHASE_STOCK = 1
"""Phase 1: tricks while the stock lasts."""
PHASE_MELD = 2
"""Phase 1, after a trick: the winner may meld / exchange the dix before drawing."""
PHASE_NO_STOCK = 3
"""Phase 2: tricks after the stock is out."""
PHASE_OVER = 4
"""The game is over."""


_new = tuple.__new__
"""``_new(Cls, (a, b, ...))`` builds a NamedTuple from its fields in order, several times
cheaper than ``Cls(a=a, ...)``: for the views ``observe`` builds (fields commented in order)."""
_CURRENT_TRICKS = (*((card,) for card in range(NUM_CARDS)), ())
"""``[lead]``: the current trick's cards, ``()`` at ``lead == -1`` (no card led)."""
_NO_MELDS: tuple[int, ...] = ()
_NO_SEAT = SeatView(-1, -1, -1, -1, -1, -1)
"""A seat view no seat has: what the first table compares its seats with."""
_MELD_IDS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""Meld ids by meld actions (``meld_ids``), kept: a hand holds few distinct sets."""
_MELD_IDS_LIMIT = 4096


def observe(state: PinochleState, seat: int) -> PinochleObservation:
    """Everything ``seat`` may see now (``PinochleState.observe``)."""
    if state.view_changes_cache == state.table_changes:
        table = state.view_table_cache
    else:
        table = state.view_table_cache = _table(state)
        state.view_changes_cache = state.table_changes
    hands = state.hands
    to_act = state.to_act
    return _new(
        PinochleObservation,
        (
            seat,  # seat
            table,  # table
            hands[seat],  # hand
            (hands[0].bit_count(), hands[1].bit_count()),  # hand_sizes
            _CURRENT_TRICKS[state.lead],  # current_trick
            meld_ids(state.meld_actions())  # meld_options
            if state.phase == PHASE_MELD and seat == to_act
            else _NO_MELDS,
            state.legal_cards() if seat == to_act else 0,  # legal_cards
        ),
    )


def meld_ids(actions: tuple[int, ...]) -> tuple[int, ...]:
    """The meld ids (``MELDS``) of some meld actions."""
    ids = _MELD_IDS.get(actions)
    if ids is None:
        if len(_MELD_IDS) >= _MELD_IDS_LIMIT:
            _MELD_IDS.clear()
        ids = _MELD_IDS[actions] = tuple(action - MELD_BASE for action in actions)
    return ids


def public_table(state: PinochleState) -> PublicTable:
    """What spectators see (``State.public_table``): the turn-up while it lies under the stock.

    During a meld turn it is shown as it will be once the draw that follows is made: whether a
    trick's winner has a meld turn at all depends on his hand, so the table must not show that
    the draw is pending."""
    turn_up = state.turn_up
    last_draw_pending = state.phase == PHASE_MELD and state.stock_pos + 1 >= len(state.stock)
    return PublicTable(turn_up=turn_up if turn_up >= 0 and not last_draw_pending else None)


def _table(state: PinochleState) -> TableView:
    """The public table now, keeping the seat views that did not change (``view_seats_cache``)."""
    scores, hand_points, trick_points = state.scores, state.hand_points, state.trick_points
    tricks_won, tabled, known = state.tricks_won, state.tabled, state.known
    seat0 = (scores[0], hand_points[0], trick_points[0], tricks_won[0], tabled[0], known[0])
    seat1 = (scores[1], hand_points[1], trick_points[1], tricks_won[1], tabled[1], known[1])
    view0, view1 = state.view_seats_cache or (_NO_SEAT, _NO_SEAT)
    if view0 != seat0:
        view0 = _new(SeatView, seat0)
    if view1 != seat1:
        view1 = _new(SeatView, seat1)
    state.view_seats_cache = seats = (view0, view1)
    turn_up = state.turn_up
    return _new(
        TableView,
        (
            state.hand_number,  # hand_number
            state.dealer,  # dealer
            state.target,  # target
            state.trump,  # trump
            turn_up if turn_up >= 0 else None,  # turn_up
            len(state.stock) - state.stock_pos,  # stock_size
            state.phase,  # phase
            seats,  # seats
            state.melds,  # melds
            state.trick_leader,  # trick_leader
            state.completed,  # completed_tricks
            state.previous_hands,  # previous_hands
            state.declared_by,  # declared_by
        ),
    )
