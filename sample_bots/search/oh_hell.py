"""Oh Hell worlds for the search bot: bids and card play are both searched.

A world is rebuilt from the start of the current hand: the unseen cards are dealt to the other
seats (and the undealt stock), each seat's hand is its dealt cards plus those it has already
played, and the hand's public moves (bids, then the cards of every trick) are replayed through
the engine, so the engine's own bookkeeping is right by construction. The engine state is made
the game's only hand, so the playout stops when this hand is scored.

Playout policy for every seat: bid the heuristic estimate; while short of the bid take the trick
with the lowest card that wins, otherwise duck with the highest card that loses.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2
from referee.games.api import State
from referee.games.oh_hell import BID_BASE, OhHellPosition, OhHellState
from sample_bots.oh_hell_heuristic import estimate_tricks
from sample_bots.search.deal import deal_unseen

DECK = 52


def card_id(card: cards_pb2.Card) -> int:
    """The engine id of a wire card (``StandardDeck``: suit * 13 + rank - 2)."""
    return (card.suit - 1) * 13 + card.rank - 2


def _suit(card: int) -> int:
    return card // 13


def build_state(
    request: bot_service_pb2.ChooseActionRequest, hands: list[list[int]], undealt: list[int]
) -> OhHellState:
    """The engine state of the observed decision if the seats held ``hands`` (still unplayed).

    The hand is set up as dealt (a position: ``undealt`` is what no seat was dealt), then the
    observed bids and tricks are replayed.
    """
    obs = request.observation.oh_hell
    n = request.settings.num_seats
    played: list[list[int]] = [[] for _ in range(n)]
    tricks = [*obs.completed_tricks, obs.current_trick]
    for trick in tricks:
        for offset, card in enumerate(trick.cards):
            played[(trick.leader + offset) % n].append(card_id(card))
    dealt = OhHellPosition(
        hands=tuple(tuple(hands[s] + played[s]) for s in range(n)),
        trump_card=card_id(obs.trump_card),
        dealer=obs.dealer,
        options={"scoring": obs.scoring},
    )
    state = dealt.state()
    for offset in range(n):
        seat = (obs.dealer + 1 + offset) % n
        if not obs.seats[seat].HasField("bid"):
            break
        state.apply(BID_BASE + obs.seats[seat].bid)
    for trick in tricks:
        for card in trick.cards:
            state.apply(card_id(card))
    return state


def sample_hands(
    request: bot_service_pb2.ChooseActionRequest, rng: random.Random
) -> tuple[list[list[int]], list[int]]:
    """Unplayed cards of every seat (the observer's own are its hand) and the undealt stock."""
    obs = request.observation.oh_hell
    n = request.settings.num_seats
    seen = {card_id(card) for card in obs.hand}
    seen.add(card_id(obs.trump_card))
    held = [obs.hand_size] * n
    voids: list[set[int]] = [set() for _ in range(n)]
    for trick in [*obs.completed_tricks, obs.current_trick]:
        cards = [card_id(card) for card in trick.cards]
        for offset, card in enumerate(cards):
            seat = (trick.leader + offset) % n
            seen.add(card)
            held[seat] -= 1
            if _suit(card) != _suit(cards[0]):
                voids[seat].add(_suit(cards[0]))
    others = [s for s in range(n) if s != request.seat]
    unseen = [card for card in range(DECK) if card not in seen]
    sizes = [held[s] for s in others]
    sizes.append(len(unseen) - sum(sizes))  # the undealt stock
    void_sets = [frozenset(voids[s]) for s in others] + [frozenset()]
    dealt = deal_unseen(unseen, sizes, void_sets, _suit, rng)
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[request.seat] = sorted(card_id(card) for card in obs.hand)
    for seat, cards in zip(others, dealt, strict=False):
        hands[seat] = cards
    return hands, dealt[-1]


def _beats(card: int, winner: int, trump: int) -> bool:
    if card // 13 == winner // 13:
        return card > winner
    return card // 13 == trump


def _strength(card: int, trump: int) -> int:
    return card % 13 + (13 if card // 13 == trump else 0)


def policy_card(state: OhHellState, legal: Sequence[int]) -> int:
    """The playout policy's card for the seat to act."""
    seat = state.to_act
    trump = state.trump_suit
    bid = state.bids[seat]
    need = (bid if bid is not None else 0) - state.tricks_won[seat]
    trick = state.trick
    if not trick:
        if need > 0:
            return max(legal, key=lambda card: _strength(card, trump))
        return min(legal, key=lambda card: _strength(card, trump))
    winner = trick[0]
    for card in trick[1:]:
        if _beats(card, winner, trump):
            winner = card
    if need > 0:
        winners = [card for card in legal if _beats(card, winner, trump)]
        if winners:
            return min(winners, key=lambda card: _strength(card, trump))
        return min(legal, key=lambda card: _strength(card, trump))
    losers = [card for card in legal if not _beats(card, winner, trump)]
    if losers:
        return max(losers, key=lambda card: _strength(card, trump))
    if len(trick) == state.num_seats - 1:
        return max(legal, key=lambda card: _strength(card, trump))
    return min(legal, key=lambda card: _strength(card, trump))


def policy_bid(state: OhHellState, legal: Sequence[int]) -> int:
    """The playout policy's bid: the nearest legal bid to the heuristic estimate."""
    hand = [
        (card // 13 + 1, card % 13 + 2)
        for card in range(DECK)
        if state.hands[state.to_act] >> card & 1
    ]
    estimate = estimate_tricks(hand, state.trump_suit + 1, state.num_seats)
    return min(legal, key=lambda action: (abs(action - BID_BASE - estimate), action))


class OhHellAdapter:
    """Search both the bids and the card play."""

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        return request.observation.WhichOneof("game") == "oh_hell"

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        hands, undealt = sample_hands(request, rng)
        return build_state(request, hands, undealt)

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        assert isinstance(state, OhHellState)
        while state.to_act >= 0:
            legal = state.legal_actions()
            if state.bidding:
                state.apply(policy_bid(state, legal))
            else:
                state.apply(policy_card(state, legal) if len(legal) > 1 else legal[0])
        return float(state.previous_hands[-1].points[seat])
