"""What one King seat sees (``observe``), and the names every reader of it shares.

The view is the only way a position leaves the rules: the codec, the bots and the tests read
``KingObservation``s, never the state. What every seat sees alike is kept between observations,
keyed on two counters the rules bump: ``KingState.trick_changes`` when a trick is taken or a
hand starts or ends (tricks won, points, totals, finished tricks and hands) and
``KingState.call_changes`` at every call of an auction (``AuctionView``). Consecutive
observations share those tuples, so the codec compares them by identity. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from referee.games.bits import suit_card_tables
from referee.games.cards import StandardDeck

if TYPE_CHECKING:
    from referee.games.king.rules import KingState

NUM_SEATS = 4
NUM_TRICKS = 13
NUM_HANDS = 10

# -- contracts (numbers match the wire's ``KingContract``) ----------------------------------------

NO_TRICKS = 1
NO_HEARTS = 2
NO_KINGS_OR_JACKS = 3
NO_QUEENS = 4
NO_KING_OF_HEARTS = 5
NO_LAST_TWO_TRICKS = 6
POSITIVE = 7
"""Contract numbers; hand ``h`` plays ``min(h, 7)``."""

CONTRACT_NAMES = {
    NO_TRICKS: "no tricks",
    NO_HEARTS: "no hearts",
    NO_KINGS_OR_JACKS: "no kings or jacks",
    NO_QUEENS: "no queens",
    NO_KING_OF_HEARTS: "no king of hearts",
    NO_LAST_TWO_TRICKS: "not the last two tricks",
    POSITIVE: "positive",
}

# -- actions --------------------------------------------------------------------------------------

PASS = 52
OFFER_BASE = 52
"""Action ``OFFER_BASE + k`` offers ``k`` tricks (1..13) for the right to name trumps."""
MATCH_BASE = 65
"""Action ``MATCH_BASE + k`` matches the best offer of ``k`` tricks "pela mão"."""
ACCEPT = 79
REFUSE = 80
OPT_OUT = 81
TRUMP_BASE = 82
"""Action ``TRUMP_BASE + s`` names suit index ``s`` (``card // 13``) as trumps."""
MAX_OFFER = 13
NUM_ACTIONS = TRUMP_BASE + 4

# -- phases (numbers match the wire's ``KingPhase``) ---------------------------------------------

PHASE_AUCTION = 1
"""The three bidders speak once each, from the dealer's left."""
PHASE_DECISION = 2
"""The dealer answers the best offer: accept, refuse (or opt out)."""
PHASE_COMPETITION = 3
"""After an acceptance: the bidders outbid or match until two pass in a row."""
PHASE_TRUMP = 4
"""The dealer (no sale) or the buyer names trumps; the dealer may also opt out if allowed."""
PHASE_PLAY = 5
"""Tricks are played."""

# -- hands as bitmasks ----------------------------------------------------------------------------

NUM_CARDS = StandardDeck.SIZE
"""Cards in the deck: card ids ``0..51`` (``StandardDeck``); a module constant, as reading a
class attribute is an unspecialized lookup at every card played."""
SUIT_SIZE = NUM_CARDS // 4
"""Cards per suit: card ``c`` is bit ``c`` of a hand, suit ``c // 13``, rank ``c % 13``."""
SUIT_BITS = (1 << SUIT_SIZE) - 1
"""One suit's bits of a hand, once shifted down by ``SUIT_SIZE * suit``."""
DIAMONDS_SHIFT, HEARTS_SHIFT, SPADES_SHIFT = SUIT_SIZE, 2 * SUIT_SIZE, 3 * SUIT_SIZE
"""How far each suit's bits lie above the clubs'."""

SUIT_CARDS = suit_card_tables(4, SUIT_SIZE)
"""``SUIT_CARDS[s][m]``: the card ids of suit ``s`` whose in-suit bits are ``m``."""
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_CARDS


def cards_of(hand: int) -> tuple[int, ...]:
    """The card ids of a hand mask, ascending (suit by suit)."""
    return (
        _CLUBS[hand & SUIT_BITS]
        + _DIAMONDS[hand >> DIAMONDS_SHIFT & SUIT_BITS]
        + _HEARTS[hand >> HEARTS_SHIFT & SUIT_BITS]
        + _SPADES[hand >> SPADES_SHIFT]
    )


# -- what a seat sees -----------------------------------------------------------------------------


class AuctionView(NamedTuple):
    """The public state of a positive hand's auction."""

    calls: tuple[tuple[int, int], ...]
    """Every call so far as (seat, action): passes, offers, matches and the dealer's answers."""
    best_offer: int
    """The best standing offer in tricks; 0 when there is none."""
    best_bidder: int
    """Who made it; -1 when there is none."""
    minimum_offer: int
    """The smallest offer allowed after the dealer's refusals (1 until he refuses)."""
    highest_offer: int
    """The highest offer made at any point; opting out needs it to be at most 1."""
    accepted: bool
    """Whether the dealer has accepted (the competition between bidders is on or done)."""
    buyer: int
    """The seat that bought the right to name trumps; -1 while unsold or when the dealer plays."""
    price: int
    """The buyer's price in tricks (0 when there is no buyer)."""


@dataclass(frozen=True)
class HandResult:
    """How one finished hand went for every seat."""

    hand_number: int
    contract: int
    dealer: int
    trump: int
    """Suit index of trumps; -1 in negative hands and when the dealer opted out."""
    buyer: int
    price: int
    opted_out: bool
    tricks: tuple[int, ...]
    points: tuple[int, ...]


Trick = tuple[int, tuple[int, ...], int]
"""A finished trick: (leader, cards in play order, winner)."""


class KingObservation(NamedTuple):
    """What one seat sees: its own hand and everything public, never another hand."""

    seat: int
    hand_number: int
    contract: int
    dealer: int
    phase: int
    trump: int
    hand: tuple[int, ...]
    cards_in_hand: tuple[int, ...]
    tricks_won: tuple[int, ...]
    hand_points: tuple[int, ...]
    negative_totals: tuple[int, ...]
    positive_totals: tuple[int, ...]
    auction: AuctionView | None
    trick_leader: int
    current_trick: tuple[int, ...]
    completed_tricks: tuple[Trick, ...]
    previous_hands: tuple[HandResult, ...]


TrickParts = tuple[
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[Trick, ...],
    tuple[HandResult, ...],
]
"""Tricks won, hand points, negative and positive totals, finished tricks, finished hands."""
TrickCache = tuple[int, int, int, TrickParts]
"""(``trick_changes``, hand number, hands finished, the parts as of then)."""
AuctionCache = tuple[int, AuctionView]
"""(``call_changes``, the auction as of then)."""

_new = tuple.__new__
"""Builds a NamedTuple from a tuple of its fields in order, ~5x cheaper than keywords."""


def observe(state: KingState, seat: int) -> KingObservation:
    """Everything ``seat`` may see now (``KingState.observe``)."""
    # Called at every decision: both caches are checked inline (a call costs more than the
    # check) and the observation is built positionally.
    tricks = state.view_trick_cache
    if tricks is None or tricks[0] != state.trick_changes:
        tricks = state.view_trick_cache = _trick_parts(state, tricks)
    tricks_won, hand_points, negative, positive, completed, previous = tricks[3]
    if state.contract == POSITIVE:
        auction = state.view_auction_cache
        if auction is None or auction[0] != state.call_changes:
            auction = state.view_auction_cache = (state.call_changes, _auction_view(state))
        view: AuctionView | None = auction[1]
    else:
        view = None
    hand = state.hands[seat]
    return _new(
        KingObservation,
        (
            seat,  # seat
            state.hand_number,  # hand_number
            state.contract,  # contract
            state.dealer,  # dealer
            state.phase,  # phase
            state.trump,  # trump
            _CLUBS[hand & SUIT_BITS]  # hand, as cards_of(hand) (inlined: once per decision)
            + _DIAMONDS[hand >> DIAMONDS_SHIFT & SUIT_BITS]
            + _HEARTS[hand >> HEARTS_SHIFT & SUIT_BITS]
            + _SPADES[hand >> SPADES_SHIFT],
            tuple(state.hand_sizes),  # cards_in_hand
            tricks_won,  # tricks_won
            hand_points,  # hand_points
            negative,  # negative_totals
            positive,  # positive_totals
            view,  # auction
            state.trick_leader,  # trick_leader
            tuple(state.trick),  # current_trick
            completed,  # completed_tricks
            previous,  # previous_hands
        ),
    )


def _trick_parts(state: KingState, old: TrickCache | None) -> TrickCache:
    """The parts that change only when a trick is taken or a hand starts or ends; within one
    hand the totals and finished hands keep ``old``'s tuples (the codec finds them unchanged)."""
    hand_number, hands_done = state.hand_number, len(state.previous_hands)
    if old is not None and old[1] == hand_number and old[2] == hands_done:
        _, _, negative, positive, _, previous = old[3]
    else:
        negative = tuple(state.negative_totals)
        positive = tuple(state.positive_totals)
        previous = tuple(state.previous_hands)
    parts = (
        tuple(state.tricks_won),
        state.hand_points_so_far(),
        negative,
        positive,
        tuple(state.completed_tricks),
        previous,
    )
    return state.trick_changes, hand_number, hands_done, parts


def _auction_view(state: KingState) -> AuctionView:
    """The auction's public state as of now."""
    view: AuctionView = _new(
        AuctionView,
        (
            tuple(state.calls),  # calls
            state.best_offer,  # best_offer
            state.best_bidder,  # best_bidder
            state.minimum_offer,  # minimum_offer
            state.highest_offer,  # highest_offer
            state.accepted,  # accepted
            state.buyer,  # buyer
            state.price,  # price
        ),
    )
    return view
