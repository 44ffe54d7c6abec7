"""Oh Hell positions as values: what tests, search bots and replays build a state from.

An ``OhHellPosition`` describes one point of a game in words and numbers (the FEN of this
game): the hands as they are now, the trump card, the dealer, the bids so far, the tricks of
this hand and the scores before it. Everything else (who leads, who acts, tricks won, whether
the bidding is over, the undealt cards) follows from those. ``position_of(state)`` reads one
from a state and ``position.state()`` makes a state from one; ``str(position)`` reads aloud.
Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from referee.games.api import InvalidPositionError, OptionValue, State
from referee.games.bits import set_bits
from referee.games.cards import StandardDeck
from referee.games.oh_hell.rules import OH_HELL, OhHellState
from referee.games.oh_hell.view import SUIT_SIZE, HandResult, Trick

_DECK = frozenset(range(StandardDeck.SIZE))


@dataclass(frozen=True)
class OhHellPosition:
    """One point of an Oh Hell game (see the module docstring for what follows from it)."""

    hands: tuple[tuple[int, ...], ...]
    """The cards each seat holds now, by seat (card ids, ``StandardDeck``)."""
    trump_card: int
    """The turned-up card; its suit is trump."""
    dealer: int
    bids: tuple[int | None, ...] = ()
    """Each seat's bid, None before it bids; () when nobody has bid yet."""
    completed_tricks: tuple[Trick, ...] = ()
    """This hand's finished tricks as (leader, cards in play order, winner)."""
    current_trick: tuple[int, ...] = ()
    """The cards played to the trick in progress, in play order."""
    scores: tuple[int, ...] = ()
    """Each seat's total of the finished hands; () for all zero."""
    exact_bids: tuple[int, ...] = ()
    """Each seat's count of exact bids in the finished hands (``tie_break``); () for zeros."""
    previous_hands: tuple[HandResult, ...] = ()
    schedule: tuple[int, ...] = ()
    """The hand sizes of the whole game; () for a game of this one hand."""
    hand_index: int = 0
    """Which entry of ``schedule`` is being played (0 = the first hand)."""
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    """The game's options; missing ones take their defaults."""

    @property
    def num_seats(self) -> int:
        return len(self.hands)

    def state(self, rng: random.Random | None = None) -> OhHellState:
        """A state at this position; ``rng`` deals the hands after it (default: seed 0)."""
        return _state_of(self, rng or random.Random(0))

    def __str__(self) -> str:
        names = StandardDeck.name
        hand = self.hand_index + 1
        lines = [
            f"Oh Hell, {self.num_seats} seats, hand {hand} of {len(self.schedule) or 1}, "
            f"dealer {self.dealer}, trump {names(self.trump_card)}",
        ]
        for seat, cards in enumerate(self.hands):
            bid = self.bids[seat] if self.bids else None
            lines.append(
                f"seat {seat}: {' '.join(map(names, cards)) or '-'}"
                f" (bid {'-' if bid is None else bid})"
            )
        for leader, cards, winner in self.completed_tricks:
            lines.append(f"trick led by {leader}: {' '.join(map(names, cards))}, won by {winner}")
        if self.current_trick:
            lines.append(f"trick in progress: {' '.join(map(names, self.current_trick))}")
        return "\n".join(lines)


def position_of(state: State) -> OhHellPosition:
    """The position ``state`` is at (an ``OhHellState``)."""
    if not isinstance(state, OhHellState):
        raise TypeError(f"not an Oh Hell state: {type(state).__name__}")
    return OhHellPosition(
        hands=tuple(set_bits(mask) for mask in state.hands),
        trump_card=state.trump_card,
        dealer=state.dealer,
        bids=tuple(state.bids),
        completed_tricks=tuple(state.completed_tricks),
        current_trick=tuple(state.trick),
        scores=tuple(state.scores),
        exact_bids=tuple(state.exact_bids),
        previous_hands=tuple(state.previous_hands),
        schedule=state.schedule,
        hand_index=state.hand_index,
        options=dict(state.options),
    )


def _state_of(position: OhHellPosition, rng: random.Random) -> OhHellState:
    n = position.num_seats
    options = OH_HELL.resolve_options(position.options)
    OH_HELL.check_seats(n)
    schedule = position.schedule or (len(position.hands[0]) + _played_by(position, 0),)
    if not 0 <= position.hand_index < len(schedule):
        raise InvalidPositionError(f"hand index {position.hand_index} is not in the schedule")
    size = schedule[position.hand_index]
    if not 0 <= position.dealer < n:
        raise InvalidPositionError(f"dealer {position.dealer} is not a seat")
    for seat, cards in enumerate(position.hands):
        if len(cards) + _played_by(position, seat) != size:
            raise InvalidPositionError(f"seat {seat} holds and played other than {size} cards")
    played = [card for _, cards, _ in position.completed_tricks for card in cards]
    used = [card for cards in position.hands for card in cards]
    used += [position.trump_card, *played, *position.current_trick]
    if len(set(used)) != len(used) or not _DECK.issuperset(used):
        raise InvalidPositionError("a card is given twice or is not a card of the deck")
    bids = list(position.bids) or [None] * n
    order = [(position.dealer + 1 + offset) % n for offset in range(n)]
    given = [bids[seat] is not None for seat in order]
    if len(bids) != n or given != sorted(given, reverse=True):
        raise InvalidPositionError("bids are made in turn from the dealer's left")
    bidding = not all(given)
    if bidding and (position.completed_tricks or position.current_trick):
        raise InvalidPositionError("cards are played only once every seat has bid")
    state = object.__new__(OhHellState)
    State.__init__(state, n, options, rng)
    state.scoring = str(options["scoring"])
    state.deal_style = str(options["deal_style"])
    state.schedule = schedule
    state.hand_index = position.hand_index
    state.first_dealer = (position.dealer - position.hand_index) % n
    state.scores = list(position.scores or [0] * n)
    state.exact_bids = list(position.exact_bids or [0] * n)
    state.previous_hands = list(position.previous_hands)
    state.hand_size = size
    state.dealer = position.dealer
    state.hands = [sum(1 << card for card in cards) for cards in position.hands]
    state.undealt = _DECK.difference(used)
    state.trump_card = position.trump_card
    state.trump_suit = position.trump_card // SUIT_SIZE
    state.bids = bids
    state.tricks_won = [0] * n
    for _, _, winner in position.completed_tricks:
        state.tricks_won[winner] += 1
    state.trick = list(position.current_trick)
    state.completed_tricks = list(position.completed_tricks)
    state.bidding = bidding
    tricks = position.completed_tricks
    state.trick_leader = tricks[-1][2] if tricks else (position.dealer + 1) % n
    if bidding:
        state.to_act = order[given.index(False)]
    elif len(tricks) == size:
        if position.hand_index + 1 < len(schedule):
            raise InvalidPositionError("a finished hand that is not the last is dealt anew")
        state.to_act = -1
    else:
        state.to_act = (state.trick_leader + len(position.current_trick)) % n
    return state


def _played_by(position: OhHellPosition, seat: int) -> int:
    """How many cards ``seat`` has played this hand."""
    n = position.num_seats
    count = sum(
        1 for leader, cards, _ in position.completed_tricks if (seat - leader) % n < len(cards)
    )
    tricks = position.completed_tricks
    leader = tricks[-1][2] if tricks else (position.dealer + 1) % n
    return count + ((seat - leader) % n < len(position.current_trick))
