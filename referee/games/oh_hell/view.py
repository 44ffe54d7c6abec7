"""What one Oh Hell seat sees (``observe``), and the names every reader of it shares.

The view is the only way a position leaves the rules: the codec, the bots and the tests read
``OhHellObservation``s, never the state. Everything every seat sees alike is kept between
observations, keyed on ``OhHellState.public_changes`` (the rules bump it whenever a bid, a
finished trick or a new hand changes what is public), so consecutive observations share their
tuples and the codec compares them by identity. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from referee.games.api import PublicTable
from referee.games.bits import suit_card_tables

if TYPE_CHECKING:
    from referee.games.oh_hell.rules import OhHellState

BID_BASE = 52
"""Action ``BID_BASE + b`` is a bid of ``b`` tricks; actions ``0..51`` play that card."""

MAX_SEATS = 7

SUIT_SIZE = 13
"""Cards a suit: card ``SUIT_SIZE * suit + rank index`` (clubs 0..12, then ♦ ♥ ♠)."""
SUIT_BITS = (1 << SUIT_SIZE) - 1
"""One suit's bits of a hand mask, once shifted down by ``SUIT_SIZE * suit``."""
DIAMONDS_SHIFT, HEARTS_SHIFT, SPADES_SHIFT = SUIT_SIZE, 2 * SUIT_SIZE, 3 * SUIT_SIZE


@dataclass(frozen=True)
class HandResult:
    """How one finished hand went for every seat."""

    hand_size: int
    dealer: int
    trump_card: int
    bids: tuple[int, ...]
    tricks: tuple[int, ...]
    points: tuple[int, ...]


Trick = tuple[int, tuple[int, ...], int]
"""A finished trick: (leader, cards in play order, winner)."""


class OhHellObservation(NamedTuple):
    """What one seat sees: its own hand and everything public, never another hand or the deck.

    A NamedTuple, like every game's observation: one is built per decision, and a frozen
    dataclass costs about three times as much to construct (benchmarks/decision_cost.py).
    """

    seat: int
    num_seats: int
    deal_style: str
    scoring: str
    hand_number: int
    num_hands: int
    hand_size: int
    dealer: int
    trump_card: int
    hand: tuple[int, ...]
    bids: tuple[int | None, ...]
    tricks_won: tuple[int, ...]
    trick_leader: int
    current_trick: tuple[int, ...]
    completed_tricks: tuple[Trick, ...]
    scores: tuple[int, ...]
    previous_hands: tuple[HandResult, ...]
    bidding: bool


class PublicView(NamedTuple):
    """What every seat sees alike but the current trick, as of one ``public_changes``
    (``observe`` keeps the latest in ``OhHellState.view_cache``)."""

    changes: int
    bidding: bool
    deal_style: str
    scoring: str
    hand_number: int
    num_hands: int
    hand_size: int
    dealer: int
    trump_card: int
    bids: tuple[int | None, ...]
    tricks_won: tuple[int, ...]
    completed: tuple[Trick, ...]
    scores: tuple[int, ...]
    previous: tuple[HandResult, ...]


_CLUB_CARDS, _DIAMOND_CARDS, _HEART_CARDS, _SPADE_CARDS = suit_card_tables(4, SUIT_SIZE)
_new_tuple = tuple.__new__


def public_table(state: OhHellState) -> PublicTable:
    """What spectators see (``State.public_table``): the trump card turned up this hand."""
    return PublicTable(turn_up=state.trump_card)


def observe(state: OhHellState, seat: int) -> OhHellObservation:
    """Everything ``seat`` may see now (``OhHellState.observe``)."""
    public = state.view_cache
    if public is None or public[0] != state.public_changes:
        public = state.view_cache = _public_view(state, public)
    (
        _,
        bidding,
        deal_style,
        scoring,
        hand_number,
        num_hands,
        hand_size,
        dealer,
        trump_card,
        bids,
        tricks_won,
        completed,
        scores,
        previous,
    ) = public
    hand = state.hands[seat]
    # Positionally, without NamedTuple's keyword __new__: one observation per decision.
    return _new_tuple(
        OhHellObservation,
        (
            seat,
            state.num_seats,
            deal_style,
            scoring,
            hand_number,
            num_hands,
            hand_size,
            dealer,
            trump_card,
            _CLUB_CARDS[hand & SUIT_BITS]  # the hand, in id order as set_bits(hand)
            + _DIAMOND_CARDS[hand >> DIAMONDS_SHIFT & SUIT_BITS]
            + _HEART_CARDS[hand >> HEARTS_SHIFT & SUIT_BITS]
            + _SPADE_CARDS[hand >> SPADES_SHIFT],
            bids,
            tricks_won,
            state.trick_leader,
            tuple(state.trick),
            completed,
            scores,
            previous,
            bidding,
        ),
    )


def _public_view(state: OhHellState, old: PublicView | None) -> PublicView:
    """The public part as of now, keeping ``old``'s tuples that cannot have changed (scores
    and finished hands within a hand, bids once the bidding is over), so codecs that compare
    parts by identity find them unchanged."""
    hand_number = state.hand_index + 1
    if (
        old is not None
        and old.hand_number == hand_number
        and len(old.previous) == len(state.previous_hands)
    ):
        bids = tuple(state.bids) if old.bidding else old.bids
        scores, previous = old.scores, old.previous
    else:
        bids, scores, previous = (
            tuple(state.bids),
            tuple(state.scores),
            tuple(state.previous_hands),
        )
    return PublicView(
        state.public_changes,
        state.bidding,
        state.deal_style,
        state.scoring,
        hand_number,
        len(state.schedule),
        state.hand_size,
        state.dealer,
        state.trump_card,
        bids,
        tuple(state.tricks_won),
        tuple(state.completed_tricks),
        scores,
        previous,
    )
