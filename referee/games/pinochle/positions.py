"""Pinochle positions as values: what tests and search bots build a state from.

A ``PinochlePosition`` describes one point of a game in words and numbers: the two hands, the
turn-up and the stock under it (drawn from the top), who acts, the card led, this hand's melds
and finished tricks, which cards each player has seen go into the other's hand, the 9s of
trumps exchanged or shown, a meld turn in progress, the scores and finished hands before it.
What follows from those is left out: the phase (a meld turn, the stock, phase 2 once the
turn-up is taken, the end once nobody acts), the cards on the table (the melded cards still
held, in phase 1), which melded cards the reuse rule bars, and by default the trick leader,
the trick points and tricks won (counted from the tricks) and the meld points (the melds and
the dealer's turn-up bonus). ``position_of(state)`` reads one from a state,
``position.state()`` makes a state from one and ``str(position)`` reads aloud. Standard library
only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from referee.games.api import InvalidPositionError, OptionValue, State
from referee.games.pinochle.rules import (
    FIRST_TARGET,
    NO_USED,
    PINOCHLE_GAME,
    TURNUP_BONUS,
    PinochleState,
    card_points,
    meld_record,
    used_after,
)
from referee.games.pinochle.view import (
    MELD_NAMES,
    MELDS,
    NUM_CARDS,
    PHASE_MELD,
    PHASE_NO_STOCK,
    PHASE_OVER,
    PHASE_STOCK,
    HandResult,
    Meld,
    Trick,
    card_rank,
    cards_of,
    mask_of,
    pinochle_card_name,
)

Hand = tuple[int, ...]
"""Card ids (``12 * suit + 2 * rank + copy``), any order."""


@dataclass(frozen=True)
class PinochlePosition:
    """One point of a Pinochle game (see the module docstring for what follows from it)."""

    hands: tuple[Hand, Hand]
    """The cards each seat holds now, tabled ones included."""
    turn_up: int | None
    """The card face up under the stock (its suit is trump); None once taken (phase 2)."""
    stock: tuple[int, ...] = ()
    """The face-down stock still to be drawn, top first; () once the turn-up is taken."""
    to_act: int = 0
    """The seat to act; -1 once the game is over."""
    lead: int | None = None
    """The card led to the trick in progress; None between tricks."""
    meld_turn: bool = False
    """``to_act`` won the last phase-1 trick and may meld or exchange the dix before drawing."""
    melded: bool = False
    """In a meld turn: a meld is declared already (the dix remains)."""
    dix_done: bool = False
    """In a meld turn: the dix is exchanged or shown already (a meld remains)."""
    trump: int | None = None
    """Engine suit 0..3 (♣ ♦ ♥ ♠); None: the turn-up's suit (to be given once it is taken)."""
    dealt_turn_up: int | None = None
    """The hand's turn-up as dealt (the hand's record shows it); None: ``turn_up``."""
    dealer: int | None = None
    """None: the seat that did not lead the hand's first trick (``1 - to_act`` before one)."""
    melds: tuple[Meld, ...] = ()
    """This hand's melds in the order declared."""
    known: tuple[Hand, Hand] = ((), ())
    """Cards in each hand that the other player saw go there (the taken turn-up, a shown 9 of
    trumps); the tabled cards are known without being listed."""
    dixed: tuple[int, ...] = ()
    """The 9s of trumps exchanged or shown this hand."""
    completed: tuple[Trick, ...] = ()
    """This hand's finished tricks as (leader, (card led, second card), winner)."""
    trick_leader: int | None = None
    """None: ``to_act``, or the other seat once a card is led."""
    scores: tuple[int, int] = (0, 0)
    """Totals of the finished hands."""
    hand_points: tuple[int, int] | None = None
    """Melds, turn-up bonus and dix points of this hand; None: the melds' points and the
    dealer's turn-up bonus (give them when a dix scored)."""
    trick_points: tuple[int, int] | None = None
    """Card points won in this hand's tricks; None: counted from ``completed``."""
    tricks_won: tuple[int, int] | None = None
    """None: counted from ``completed``."""
    target: int = FIRST_TARGET
    hand_number: int = 1
    previous_hands: tuple[HandResult, ...] = ()
    final_scores: tuple[int, int] | None = None
    """Once the game is over: the scores it ended with."""
    winner: int = -1
    declared_by: int | None = None
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    """The game's options; missing ones take their defaults."""

    def state(self, rng: random.Random | None = None) -> PinochleState:
        """A state at this position; ``rng`` deals the hands after it (default: seed 0)."""
        return _state_of(self, rng or random.Random(0))

    def __str__(self) -> str:
        def names(cards: Hand) -> str:
            return " ".join(map(pinochle_card_name, sorted(cards))) or "-"

        turn_up = "taken" if self.turn_up is None else pinochle_card_name(self.turn_up)
        lines = [
            f"Pinochle, hand {self.hand_number}, target {self.target}, scores {self.scores},"
            f" seat {self.to_act} to act{' (meld turn)' if self.meld_turn else ''},"
            f" turn-up {turn_up}, {len(self.stock)} in stock",
        ]
        for seat, cards in enumerate(self.hands):
            lines.append(f"seat {seat}: {names(cards)}")
        for meld in self.melds:
            melded = names(MELDS[meld.meld].cards)
            lines.append(f"seat {meld.seat} melded {MELD_NAMES[meld.kind]} {melded}")
        lines.append(f"{len(self.completed)} tricks played")
        if self.lead is not None:
            lines.append(f"led: {pinochle_card_name(self.lead)}")
        return "\n".join(lines)


def position_of(state: State) -> PinochlePosition:
    """The position ``state`` is at (a ``PinochleState``)."""
    if not isinstance(state, PinochleState):
        raise TypeError(f"not a Pinochle state: {type(state).__name__}")
    meld_turn = state.phase == PHASE_MELD
    return PinochlePosition(
        hands=(cards_of(state.hands[0]), cards_of(state.hands[1])),
        turn_up=state.turn_up if state.turn_up >= 0 else None,
        stock=tuple(state.stock[state.stock_pos :]),
        to_act=state.to_act,
        lead=state.lead if state.lead >= 0 else None,
        meld_turn=meld_turn,
        melded=meld_turn and state._melded,
        dix_done=meld_turn and state._dix_done,
        trump=state.trump,
        dealt_turn_up=state.original_turn_up,
        dealer=state.dealer,
        melds=state.melds,
        known=(cards_of(state.known[0]), cards_of(state.known[1])),
        dixed=cards_of(state.dixed),
        completed=state.completed,
        trick_leader=state.trick_leader,
        scores=(state.scores[0], state.scores[1]),
        hand_points=(state.hand_points[0], state.hand_points[1]),
        trick_points=(state.trick_points[0], state.trick_points[1]),
        tricks_won=(state.tricks_won[0], state.tricks_won[1]),
        target=state.target,
        hand_number=state.hand_number,
        previous_hands=state.previous_hands,
        final_scores=None if state.final_scores is None else _pair(state.final_scores),
        winner=state.winner,
        declared_by=state.declared_by,
        options=dict(state.options),
    )


def _pair(values: tuple[int, ...]) -> tuple[int, int]:
    return values[0], values[1]


def _check_cards(position: PinochlePosition) -> None:
    """Every card of the pack is in exactly one place: a hand, the stock, the turn-up, a
    finished trick or the card led."""
    cards = [*position.hands[0], *position.hands[1], *position.stock]
    cards += [card for trick in position.completed for card in trick.cards]
    cards += [card for card in (position.turn_up, position.lead) if card is not None]
    if sorted(cards) != list(range(NUM_CARDS)):
        raise InvalidPositionError("a card is given twice, is missing or is not of the pack")


def _phase(position: PinochlePosition) -> int:
    if position.to_act == -1:
        return PHASE_OVER
    if not 0 <= position.to_act <= 1:
        raise InvalidPositionError(f"seat {position.to_act} is not a seat")
    if (position.turn_up is None) != (not position.stock):
        raise InvalidPositionError("the turn-up is taken with the last card of the stock")
    if position.meld_turn:
        if position.turn_up is None or position.lead is not None:
            raise InvalidPositionError("a meld turn follows a finished trick of phase 1")
        if position.trick_leader not in (None, position.to_act):
            raise InvalidPositionError("the winner of the trick has the meld turn and leads")
        return PHASE_MELD
    return PHASE_NO_STOCK if position.turn_up is None else PHASE_STOCK


def _state_of(position: PinochlePosition, rng: random.Random) -> PinochleState:
    options = PINOCHLE_GAME.resolve_options(position.options)
    _check_cards(position)
    phase = _phase(position)
    dealt = position.turn_up if position.dealt_turn_up is None else position.dealt_turn_up
    if dealt is None:
        raise InvalidPositionError("once the turn-up is taken, give the dealt turn-up")
    trump = dealt // 12 if position.trump is None else position.trump
    to_act, lead = position.to_act, position.lead
    dealer = position.dealer
    if dealer is None:
        first_leader = position.completed[0].leader if position.completed else to_act
        if lead is not None and not position.completed:
            first_leader = 1 - to_act
        dealer = 1 - first_leader
    state = object.__new__(PinochleState)
    state._configure(2, options, rng)
    state.hand_number = position.hand_number
    state.dealer = dealer
    state.first_dealer = (dealer - position.hand_number + 1) % 2
    state.target = position.target
    state.scores = list(position.scores)
    state.previous_hands = position.previous_hands
    state.hands = [mask_of(position.hands[0]), mask_of(position.hands[1])]
    state.original_turn_up = dealt
    state.turn_up = -1 if position.turn_up is None else position.turn_up
    state.trump = trump
    state.stock = list(position.stock)
    state.stock_pos = 0
    state.melds = tuple(meld_record(trump, meld.seat, meld.meld) for meld in position.melds)
    state.used = _used(position.melds)
    melded = [0, 0]
    for meld in position.melds:
        melded[meld.seat] |= MELDS[meld.meld].mask
    in_phase1 = position.turn_up is not None
    state.tabled = [melded[s] & state.hands[s] if in_phase1 else 0 for s in (0, 1)]
    state.known = [mask_of(position.known[s]) | state.tabled[s] for s in (0, 1)]
    state.dixed = mask_of(position.dixed)
    state.completed = position.completed
    state.trick_points = list(position.trick_points or _counted(position, _trick_points))
    state.tricks_won = list(position.tricks_won or _counted(position, lambda trick: 1))
    state.hand_points = list(position.hand_points or _meld_points(state, dealer))
    state.lead = -1 if lead is None else lead
    leader = position.trick_leader
    if leader is None:
        leader = to_act if lead is None else 1 - to_act
    state.trick_leader = leader
    state.to_act = to_act
    state.phase = phase
    state._melded = position.melded
    state._dix_done = position.dix_done
    state._meld_options = None
    state._legal = None
    state._legal_cards = 0
    state.final_scores = position.final_scores
    state.winner = position.winner
    state.declared_by = position.declared_by
    if phase == PHASE_OVER:
        if position.final_scores is None:
            raise InvalidPositionError("a finished game has final scores")
        state._legal = ()
    return state


def _used(melds: tuple[Meld, ...]) -> tuple[int, int, int, int]:
    """The masks of melded cards the reuse rule bars, by family, as the rules build them."""
    used = NO_USED
    for meld in melds:
        used = used_after(used, meld.meld)
    return used


def _trick_points(trick: Trick) -> int:
    return card_points(mask_of(trick.cards))


def _counted(position: PinochlePosition, value: Callable[[Trick], int]) -> tuple[int, int]:
    """Per seat, the sum of ``value(trick)`` over the tricks it won."""
    totals = [0, 0]
    for trick in position.completed:
        totals[trick.winner] += value(trick)
    return totals[0], totals[1]


def _meld_points(state: PinochleState, dealer: int) -> tuple[int, int]:
    """This hand's meld points: the melds', and the dealer's turn-up bonus."""
    points = [0, 0]
    for meld in state.melds:
        points[meld.seat] += meld.points
    if card_rank(state.original_turn_up) == state.bonus_rank:  # the turn-up is of trumps
        points[dealer] += TURNUP_BONUS
    return points[0], points[1]
