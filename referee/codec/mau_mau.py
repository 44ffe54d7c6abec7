"""Mau-Mau observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, mau_mau_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.games.mau_mau.rules import (
    ANNOUNCE_SHIFT,
    DRAW,
    LAST_CARD,
    PASS,
    MauMauObservation,
    action_cards,
    discard_action,
)

_CARDS = tuple(standard_card(card) for card in range(52))
_PHASE_DISCARD = mau_mau_pb2.MAU_MAU_PHASE_DISCARD
_PHASE_PLAY_DRAWN = mau_mau_pb2.MAU_MAU_PHASE_PLAY_DRAWN
_JACK_INDEX = 9


class MauMauCodec(GameCodec):
    """Codec for ``referee.games.mau_mau``."""

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: MauMauObservation = observation
        message = mau_mau_pb2.MauMauObservation(
            scoring=obs.scoring,
            target=obs.target,
            cannot_discard=obs.cannot_discard,
            jack_wild=obs.jack_wild,
            deal_number=obs.deal_number,
            dealer=obs.dealer,
            clockwise=obs.clockwise,
            phase=_PHASE_PLAY_DRAWN if obs.playing_drawn_card else _PHASE_DISCARD,
            hand=[_CARDS[c] for c in obs.hand],
            seats=[
                mau_mau_pb2.MauMauSeat(hand_size=size, tally=tally, fines=fines, barred=barred)
                for size, tally, fines, barred in zip(
                    obs.hand_sizes, obs.tallies, obs.fines, obs.barred, strict=True
                )
            ],
            start_suit=obs.start_card // 13 + 1,  # type: ignore[arg-type]
            top_card=_CARDS[obs.discard_pile[-1]],
            discard_pile=[_CARDS[c] for c in obs.discard_pile],
            stock_size=obs.stock_size,
            announced_suit=obs.announced_suit,  # type: ignore[arg-type]
            any_card=obs.any_card,
            previous_deals=[
                mau_mau_pb2.MauMauDealResult(
                    deal_number=deal.deal_number,
                    dealer=deal.dealer,
                    start_card=_CARDS[deal.start_card],
                    winner=deal.winner,
                    final_jacks=deal.final_jacks,
                    multiplier=deal.multiplier,
                    hand_points=deal.hand_points,
                    fines=deal.fines,
                    points=deal.points,
                    tallies=deal.tallies,
                )
                for deal in obs.previous_deals
            ],
        )
        if obs.drawn_card is not None:
            message.drawn_card.CopyFrom(_CARDS[obs.drawn_card])
        return game_pb2.Observation(mau_mau=message)

    def _encode_action(self, action: int) -> game_pb2.Action:
        if action == DRAW:
            return game_pb2.Action(mau_mau=mau_mau_pb2.MauMauAction(draw=mau_mau_pb2.MauMauDraw()))
        if action == PASS:
            return game_pb2.Action(
                mau_mau=mau_mau_pb2.MauMauAction(pass_turn=mau_mau_pb2.MauMauPass())
            )
        discard = mau_mau_pb2.MauMauDiscard(
            cards=[_CARDS[c] for c in action_cards(action)],
            announced_suit=action >> ANNOUNCE_SHIFT & 7,  # type: ignore[arg-type]
            announce_last_card=bool(action & LAST_CARD),
        )
        return game_pb2.Action(mau_mau=mau_mau_pb2.MauMauAction(discard=discard))

    def decode_action(self, message: game_pb2.Action) -> int:
        if message.WhichOneof("game") != "mau_mau":
            raise MalformedActionError("expected a Mau-Mau action (Action.mau_mau)")
        action = message.mau_mau
        kind = action.WhichOneof("action")
        if kind == "draw":
            return DRAW
        if kind == "pass_turn":
            return PASS
        if kind != "discard":
            raise MalformedActionError("a Mau-Mau action needs a discard, a draw or a pass")
        discard = action.discard
        cards = [standard_card_id(card) for card in discard.cards]
        if not 1 <= len(cards) <= 2:
            raise MalformedActionError("a discard is one card or two Jacks")
        if len(cards) == 2 and (
            cards[0] == cards[1] or any(card % 13 != _JACK_INDEX for card in cards)
        ):
            raise MalformedActionError("only two different Jacks may be discarded together")
        announced = int(discard.announced_suit)
        if not 0 <= announced <= 4:
            raise MalformedActionError(f"not a suit: {announced}")
        return discard_action(
            cards[0],
            announced,
            cards[1] if len(cards) == 2 else None,
            discard.announce_last_card,
        )
