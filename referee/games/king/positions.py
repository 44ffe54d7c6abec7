"""King positions as values: what tests, search bots and replays build a state from.

A ``KingPosition`` describes one point of a game in words and numbers (the FEN of this game):
the hands as they are now, which hand of the ten is being played and who deals it, the calls
of its auction (a positive hand's, the naming of trumps included), its tricks so far, and the
totals and finished hands before it. Everything else follows: the contract, the auction's
state (best offer, floor, buyer, price, phase), trumps, who leads and who acts, the tricks and
cards each seat has taken. ``position_of(state)`` reads one from a state, ``position.state()``
makes a state from one (replaying the calls and the tricks through the rules, so a position
no game reaches is refused) and ``str(position)`` reads aloud. Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from referee.games.api import IllegalActionError, InvalidPositionError, OptionValue, State
from referee.games.cards import StandardDeck
from referee.games.king.rules import KING, NO_SUIT, KingState, contract_of_hand, describe_action
from referee.games.king.view import (
    CONTRACT_NAMES,
    NUM_HANDS,
    NUM_SEATS,
    NUM_TRICKS,
    OPT_OUT,
    PHASE_PLAY,
    HandResult,
    Trick,
    cards_of,
)

_DECK = frozenset(range(StandardDeck.SIZE))


@dataclass(frozen=True)
class KingPosition:
    """One point of a King game (see the module docstring for what follows from it)."""

    hands: tuple[tuple[int, ...], ...]
    """The cards each of the four seats holds now (card ids, ``StandardDeck``)."""
    hand_number: int = 1
    """Which of the ten hands is being played (1..10); its contract follows."""
    dealer: int = 0
    calls: tuple[tuple[int, int], ...] = ()
    """A positive hand's auction as (seat, action), in order, the naming of trumps included."""
    completed_tricks: tuple[Trick, ...] = ()
    """This hand's finished tricks as (leader, cards in play order, winner)."""
    current_trick: tuple[int, ...] = ()
    """The cards played to the trick in progress, in play order."""
    negative_totals: tuple[int, ...] = ()
    """Each seat's negative column; () for all zero."""
    positive_totals: tuple[int, ...] = ()
    """Each seat's positive column; () for all zero."""
    previous_hands: tuple[HandResult, ...] = ()
    """The finished hands: ``hand_number - 1`` of them, or all ten once the game is over; ()
    when they do not matter (a search bot's world)."""
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    """The game's options; missing ones take their defaults."""

    def state(self, rng: random.Random | None = None) -> KingState:
        """A state at this position; ``rng`` deals the hands after it (default: seed 0)."""
        return _state_of(self, rng or random.Random(0))

    def __str__(self) -> str:
        names = StandardDeck.name
        contract = CONTRACT_NAMES[contract_of_hand(self.hand_number)]
        lines = [f"King, hand {self.hand_number} of {NUM_HANDS} ({contract}), dealer {self.dealer}"]
        for seat, cards in enumerate(self.hands):
            lines.append(f"seat {seat}: {' '.join(map(names, cards)) or '-'}")
        if self.calls:
            said = ", ".join(f"{seat} {describe_action(action)}" for seat, action in self.calls)
            lines.append(f"auction: {said}")
        for leader, cards, winner in self.completed_tricks:
            lines.append(f"trick led by {leader}: {' '.join(map(names, cards))}, won by {winner}")
        if self.current_trick:
            lines.append(f"trick in progress: {' '.join(map(names, self.current_trick))}")
        return "\n".join(lines)


def position_of(state: State) -> KingPosition:
    """The position ``state`` is at (a ``KingState``)."""
    if not isinstance(state, KingState):
        raise TypeError(f"not a King state: {type(state).__name__}")
    return KingPosition(
        hands=tuple(cards_of(mask) for mask in state.hands),
        hand_number=state.hand_number,
        dealer=state.dealer,
        calls=tuple(state.calls),
        completed_tricks=tuple(state.completed_tricks),
        current_trick=tuple(state.trick),
        negative_totals=tuple(state.negative_totals),
        positive_totals=tuple(state.positive_totals),
        previous_hands=tuple(state.previous_hands),
        options=dict(state.options),
    )


def _state_of(position: KingPosition, rng: random.Random) -> KingState:
    options = KING.resolve_options(position.options)
    KING.check_seats(len(position.hands))
    number = position.hand_number
    if not 1 <= number <= NUM_HANDS:
        raise InvalidPositionError(f"hand {number} is not one of the {NUM_HANDS}")
    if not 0 <= position.dealer < NUM_SEATS:
        raise InvalidPositionError(f"dealer {position.dealer} is not a seat")
    finished = bool(position.previous_hands) and len(position.previous_hands) == number
    if position.previous_hands and len(position.previous_hands) != number - 1 and not finished:
        raise InvalidPositionError(f"hand {number} comes after {number - 1} finished hands")
    opted_out = bool(position.calls) and position.calls[-1][1] == OPT_OUT
    state = object.__new__(KingState)
    State.__init__(state, NUM_SEATS, options, rng)
    state._configure(options)
    state.first_dealer = (position.dealer - number + 1) % NUM_SEATS
    state.negative_totals = [0] * NUM_SEATS
    state.positive_totals = [0] * NUM_SEATS
    state.previous_hands = list(position.previous_hands[: number - 1])
    state.hand_number = number
    state.contract = contract_of_hand(number)
    state.dealer = position.dealer
    state._start_hand([] if opted_out else _dealt_hands(position))
    _replay_calls(state, position)
    _replay_tricks(state, position)
    if finished != state.is_terminal():
        raise InvalidPositionError("a game is over exactly when its tenth hand is finished")
    if finished and state.previous_hands[-1] != position.previous_hands[-1]:
        raise InvalidPositionError("the last hand's result is not what its play scores")
    state.negative_totals = list(position.negative_totals or [0] * NUM_SEATS)
    state.positive_totals = list(position.positive_totals or [0] * NUM_SEATS)
    if len(state.negative_totals) != NUM_SEATS or len(state.positive_totals) != NUM_SEATS:
        raise InvalidPositionError("the totals have one entry per seat")
    state.previous_hands = list(position.previous_hands)
    return state


def _dealt_hands(position: KingPosition) -> list[int]:
    """The hands as dealt: the cards held now plus those each seat played to this hand's
    tricks (as their leaders say); every card once, thirteen to each seat."""
    dealt = [list(cards) for cards in position.hands]
    tricks = [*position.completed_tricks]
    if position.current_trick:
        leader = tricks[-1][2] if tricks else position.dealer
        tricks.append((leader, position.current_trick, -1))
    for leader, cards, _ in tricks:
        if not 0 <= leader < NUM_SEATS:
            raise InvalidPositionError(f"leader {leader} is not a seat")
        for offset, card in enumerate(cards):
            dealt[(leader + offset) % NUM_SEATS].append(card)
    every = [card for hand in dealt for card in hand]
    if len(set(every)) != len(every) or set(every) != _DECK:
        raise InvalidPositionError("every card of the deck is held or played exactly once")
    for seat, hand in enumerate(dealt):
        if len(hand) != NUM_TRICKS:
            raise InvalidPositionError(f"seat {seat} holds and played {len(hand)} cards, not 13")
    return [sum(1 << card for card in hand) for hand in dealt]


def _replay_calls(state: KingState, position: KingPosition) -> None:
    """The auction's calls through the rules: each by the seat to act, each legal."""
    for seat, action in position.calls:
        if state.phase == PHASE_PLAY or state.is_terminal() or seat != state.to_act:
            raise InvalidPositionError(f"seat {seat} may not call now: {position.calls}")
        _apply(state, action, "an illegal call")
    if state.hand_number != position.hand_number:
        raise InvalidPositionError("a hand opted out of that is not the last is dealt anew")
    if state.phase != PHASE_PLAY and (position.completed_tricks or position.current_trick):
        raise InvalidPositionError("cards are played only once the auction is over")
    if state.is_terminal() and any(position.hands):
        raise InvalidPositionError("nobody holds a card once the game is over")


def _replay_tricks(state: KingState, position: KingPosition) -> None:
    """The hand's cards in play order through the rules, then the tricks compared with the
    position's. Following suit is checked; the K♥ rule and the lead restrictions are not (a
    search bot's world may give a seat the K♥, or a card besides hearts, that the play so far
    says it did not hold: the observation does not tell)."""
    kh_rule, restriction = state.kh_rule, state.lead_restriction
    state.kh_rule, state.lead_restriction = False, NO_SUIT
    cards = [card for _, trick, _ in position.completed_tricks for card in trick]
    for card in [*cards, *position.current_trick]:
        if state.is_terminal() or state.hand_number != position.hand_number:
            raise InvalidPositionError("the hand would have ended before all its tricks")
        _apply(state, card, "a card out of turn or not followed")
    if state.hand_number != position.hand_number:
        raise InvalidPositionError("a hand whose tricks are all played is dealt anew")
    state.kh_rule, state.lead_restriction = kh_rule, restriction
    if tuple(state.completed_tricks) != position.completed_tricks:
        raise InvalidPositionError("a trick's leader or winner is not what the play gives")


def _apply(state: KingState, action: int, complaint: str) -> None:
    """``state.apply(action)``, an illegal action refusing the position."""
    try:
        state.apply(action)
    except IllegalActionError as error:
        raise InvalidPositionError(f"{complaint}: {error}") from error
