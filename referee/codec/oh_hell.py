"""Oh Hell observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, oh_hell_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.games.oh_hell.rules import BID_BASE, OhHellObservation, trick_winner

_PHASE_BIDDING = oh_hell_pb2.OH_HELL_PHASE_BIDDING
_PHASE_PLAYING = oh_hell_pb2.OH_HELL_PHASE_PLAYING
_CARDS = tuple(standard_card(card) for card in range(52))


def _trick(
    leader: int, cards: tuple[int, ...], num_seats: int, trump_suit: int, complete: bool
) -> oh_hell_pb2.OhHellTrick:
    trick = oh_hell_pb2.OhHellTrick(leader=leader, cards=[_CARDS[c] for c in cards])
    if complete:
        trick.winner = (leader + trick_winner(cards, trump_suit)) % num_seats
    return trick


class OhHellCodec(GameCodec):
    """Codec for ``referee.games.oh_hell``."""

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: OhHellObservation = observation
        trump_suit = obs.trump_card // 13
        seats = [
            oh_hell_pb2.OhHellSeat(bid=bid, tricks_won=tricks, score=score)
            if bid is not None
            else oh_hell_pb2.OhHellSeat(tricks_won=tricks, score=score)
            for bid, tricks, score in zip(obs.bids, obs.tricks_won, obs.scores, strict=True)
        ]
        message = oh_hell_pb2.OhHellObservation(
            deal_style=obs.deal_style,
            scoring=obs.scoring,
            hand_number=obs.hand_number,
            num_hands=obs.num_hands,
            hand_size=obs.hand_size,
            dealer=obs.dealer,
            trump_card=_CARDS[obs.trump_card],
            hand=[_CARDS[c] for c in obs.hand],
            seats=seats,
            phase=_PHASE_BIDDING if obs.bidding else _PHASE_PLAYING,
            current_trick=_trick(
                obs.trick_leader, obs.current_trick, obs.num_seats, trump_suit, False
            ),
            completed_tricks=[
                _trick(leader, cards, obs.num_seats, trump_suit, True)
                for leader, cards in obs.completed_tricks
            ],
            previous_hands=[
                oh_hell_pb2.OhHellHandResult(
                    hand_size=hand.hand_size,
                    dealer=hand.dealer,
                    trump_card=_CARDS[hand.trump_card],
                    bids=hand.bids,
                    tricks=hand.tricks,
                    points=hand.points,
                )
                for hand in obs.previous_hands
            ],
        )
        return game_pb2.Observation(oh_hell=message)

    def _encode_action(self, action: int) -> game_pb2.Action:
        if action >= BID_BASE:
            return game_pb2.Action(oh_hell=oh_hell_pb2.OhHellAction(bid=action - BID_BASE))
        return game_pb2.Action(oh_hell=oh_hell_pb2.OhHellAction(play=_CARDS[action]))

    def decode_action(self, message: game_pb2.Action) -> int:
        if message.WhichOneof("game") != "oh_hell":
            raise MalformedActionError("expected an Oh Hell action (Action.oh_hell)")
        action = message.oh_hell
        kind = action.WhichOneof("action")
        if kind == "bid":
            return BID_BASE + action.bid
        if kind == "play":
            return standard_card_id(action.play)
        raise MalformedActionError("an Oh Hell action needs a bid or a card to play")
