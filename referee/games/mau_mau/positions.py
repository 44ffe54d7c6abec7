"""Mau-Mau positions as values: what tests and replays build a state from.

A ``MauMauPosition`` describes one point of a game in words and numbers: the hands, the
discard pile, the stock (drawn from its end), who acts and which way play runs, the suit a
Jack announced, the fines and bars of this deal, a drawn card that may be played, and the
tallies and finished deals before it. What may be played next and the hand sizes follow.
``position_of(state)`` reads one from a state, ``position.state()`` makes a state from one and
``str(position)`` reads aloud. Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from referee.games.api import InvalidPositionError, OptionValue, State
from referee.games.bits import set_bits
from referee.games.cards import StandardDeck
from referee.games.mau_mau.rules import (
    JACKS,
    MAU_MAU,
    MauMauState,
    playable_after_card,
    playable_after_jack,
)
from referee.games.mau_mau.view import DealResult

_ALL = (1 << StandardDeck.SIZE) - 1


@dataclass(frozen=True)
class MauMauPosition:
    """One point of a Mau-Mau game (see the module docstring for what follows from it)."""

    hands: tuple[tuple[int, ...], ...]
    """The cards each seat holds, by seat (card ids, ``StandardDeck``)."""
    pile: tuple[int, ...]
    """The discard pile, oldest first: the last card is the one to match."""
    to_act: int
    stock: tuple[int, ...] = ()
    """The stock in order; cards are drawn from its end."""
    start_card: int | None = None
    """The deal's turned-up start card (its suit doubles the losers' points); None: the
    pile's first card."""
    announced: int | None = None
    """None unless the top card is a Jack played by a seat: then the suit it announced
    (``Suit`` value) or 0 for none."""
    clockwise: bool = True
    fines: tuple[int, ...] = ()
    """Each seat's fines this deal; () for none."""
    barred: tuple[bool, ...] = ()
    """Each seat's bar (``cannot_discard = barred_for_deal``); () for none."""
    drawn: int | None = None
    """The card the seat to act just drew and may play (``draw_then_may_play``)."""
    tallies: tuple[int, ...] = ()
    previous_deals: tuple[DealResult, ...] = ()
    deal_number: int = 1
    dealer: int | None = None
    """None: the seat before the first to act."""
    reshuffles: int = 0
    options: Mapping[str, OptionValue] = field(default_factory=dict)

    @property
    def num_seats(self) -> int:
        return len(self.hands)

    def state(self, rng: random.Random | None = None) -> MauMauState:
        """A state at this position; ``rng`` shuffles and deals after it (default: seed 0)."""
        return _state_of(self, rng or random.Random(0))

    def __str__(self) -> str:
        names = StandardDeck.name
        lines = [
            f"Mau-Mau, {self.num_seats} seats, deal {self.deal_number}, seat {self.to_act} to act"
            f" ({'clockwise' if self.clockwise else 'anticlockwise'}),"
            f" pile {' '.join(map(names, self.pile))}, {len(self.stock)} in stock",
        ]
        for seat, cards in enumerate(self.hands):
            lines.append(f"seat {seat}: {' '.join(map(names, cards)) or '-'}")
        return "\n".join(lines)


def position_of(state: State) -> MauMauPosition:
    """The position ``state`` is at (a ``MauMauState``)."""
    if not isinstance(state, MauMauState):
        raise TypeError(f"not a Mau-Mau state: {type(state).__name__}")
    top = state.pile[-1]
    announced: int | None = None
    if top in _JACK_CARDS and (state.announced or state.playable == _ALL):
        announced = state.announced
    return MauMauPosition(
        hands=tuple(set_bits(mask) for mask in state.hands),
        pile=state.pile,
        to_act=state.to_act,
        stock=tuple(state.stock),
        start_card=state.start_card,
        announced=announced,
        clockwise=state.direction == 1,
        fines=tuple(state.fines),
        barred=tuple(state.barred),
        drawn=state.drawn,
        tallies=tuple(state.tallies),
        previous_deals=tuple(state.previous_deals),
        deal_number=state.deal_number,
        dealer=state.dealer,
        reshuffles=state.reshuffles,
        options=dict(state.options),
    )


_JACK_CARDS = frozenset(set_bits(JACKS))


def _state_of(position: MauMauPosition, rng: random.Random) -> MauMauState:
    n = position.num_seats
    options = MAU_MAU.resolve_options(position.options)
    if not position.pile:
        raise InvalidPositionError("the discard pile is never empty")
    cards = [card for hand in position.hands for card in hand]
    cards += [*position.pile, *position.stock]
    if len(set(cards)) != len(cards) or not all(0 <= c < StandardDeck.SIZE for c in cards):
        raise InvalidPositionError("a card is given twice or is not a card of the deck")
    if not -1 <= position.to_act < n:
        raise InvalidPositionError(f"seat {position.to_act} is not a seat")
    state = object.__new__(MauMauState)
    state._configure(n, options, rng)
    state.tallies = list(position.tallies or [0] * n)
    state.previous_deals = list(position.previous_deals)
    state.reshuffles = position.reshuffles
    state.deal_key = bytes((*position.pile, *position.stock))
    state.deal_reshuffles = 0
    state.deal_number = position.deal_number
    dealer = (position.to_act - 1) % n if position.dealer is None else position.dealer
    state.dealer = dealer
    state.first_dealer = (dealer - position.deal_number + 1) % n
    state.hands = [sum(1 << card for card in hand) for hand in position.hands]
    state.counts = [len(hand) for hand in position.hands]
    state.start_card = position.pile[0] if position.start_card is None else position.start_card
    state.pile = tuple(position.pile)
    state.stock = list(position.stock)
    top = position.pile[-1]
    if position.announced is None:
        state.playable = playable_after_card(top, state.jack_wild)
        state.announced = 0
    else:
        state.playable = playable_after_jack(position.announced)
        state.announced = position.announced
    state.direction = 1 if position.clockwise else -1
    state.fines = list(position.fines or [0] * n)
    state.barred = list(position.barred or [False] * n)
    state.drawn = position.drawn
    state.to_act = position.to_act
    state._legal = None
    return state
