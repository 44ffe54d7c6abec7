"""What one Mau-Mau seat sees (``observe``), and the action encoding every reader shares.

The view is the only way a position leaves the rules: the codec, the bots and the tests read
``MauMauObservation``s, never the state. The parts every seat sees alike (the ``table``; the
fines and bars) are kept between observations, keyed on the counters the rules bump when they
change (``MauMauState.table_changes``, ``penalty_changes``), so consecutive observations share
them and the codec encodes each once. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from referee.games.api import PublicTable
from referee.games.cards import Rank

if TYPE_CHECKING:
    from referee.games.mau_mau.rules import MauMauState

DRAW = 52
"""Action: no legal discard, so draw one card (and be fined)."""

PASS = 53
"""Action (draw_then_may_play only): keep the playable card just drawn and end the turn."""

ANNOUNCE_SHIFT = 6
SECOND_JACK_SHIFT = 9
LAST_CARD = 1 << 12
"""Action flag: the "last card" announcement."""

SUIT_SIZE = 13
"""Cards a suit: card ``SUIT_SIZE * suit + rank index`` (rank index 0 is the 2)."""
SUIT_BITS = (1 << SUIT_SIZE) - 1
"""One suit's bits of a card mask, once shifted down by ``SUIT_SIZE * suit``."""
DIAMONDS_SHIFT, HEARTS_SHIFT, SPADES_SHIFT = SUIT_SIZE, 2 * SUIT_SIZE, 3 * SUIT_SIZE

_JACK = Rank.JACK - 2
_ALL = (1 << 52) - 1
_new = tuple.__new__


def discard_action(
    card: int, announce: int = 0, second_jack: int | None = None, last_card: bool = False
) -> int:
    """The action id of a discard (``announce`` and the second Jack's suit as ``Suit`` values)."""
    action = card | announce << ANNOUNCE_SHIFT
    if second_jack is not None:
        first, second = sorted((card, second_jack))
        action = first | announce << ANNOUNCE_SHIFT | (second // SUIT_SIZE + 1) << SECOND_JACK_SHIFT
    return action | LAST_CARD if last_card else action


def action_cards(action: int) -> tuple[int, ...]:
    """The card ids an action discards (empty for DRAW and PASS)."""
    if action in (DRAW, PASS):
        return ()
    first = action & 63
    second = action >> SECOND_JACK_SHIFT & 7
    return (first,) if not second else (first, SUIT_SIZE * (second - 1) + _JACK)


@dataclass(frozen=True)
class DealResult:
    """How one finished deal went."""

    deal_number: int
    dealer: int
    start_card: int
    winner: int
    final_jacks: int
    multiplier: int
    hand_points: tuple[int, ...]
    fines: tuple[int, ...]
    points: tuple[int, ...]
    tallies: tuple[int, ...]


class MauMauTable(NamedTuple):
    """What every seat sees that changes only when a deal starts or ends, a Queen reverses
    the direction or a drawn card may be played: one object shared by all observations until
    then, so the codec encodes it once."""

    num_seats: int
    scoring: str
    target: int
    cannot_discard: str
    jack_wild: bool
    deal_number: int
    dealer: int
    clockwise: bool
    playing_drawn_card: bool
    start_card: int
    tallies: tuple[int, ...]
    previous_deals: tuple[DealResult, ...]


class MauMauObservation(NamedTuple):
    """What one seat sees: its own hand, hand sizes of the others, the pile; never the stock."""

    seat: int
    table: MauMauTable
    hand: int
    """The seat's cards as a bitmask of card ids (``set_bits`` lists them)."""
    hand_sizes: tuple[int, ...]
    fines: tuple[int, ...]
    """Each seat's fines this deal (the same tuple until a seat is fined)."""
    barred: tuple[bool, ...]
    """Each seat's bar (option barred_for_deal; the same tuple until it changes)."""
    discard_pile: tuple[int, ...]
    """Oldest first; the last card is the one to match."""
    stock_size: int
    announced_suit: int
    any_card: bool
    drawn_card: int | None
    """The card just drawn, to the seat that may play it; None otherwise."""


TableCache = tuple[int, MauMauTable]
"""(``table_changes``, the table as of then)."""
PenaltyCache = tuple[int, tuple[int, ...], tuple[bool, ...]]
"""(``penalty_changes``, the fines and the bars as of then)."""


def observe(state: MauMauState, seat: int) -> MauMauObservation:
    """Everything ``seat`` may see now (``MauMauState.observe``)."""
    table = state.view_table_cache
    if table is None or table[0] != state.table_changes:
        table = state.view_table_cache = (state.table_changes, _table(state))
    penalties = state.view_penalty_cache
    if penalties is None or penalties[0] != state.penalty_changes:
        penalties = state.view_penalty_cache = (
            state.penalty_changes,
            tuple(state.fines),
            tuple(state.barred),
        )
    return _new(
        MauMauObservation,
        (
            seat,  # seat
            table[1],  # table
            state.hands[seat],  # hand
            tuple(state.counts),  # hand_sizes
            penalties[1],  # fines
            penalties[2],  # barred
            state.pile,  # discard_pile
            len(state.stock),  # stock_size
            state.announced,  # announced_suit
            state.playable == _ALL,  # any_card
            state.drawn if seat == state.to_act else None,  # drawn_card
        ),
    )


def public_table(state: MauMauState) -> PublicTable:
    """What spectators see (``State.public_table``): the top of the pile, the suit a Jack
    announced and how many cards each seat holds; never a card in a hand or the stock."""
    pile = state.pile
    return PublicTable(
        pile_top=pile[-1] if pile else None,
        announced_suit=state.announced,
        hand_sizes=tuple(state.counts),
    )


def _table(state: MauMauState) -> MauMauTable:
    """The part of every observation that changes only at the events ``table_changes``
    counts."""
    table: MauMauTable = _new(
        MauMauTable,
        (
            state.num_seats,
            "negative" if state.negative else "positive",
            state.target,
            state.cannot_discard,
            state.jack_wild,
            state.deal_number,
            state.dealer,
            state.direction == 1,
            state.drawn is not None,
            state.start_card,
            tuple(state.tallies),
            tuple(state.previous_deals),
        ),
    )
    return table
