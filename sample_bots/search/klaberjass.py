"""Klaberjass worlds for the search bot: the card play is searched; bidding, the dix exchange and
declarations are left to the heuristic.

A world starts from ``KlaberjassState.from_deck`` (the engine's own hook for a given deal) and is
then set to the observed point of the play: the observer's hand, the opponent's known cards plus
unseen cards dealt at random (never the stock's shown cards, never a suit it has shown void in,
nor trumps after it failed to trump), trumps, maker, card and sequence points, bella, the tricks
so far and the card led. The playout runs to the end of the hand; the result is the observer's
hand points minus the opponent's.

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
from referee.games.klaberjass.rules import (
    BELLA_BASE,
    DECK_SIZE,
    PLAIN_ORDER,
    PLAYING,
    R7,
    RK,
    RQ,
    TRUMP_ORDER,
    KlaberjassState,
    card_points,
)
from referee.games.klaberjass.rules import card_id as engine_card_id
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


def _mask(cards: Sequence[int]) -> int:
    return sum(1 << card for card in cards)


def build_state(
    request: bot_service_pb2.ChooseActionRequest, rng: random.Random
) -> KlaberjassState:
    """An engine state at the observed card-play decision, the opponent's hand sampled."""
    obs = request.observation.klaberjass
    me, opp = request.seat, 1 - request.seat
    trump = int(obs.trump) - 1
    mine = [card_id(card) for card in obs.hand]
    known = [card_id(card) for card in obs.seats[opp].known_cards]
    tricks = [(t.leader, [card_id(c) for c in t.cards]) for t in obs.completed_tricks]
    current = [card_id(c) for c in obs.current_trick.cards]
    played: list[list[int]] = [[], []]
    voids: set[int] = set()
    for leader, cards in [*tricks, (obs.current_trick.leader, current)]:
        for offset, card in enumerate(cards):
            played[(leader + offset) % 2].append(card)
        if len(cards) == 2 and (leader + 1) % 2 == opp and _suit(cards[1]) != _suit(cards[0]):
            voids.add(_suit(cards[0]))
            if _suit(cards[1]) != trump:
                voids.add(trump)
    out = {card_id(obs.bottom_card)}
    if obs.HasField("dix_exchanged_by"):
        out.add(8 * trump + R7)
    else:
        out.add(card_id(obs.turn_up))
    seen = set(mine) | set(known) | out | set(played[0]) | set(played[1])
    unseen = [card for card in range(DECK_SIZE) if card not in seen]
    hidden = obs.seats[opp].hand_size - len(known)
    dealt = deal_unseen(
        unseen, [hidden, len(unseen) - hidden], [frozenset(voids), frozenset()], _suit, rng
    )
    options = options_from_wire(request.settings.options)
    scores = (obs.seats[0].score, obs.seats[1].score)
    state = KlaberjassState.from_deck(list(range(DECK_SIZE)), obs.dealer, options, scores)
    hands = [0, 0]
    hands[me] = _mask(mine)
    hands[opp] = _mask(known + dealt[0])
    state.hands = hands
    state.trump = trump
    state.maker = obs.maker
    state.phase = PLAYING
    state.declarations_done = True
    state.sequence_points = [seat.sequence_points for seat in obs.seats]
    state.sequence_winner = obs.sequence_winner if obs.HasField("sequence_winner") else -1
    state.sequences_shown = bool(tricks)
    state.bella = [seat.bella for seat in obs.seats]
    state.card_points = [seat.card_points for seat in obs.seats]
    state.known = _mask(known) | _mask([card_id(c) for c in obs.seats[me].known_cards])
    state.sequence_cards = [
        _mask([card_id(c) for c in seat.shown_sequence_cards]) for seat in obs.seats
    ]
    king, queen = 8 * trump + RK, 8 * trump + RQ
    state.bella_seat = -1
    for seat in (0, 1):
        start = hands[seat] | _mask(played[seat])
        if start >> king & 1 and start >> queen & 1:
            state.bella_seat = seat
    state.completed = [
        (leader, cards[0], cards[1], t.winner)
        for (leader, cards), t in zip(tricks, obs.completed_tricks, strict=True)
    ]
    state.lead = current[0] if current else -1
    state.to_act = me
    return state


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
