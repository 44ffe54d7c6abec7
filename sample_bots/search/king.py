"""King worlds for the search bot: the card play is searched, the auction left to the heuristic.

A world deals the unseen cards to the other seats (by the cards each still holds, never a suit a
seat has shown void in, nor anything but hearts/trumps to a seat that led them under a lead
restriction) and is the engine's state at the observed ``KingPosition``: the hand, its dealer,
the auction's calls (trumps named by the buyer, else the dealer) and its tricks so far, which
the position replays through the rules. The playout stops when the hand is scored; the result is
the seat's points for the hand (King's hands are constant-sum, so that is also the margin over
the others).

Playout policy: in negative hands duck with the highest card that loses, dump penalty cards and
high cards when void, lead low; in positive hands win with the cheapest winning card when last
or void (a trump), lead high.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import king_pb2, options_pb2
from referee.codec.common import options_from_wire
from referee.games.api import Game, State
from referee.games.king import (
    ACCEPT,
    HEARTS,
    MATCH_BASE,
    NO_HEARTS,
    NO_KING_OF_HEARTS,
    OFFER_BASE,
    OPT_OUT,
    PASS,
    PENALTY_CARDS,
    POSITIVE,
    REFUSE,
    TRUMP_BASE,
    KingPosition,
    KingState,
)
from referee.games.registry import game_from_settings
from sample_bots.search.deal import deal_unseen
from sample_bots.search.oh_hell import card_id

SEATS = 4
ALL_SUITS = frozenset(range(4))


@functools.cache
def _game(settings: bytes) -> Game:
    message = options_pb2.GameSettings.FromString(settings)
    return game_from_settings(message, SEATS)


def _suit(card: int) -> int:
    return card // 13


def sample_hands(
    request: bot_service_pb2.ChooseActionRequest, rng: random.Random
) -> list[list[int]]:
    """Unplayed cards of every seat; the observer's own are its hand."""
    obs = request.observation.king
    restricted = _lead_restriction(request)
    seen = {card_id(card) for card in obs.hand}
    voids: list[set[int]] = [set() for _ in range(SEATS)]
    for trick in [*obs.completed_tricks, obs.current_trick]:
        cards = [card_id(card) for card in trick.cards]
        if cards and _suit(cards[0]) == restricted:
            voids[trick.leader].update(ALL_SUITS - {restricted})
        for offset, card in enumerate(cards):
            seen.add(card)
            if _suit(card) != _suit(cards[0]):
                voids[(trick.leader + offset) % SEATS].add(_suit(cards[0]))
    others = [s for s in range(SEATS) if s != request.seat]
    unseen = [card for card in range(52) if card not in seen]
    sizes = [obs.seats[s].cards_in_hand for s in others]
    dealt = deal_unseen(unseen, sizes, [frozenset(voids[s]) for s in others], _suit, rng)
    hands: list[list[int]] = [[] for _ in range(SEATS)]
    hands[request.seat] = [card_id(card) for card in obs.hand]
    for seat, cards in zip(others, dealt, strict=True):
        hands[seat] = cards
    return hands


def _lead_restriction(request: bot_service_pb2.ChooseActionRequest) -> int:
    obs = request.observation.king
    if obs.contract in (NO_HEARTS, NO_KING_OF_HEARTS):
        return HEARTS
    restricted = options_from_wire(request.settings.options).get("trump_lead_restricted")
    if obs.contract == POSITIVE and restricted and obs.trump:
        return int(obs.trump) - 1
    return -1


def build_state(request: bot_service_pb2.ChooseActionRequest, hands: list[list[int]]) -> KingState:
    """The engine state of the observed card play if the seats held ``hands`` (still unplayed)."""
    obs = request.observation.king
    tricks = [
        (trick.leader, tuple(card_id(card) for card in trick.cards), trick.winner)
        for trick in obs.completed_tricks
    ]
    position = KingPosition(
        hands=tuple(tuple(hand) for hand in hands),
        hand_number=obs.hand_number,
        dealer=obs.dealer,
        calls=_calls(obs) if obs.contract == POSITIVE else (),
        completed_tricks=tuple(tricks),
        current_trick=tuple(card_id(card) for card in obs.current_trick.cards),
        options=_game(request.settings.SerializeToString(deterministic=True)).options,
    )
    return position.state()


_ANSWERS = {
    king_pb2.KING_ANSWER_ACCEPT: ACCEPT,
    king_pb2.KING_ANSWER_REFUSE: REFUSE,
    king_pb2.KING_ANSWER_OPT_OUT: OPT_OUT,
}


def _calls(obs: king_pb2.KingObservation) -> tuple[tuple[int, int], ...]:
    """The auction's calls as engine actions, then the naming of trumps (not a call on the
    wire): by the buyer, or by the dealer when nobody bought."""
    calls = []
    for call in obs.auction.calls:
        if call.WhichOneof("call") == "answer":
            action = _ANSWERS[call.answer]
        elif call.bid.kind == king_pb2.KING_BID_KIND_PASS:
            action = PASS
        elif call.bid.kind == king_pb2.KING_BID_KIND_MATCH:
            action = MATCH_BASE + call.bid.tricks
        else:
            action = OFFER_BASE + call.bid.tricks
        calls.append((call.seat, action))
    namer = obs.auction.buyer if obs.auction.HasField("buyer") else obs.dealer
    calls.append((namer, TRUMP_BASE + int(obs.trump) - 1))
    return tuple(calls)


def _beats(card: int, winner: int, trump: int) -> bool:
    if card // 13 == winner // 13:
        return card > winner
    return card // 13 == trump


def policy_card(state: KingState, legal: Sequence[int]) -> int:
    """The playout policy's card for the seat to act."""
    trick = state.trick
    rank = _rank
    if state.contract == POSITIVE:
        trump = state.trump
        if not trick:
            return max(legal, key=rank)
        winners = [card for card in legal if _beats(card, state.win_card, trump)]
        if winners and (len(trick) == SEATS - 1 or legal[0] // 13 != state.led_suit):
            return min(winners, key=lambda card: (card // 13 == trump, rank(card)))
        if winners and legal[0] // 13 != trump:
            best = max(winners, key=rank)
            return best if rank(best) >= 11 else min(legal, key=rank)
        return min(legal, key=lambda card: (card // 13 == trump, rank(card)))
    if not trick:
        return min(legal, key=rank)
    if legal[0] // 13 != state.led_suit:  # void: dump penalties, then high cards
        penalty = PENALTY_CARDS.get(state.contract, 0)
        return max(legal, key=lambda card: (penalty >> card & 1, rank(card)))
    losers = [card for card in legal if card < state.win_card]
    if losers:
        return max(losers)
    return max(legal) if len(trick) == SEATS - 1 else min(legal)


def _rank(card: int) -> int:
    return card % 13


class KingAdapter:
    """Search the card play only."""

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        obs = request.observation
        return obs.WhichOneof("game") == "king" and obs.king.phase == king_pb2.KING_PHASE_PLAY

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        return build_state(request, sample_hands(request, rng))

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        assert isinstance(state, KingState)
        hand = state.hand_number
        while state.to_act >= 0 and state.hand_number == hand:
            legal = state.legal_actions()
            state.apply(policy_card(state, legal) if len(legal) > 1 else legal[0])
        return float(state.previous_hands[-1].points[seat])
