"""Pinochle worlds for the search bot: the phase-2 card play (no stock) is searched; phase 1,
melds and the dix are left to the heuristic.

Once the stock is gone every card is accounted for: the opponent holds exactly the cards the
observer has neither in hand nor seen played, so the world is the true position and only the
playouts are random. The state is made from that position (``PinochlePosition``: hands, trumps,
the hand's meld and trick points, the cards known to both, tricks so far, the card led). The
playout runs to the end of the hand; the result is the observer's card points plus last trick
minus the opponent's, or +-1000 when the game ends in a win or loss (declaring out is searched
like any other move).

Playout policy: lead at random; follow with the cheapest card that wins, else the card worth
fewest points (never declare out).
"""

from __future__ import annotations

import random

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, pinochle_pb2
from referee.codec.common import options_from_wire
from referee.games.api import State
from referee.games.pinochle import (
    NINE,
    NUM_CARDS,
    RANKS,
    PinochlePosition,
    PinochleState,
    Trick,
    card_id,
    legal_follow_mask,
)

WIN = 1000.0
_RANK_INDEX = {int(rank): index for index, rank in enumerate(RANKS)}
_POINTS = (0, 2, 3, 4, 10, 11)  # by rank index 9 J Q K 10 A


def wire_card_id(card: cards_pb2.Card) -> int:
    """The engine id of a wire card (``12 * suit + 2 * rank + copy``)."""
    return card_id(card.suit - 1, _RANK_INDEX[card.rank], card.copy)


def build_state(request: bot_service_pb2.ChooseActionRequest) -> PinochleState:
    """The engine state of the observed phase-2 decision (all hands are then known)."""
    obs = request.observation.pinochle
    me, opp = request.seat, 1 - request.seat
    mine = [wire_card_id(card) for card in obs.hand]
    completed = []
    played = set(mine)
    for trick in obs.completed_tricks:
        lead, follow = (wire_card_id(card) for card in trick.cards)
        played.update((lead, follow))
        completed.append(Trick(trick.leader, (lead, follow), trick.winner))
    current = [wire_card_id(card) for card in obs.current_trick.cards]
    played.update(current)
    hands: list[tuple[int, ...]] = [(), ()]
    hands[me] = tuple(mine)
    hands[opp] = tuple(card for card in range(NUM_CARDS) if card not in played)
    trump = int(obs.trump) - 1
    seats = obs.seats
    position = PinochlePosition(
        hands=(hands[0], hands[1]),
        turn_up=None,
        to_act=me,
        lead=current[0] if current else None,
        trump=trump,
        # The turn-up as dealt is not in a phase-2 observation; only the hand's record would
        # show it, and the playouts do not read that.
        dealt_turn_up=card_id(trump, NINE),
        dealer=obs.dealer,
        known=(_known(seats[0]), _known(seats[1])),
        completed=tuple(completed),
        trick_leader=obs.current_trick.leader,
        scores=(seats[0].score, seats[1].score),
        hand_points=(seats[0].hand_points, seats[1].hand_points),
        trick_points=(seats[0].trick_points, seats[1].trick_points),
        tricks_won=(seats[0].tricks_won, seats[1].tricks_won),
        target=obs.target,
        hand_number=obs.hand_number,
        options=options_from_wire(request.settings.options),
    )
    return position.state()


def _known(seat: pinochle_pb2.PinochleSeat) -> tuple[int, ...]:
    """The cards of a seat's hand that both players know (melded, the taken turn-up)."""
    return tuple(wire_card_id(card) for card in seat.known)


def policy_card(state: PinochleState, rng: random.Random) -> int:
    """The playout policy's card for the seat to act."""
    seat = state.to_act
    hand = state.hands[seat]
    lead = state.lead
    if lead < 0:
        cards = [card for card in range(NUM_CARDS) if hand >> card & 1]
        return cards[rng.randrange(len(cards))]
    mask = legal_follow_mask(hand, lead, state.trump, state.phase2_rule)
    cards = [card for card in range(NUM_CARDS) if mask >> card & 1]
    trump = state.trump
    winners = [
        card
        for card in cards
        if (card // 12 == lead // 12 and card >> 1 > lead >> 1)
        or (card // 12 == trump and lead // 12 != trump)
    ]
    if winners:
        return min(winners, key=lambda card: (card // 12 == trump, card >> 1))
    return min(cards, key=lambda card: (_POINTS[card % 12 >> 1], card // 12 == trump, card >> 1))


class PinochleAdapter:
    """Search the phase-2 card play."""

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        obs = request.observation
        return (
            obs.WhichOneof("game") == "pinochle"
            and obs.pinochle.phase == pinochle_pb2.PINOCHLE_PHASE_NO_STOCK
        )

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        return build_state(request)

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        assert isinstance(state, PinochleState)
        hands = len(state.previous_hands)
        while state.to_act >= 0 and len(state.previous_hands) == hands:
            state.apply(policy_card(state, rng))
        if state.to_act < 0:
            return WIN if state.winner == seat else -WIN
        last = state.previous_hands[-1]
        mine = last.card_points[seat] + last.last_trick[seat]
        theirs = last.card_points[1 - seat] + last.last_trick[1 - seat]
        return float(mine - theirs)
