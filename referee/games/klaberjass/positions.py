"""Klaberjass positions as values: what tests, search bots and replays build a state from.

A ``KlaberjassPosition`` describes one point of a game in words and numbers (the FEN of this
game): the hands as they are now, the turn-up and the stock below it, the dealer and who acts,
the phase of the hand, the bids, the dix exchange, the declarations and the sequences that
score, the tricks of this hand and the card led, bella, and the scores and hands before it.
What follows from those: trumps and the maker (the last bid), the bottom card (the stock's
last once the deal is complete), the card points and who won each trick, who holds both K and
Q of trumps as play starts and which cards both seats know of. ``position_of(state)`` reads one
from a state, ``position.state()`` makes a state from one and ``str(position)`` reads aloud.
Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from referee.games.api import InvalidPositionError, OptionValue, State
from referee.games.klaberjass.rules import (
    COMPLETION_AT,
    KLABERJASS,
    STOCK_AT,
    KlaberjassState,
    bella_holder,
    card_name,
    trick_points,
    trick_winner,
)
from referee.games.klaberjass.view import (
    BIDDING_OTHER_SUIT,
    BIDDING_TURN_UP,
    DECK_SIZE,
    DECLARING,
    DIX,
    GAME_OVER,
    PASS,
    PLAYING,
    R7,
    TRICKS,
    HandResult,
    Run,
    bid_trump,
    card_bit,
    cards_of,
    suit_card,
)

PHASES = {
    "bidding": BIDDING_TURN_UP,
    "dix": DIX,
    "declaring": DECLARING,
    "playing": PLAYING,
    "over": GAME_OVER,
}
"""A hand's phases by name (the bidding's two rounds follow from the bids)."""
_PHASE_NAMES = {number: name for name, number in PHASES.items()} | {BIDDING_OTHER_SUIT: "bidding"}
_DECK = frozenset(range(DECK_SIZE))
_STOCK_BEFORE_COMPLETION = DECK_SIZE - COMPLETION_AT
_STOCK_AFTER_COMPLETION = DECK_SIZE - STOCK_AT
_FIRST_DEAL = (COMPLETION_AT - 1) // 2
"""Cards each seat holds before the completion deal (the deck's first 12 are theirs)."""


@dataclass(frozen=True)
class KlaberjassPosition:
    """One point of a Klaberjass game (see the module docstring for what follows from it)."""

    hands: tuple[tuple[int, ...], tuple[int, ...]]
    """The cards each seat holds now, by seat (card ids, ``card_id``)."""
    turn_up: int
    stock: tuple[int, ...]
    """The undealt cards, top first: 19 before the completion deal (its 6 cards first, 3 for
    the non-dealer then 3 for the dealer), 13 after it (the last is the bottom card)."""
    dealer: int
    to_act: int
    """The seat to act; -1 once the game is over."""
    phase: str = "playing"
    """One of ``PHASES``: bidding, dix (the holder of the 7 of trumps decides), declaring,
    playing, over."""
    bids: tuple[int, ...] = ()
    """This hand's bidding actions in turn from the non-dealer (PASS, ACCEPT, NAME_BASE + s):
    passes and then, once the bidding is over, the bid that made trumps."""
    dix_exchanged_by: int = -1
    """The seat that took the turn-up for the 7 of trumps; -1 for none."""
    declared: tuple[Run | None, Run | None] = (None, None)
    """Each seat's declared sequence; None for none (or not yet asked)."""
    sequence_points: tuple[int, int] = (0, 0)
    """Once play has started: what the scoring sequence(s) earn their holder."""
    sequence_cards: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """Once play has started: the cards of the scoring sequence(s), by holder."""
    tricks: tuple[tuple[int, int], ...] = ()
    """This hand's finished tricks as (card led, card followed); the non-dealer leads the
    first and each trick's winner the next."""
    lead: int | None = None
    """The card led to the trick in progress; None before the lead."""
    bella: tuple[bool, bool] = (False, False)
    """Whether each seat has announced bella this hand."""
    scores: tuple[int, int] = (0, 0)
    """Each seat's total of the finished hands."""
    previous_hands: tuple[HandResult, ...] = ()
    hand_number: int = 1
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    """The game's options; missing ones take their defaults."""

    @property
    def trump(self) -> int:
        """Trumps (``Suit - 1``) as the last bid made them; -1 while the bidding goes on."""
        return bid_trump(self.bids[-1], self.turn_up) if self.bids else -1

    def state(self, rng: random.Random | None = None) -> KlaberjassState:
        """A state at this position; ``rng`` shuffles the hands after it (default: seed 0)."""
        return _state_of(self, rng or random.Random(0))

    def __str__(self) -> str:
        names = " ".join
        trump = self.trump
        lines = [
            f"Klaberjass, hand {self.hand_number}, dealer {self.dealer}, {self.phase},"
            f" seat {self.to_act} to act, turn-up {card_name(self.turn_up)},"
            f" trumps {'-' if trump < 0 else 'CDHS'[trump]}, scores {self.scores[0]}"
            f"-{self.scores[1]}, {len(self.stock)} in stock",
        ]
        for seat, cards in enumerate(self.hands):
            lines.append(f"seat {seat}: {names(map(card_name, cards)) or '-'}")
        for lead, follow in self.tricks:
            lines.append(f"trick: {card_name(lead)} {card_name(follow)}")
        if self.lead is not None:
            lines.append(f"led: {card_name(self.lead)}")
        return "\n".join(lines)


def position_of(state: State) -> KlaberjassPosition:
    """The position ``state`` is at (a ``KlaberjassState``)."""
    if not isinstance(state, KlaberjassState):
        raise TypeError(f"not a Klaberjass state: {type(state).__name__}")
    hand0, hand1 = (cards_of(hand) for hand in state.hands)
    cards0, cards1 = (cards_of(cards) for cards in state.sequence_cards)
    declared0, declared1 = state.declared
    bella0, bella1 = state.bella
    return KlaberjassPosition(
        hands=(hand0, hand1),
        turn_up=state.turn_up,
        stock=tuple(state.deck[COMPLETION_AT if state.bottom_card < 0 else STOCK_AT :]),
        dealer=state.dealer,
        to_act=state.to_act,
        phase=_PHASE_NAMES[state.phase],
        bids=tuple(action for _, action in state.bids),
        dix_exchanged_by=state.dix_by,
        declared=(declared0, declared1),
        sequence_points=(state.sequence_points[0], state.sequence_points[1]),
        sequence_cards=(cards0, cards1),
        tricks=tuple((lead, follow) for _, lead, follow, _ in state.completed),
        lead=state.lead if state.lead >= 0 else None,
        bella=(bella0, bella1),
        scores=(state.scores[0], state.scores[1]),
        previous_hands=state.previous_hands,
        hand_number=state.hand_number,
        options=dict(state.options),
    )


def _state_of(position: KlaberjassPosition, rng: random.Random) -> KlaberjassState:
    options = KLABERJASS.resolve_options(position.options)
    phase = _phase(position)
    trump = position.trump
    dealt = phase not in (BIDDING_TURN_UP, BIDDING_OTHER_SUIT) and trump >= 0
    completed = _completed_tricks(position, trump)
    _check_cards(position, dealt, completed)
    state = object.__new__(KlaberjassState)
    state._configure(2, options, rng)
    state.scores = list(position.scores)
    state.previous_hands = position.previous_hands
    state.hand_number = position.hand_number
    state.dealer = position.dealer
    state.deck = _deck(position)
    state.hands = [sum(map(card_bit, cards)) for cards in position.hands]
    state.turn_up = position.turn_up
    state.to_act = position.to_act
    state.phase = phase
    elder = 1 - position.dealer
    state.bids = [
        (elder if index % 2 == 0 else position.dealer, action)
        for index, action in enumerate(position.bids)
    ]
    state.trump = trump
    state.maker = state.bids[-1][0] if trump >= 0 else -1
    state.bottom_card = position.stock[-1] if dealt else -1
    state.dix_by = position.dix_exchanged_by
    state.declared = list(position.declared)
    state.declarations_done = phase in (PLAYING, GAME_OVER) and trump >= 0
    state.sequence_points = list(position.sequence_points)
    state.sequence_cards = [sum(map(card_bit, cards)) for cards in position.sequence_cards]
    points = position.sequence_points
    state.sequence_winner = 0 if points[0] else 1 if points[1] else -1
    state.sequences_shown = bool(completed)
    state.completed = completed
    state.lead = -1 if position.lead is None else position.lead
    state.card_points = [0, 0]
    for _, lead, follow, winner in completed:
        state.card_points[winner] += trick_points(lead, follow, trump)
    state.bella = list(position.bella)
    state.bella_seat = -1
    if state.declarations_done:
        state.bella_seat = bella_holder(_hands_as_play_started(state), trump)
    known = card_bit(position.turn_up) if position.dix_exchanged_by >= 0 else 0
    if state.sequences_shown:
        known |= state.sequence_cards[0] | state.sequence_cards[1]
    state.known = known & (state.hands[0] | state.hands[1])
    return state


def _phase(position: KlaberjassPosition) -> int:
    """The rules' phase of ``position``, after checking its bids and seats against it."""
    if position.phase not in PHASES:
        raise InvalidPositionError(f"no phase {position.phase!r}: one of {', '.join(PHASES)}")
    if position.dealer not in (0, 1):
        raise InvalidPositionError(f"dealer {position.dealer} is not a seat")
    phase = PHASES[position.phase]
    if position.to_act not in ((-1,) if phase == GAME_OVER else (0, 1)):
        raise InvalidPositionError(f"seat {position.to_act} may not act in phase {position.phase}")
    bids = position.bids
    if any(bid != PASS for bid in bids[:-1]) or len(bids) > 4:
        raise InvalidPositionError("the bids are passes, then at most one bid that makes trumps")
    made = bool(bids) and bids[-1] != PASS
    if made and bid_trump(bids[-1], position.turn_up) < 0:
        raise InvalidPositionError(f"action {bids[-1]} is not a bid")
    if phase == BIDDING_TURN_UP:
        if made or len(bids) == 4:
            raise InvalidPositionError("the bidding is over")
        seat = 1 - position.dealer if len(bids) % 2 == 0 else position.dealer
        if position.to_act != seat:
            raise InvalidPositionError(f"seat {seat} bids next, not seat {position.to_act}")
        return BIDDING_TURN_UP if len(bids) < 2 else BIDDING_OTHER_SUIT
    if phase != GAME_OVER and not made:
        raise InvalidPositionError(
            f"no trumps were made: the hand is not in phase {position.phase}"
        )
    if phase not in (PLAYING, GAME_OVER) and (position.tricks or position.lead is not None):
        raise InvalidPositionError("cards are played only once the declarations are over")
    if phase == GAME_OVER and made and len(position.tricks) != TRICKS:
        raise InvalidPositionError("a game ends only after a hand's last trick")
    return phase


def _completed_tricks(position: KlaberjassPosition, trump: int) -> list[tuple[int, int, int, int]]:
    """The rules' finished tricks (leader, lead, follow, winner) of ``position``."""
    completed = []
    leader = 1 - position.dealer
    for lead, follow in position.tricks:
        winner = leader if not trick_winner(lead, follow, trump) else 1 - leader
        completed.append((leader, lead, follow, winner))
        leader = winner
    if position.phase == "playing":
        seat = leader if position.lead is None else 1 - leader
        if position.to_act != seat:
            raise InvalidPositionError(f"seat {seat} plays next, not seat {position.to_act}")
    return completed


def _check_cards(
    position: KlaberjassPosition, dealt: bool, completed: list[tuple[int, int, int, int]]
) -> None:
    """Every card of the deck once: in a hand, played, in the stock or turned up (or the 7 of
    trumps in the turn-up's place after the dix exchange); hand sizes as dealt and played."""
    played = [card for _, lead, follow, _ in completed for card in (lead, follow)]
    if position.lead is not None:
        played.append(position.lead)
    spot = position.turn_up
    if position.dix_exchanged_by >= 0:
        spot = suit_card(position.trump, R7)
    cards = [*position.hands[0], *position.hands[1], *played, *position.stock, spot]
    if len(cards) != DECK_SIZE or set(cards) != _DECK:
        raise InvalidPositionError("a card is given twice, missing or not a card of the deck")
    size = _STOCK_AFTER_COMPLETION if dealt else _STOCK_BEFORE_COMPLETION
    if len(position.stock) != size and position.phase != "over":
        raise InvalidPositionError(f"the stock holds {size} cards in phase {position.phase}")
    for seat, hand in enumerate(position.hands):
        plays = len(completed) + (
            position.lead is not None and _leader(position, completed) == seat
        )
        held = (TRICKS if dealt else _FIRST_DEAL) - plays
        if len(hand) != held and position.phase != "over":
            raise InvalidPositionError(f"seat {seat} holds {len(hand)} cards, not {held}")


def _leader(position: KlaberjassPosition, completed: list[tuple[int, int, int, int]]) -> int:
    """Who leads (or led) the trick in progress."""
    return completed[-1][3] if completed else 1 - position.dealer


def _deck(position: KlaberjassPosition) -> list[int]:
    """A deck (top first) that deals this hand: the cards above the stock in any order."""
    below = {position.turn_up, *position.stock}
    above = sorted(_DECK.difference(below))
    first, completion = above[: COMPLETION_AT - 1], above[COMPLETION_AT - 1 :]
    return [*first, position.turn_up, *completion, *position.stock]


def _hands_as_play_started(state: KlaberjassState) -> list[int]:
    """Each seat's hand with the cards it has played this hand back in it."""
    hands = list(state.hands)
    for leader, lead, follow, _ in state.completed:
        hands[leader] |= card_bit(lead)
        hands[1 - leader] |= card_bit(follow)
    if state.lead >= 0:
        hands[1 - state.to_act] |= card_bit(state.lead)
    return hands
