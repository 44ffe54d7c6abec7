"""Klaberjass worlds for the search bot: the card play is searched; bidding, the dix exchange and
declarations are left to the heuristic.

A world is a ``KlaberjassPosition`` at the observed point of the play: the observer's hand, the
opponent's known cards plus unseen cards dealt at random (never the stock's shown cards, never a
suit it has shown void in, nor trumps after it failed to trump), the rest in the stock, the
bids, the dix exchange, the declarations and scoring sequences, bella, the tricks so far and the
card led. The playout runs to the end of the hand; the result is the observer's hand points
minus the opponent's.

Playout policy: announce bella when possible; lead at random; follow with the cheapest card that
wins, else the card worth fewest points.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, klaberjass_pb2
from referee.codec.common import options_from_wire
from referee.games.api import State
from referee.games.cards import Rank, Suit
from referee.games.klaberjass import (
    ACCEPT,
    BELLA_BASE,
    DECK_SIZE,
    NAME_BASE,
    PASS,
    PLAIN_ORDER,
    R7,
    RANKS,
    TRUMP_ORDER,
    KlaberjassPosition,
    KlaberjassState,
    Run,
    card_points,
    suit_card,
)
from referee.games.klaberjass import card_id as engine_card_id
from sample_bots.search.deal import deal_unseen

_TRUMP_STRENGTH = tuple(TRUMP_ORDER.index(rank) for rank in range(8))
_PLAIN_STRENGTH = tuple(PLAIN_ORDER.index(rank) for rank in range(8))


def card_id(card: cards_pb2.Card) -> int:
    """The engine id of a wire card."""
    return engine_card_id(Suit(card.suit), Rank(card.rank))


def _suit(card: int) -> int:
    return card // 8


def strength(card: int, trump: int) -> int:
    """Trick-taking strength: any trump beats any plain card."""
    rank = card % 8
    return 8 + _TRUMP_STRENGTH[rank] if card // 8 == trump else _PLAIN_STRENGTH[rank]


def _bid_action(bid: klaberjass_pb2.KlaberjassBid) -> int:
    """The engine action of a bid on the wire."""
    if bid.trump == cards_pb2.SUIT_UNSPECIFIED:
        return PASS
    return ACCEPT if bid.round == 1 else NAME_BASE + int(bid.trump) - 1


def _declared(seat: klaberjass_pb2.KlaberjassSeat) -> Run | None:
    """A seat's declared sequence as far as it is public: its length and top card (the suit
    is the shown cards' if any, else a guess: nothing in the play depends on it)."""
    if not seat.declared_length:
        return None
    top = RANKS.index(Rank(seat.declared_top))
    suit = int(seat.shown_sequence_cards[0].suit) - 1 if seat.shown_sequence_cards else 0
    return Run(suit, top - seat.declared_length + 1, seat.declared_length)


def build_state(
    request: bot_service_pb2.ChooseActionRequest, rng: random.Random
) -> KlaberjassState:
    """An engine state at the observed card-play decision, the opponent's hand sampled."""
    obs = request.observation.klaberjass
    me, opp = request.seat, 1 - request.seat
    trump = int(obs.trump) - 1
    mine = [card_id(card) for card in obs.hand]
    known = [card_id(card) for card in obs.seats[opp].known_cards]
    tricks = [[card_id(c) for c in t.cards] for t in obs.completed_tricks]
    current = [card_id(c) for c in obs.current_trick.cards]
    leaders = [t.leader for t in obs.completed_tricks] + [obs.current_trick.leader]
    voids: set[int] = set()
    for leader, cards in zip(leaders, [*tricks, current], strict=True):
        if len(cards) == 2 and (leader + 1) % 2 == opp and _suit(cards[1]) != _suit(cards[0]):
            voids.add(_suit(cards[0]))
            if _suit(cards[1]) != trump:
                voids.add(trump)
    bottom = card_id(obs.bottom_card)
    exchanged = obs.HasField("dix_exchanged_by")
    out = {bottom, suit_card(trump, R7) if exchanged else card_id(obs.turn_up)}
    played = {card for cards in [*tricks, current] for card in cards}
    seen = set(mine) | set(known) | out | played
    unseen = [card for card in range(DECK_SIZE) if card not in seen]
    hidden = obs.seats[opp].hand_size - len(known)
    dealt = deal_unseen(
        unseen, [hidden, len(unseen) - hidden], [frozenset(voids), frozenset()], _suit, rng
    )
    hands: list[tuple[int, ...]] = [(), ()]
    hands[me] = tuple(mine)
    hands[opp] = tuple(known + dealt[0])
    seats = obs.seats
    position = KlaberjassPosition(
        hands=(hands[0], hands[1]),
        turn_up=card_id(obs.turn_up),
        stock=(*dealt[1], bottom),
        dealer=obs.dealer,
        to_act=me,
        bids=tuple(_bid_action(bid) for bid in obs.bids),
        dix_exchanged_by=obs.dix_exchanged_by if exchanged else -1,
        declared=(_declared(seats[0]), _declared(seats[1])),
        sequence_points=(seats[0].sequence_points, seats[1].sequence_points),
        sequence_cards=(
            tuple(card_id(c) for c in seats[0].shown_sequence_cards),
            tuple(card_id(c) for c in seats[1].shown_sequence_cards),
        ),
        tricks=tuple((lead, follow) for lead, follow in tricks),
        lead=current[0] if current else None,
        bella=(seats[0].bella, seats[1].bella),
        scores=(seats[0].score, seats[1].score),
        hand_number=obs.hand_number,
        options=options_from_wire(request.settings.options),
    )
    return position.state()


def policy_card(state: KlaberjassState, legal: Sequence[int], rng: random.Random) -> int:
    """The playout policy's action for the seat to act."""
    for action in legal:
        if action >= BELLA_BASE:
            return action
    trump = state.trump
    if state.lead < 0:
        return legal[rng.randrange(len(legal))]
    lead = state.lead
    lead_strength = strength(lead, trump)
    winners = [
        card
        for card in legal
        if (card // 8 == lead // 8 or card // 8 == trump) and strength(card, trump) > lead_strength
    ]
    if winners:
        return min(winners, key=lambda card: strength(card, trump))
    return min(legal, key=lambda card: (card_points(card, trump), strength(card, trump)))


class KlaberjassAdapter:
    """Search the card play only."""

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        obs = request.observation
        return (
            obs.WhichOneof("game") == "klaberjass"
            and obs.klaberjass.phase == klaberjass_pb2.KLABERJASS_PHASE_PLAYING
        )

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        return build_state(request, rng)

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        assert isinstance(state, KlaberjassState)
        hands = len(state.previous_hands)
        while len(state.previous_hands) == hands:
            legal = state.legal_actions()
            state.apply(policy_card(state, legal, rng) if len(legal) > 1 else legal[0])
        points = state.previous_hands[-1].points
        return float(points[seat] - points[1 - seat])
