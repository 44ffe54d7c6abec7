"""Pinochle observations and actions on the wire.

Engine card ids (``12 * suit + 2 * rank + copy``, see ``referee.games.pinochle.rules``) become
``Card(suit, rank, copy)``. A meld action is sent as its cards alone, because the engine's meld
ids do not depend on trump (so encoded actions can be cached); the observation's
``meld_options`` gives each offered meld's type and points in the same order.
"""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, pinochle_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.games.pinochle.rules import (
    DECLARE_OUT,
    DIX_BASE,
    DRAW,
    MELD_BASE,
    MELDS,
    NUM_CARDS,
    RANKS,
    Meld,
    PinochleObservation,
    Trick,
    card_id,
    card_rank,
    card_suit,
)

_CARDS = tuple(
    cards_pb2.Card(
        suit=card_suit(card) + 1,  # type: ignore[arg-type]
        rank=int(RANKS[card_rank(card)]),  # type: ignore[arg-type]
        copy=card & 1,
    )
    for card in range(NUM_CARDS)
)
_RANK_INDEX = {int(rank): index for index, rank in enumerate(RANKS)}
_MELD_BY_MASK = {spec.mask: meld for meld, spec in enumerate(MELDS)}


def card_from_wire(card: cards_pb2.Card) -> int:
    """The engine id of a wire card; ``MalformedActionError`` if it is not a Pinochle card."""
    rank = _RANK_INDEX.get(card.rank)
    if not 1 <= card.suit <= 4 or rank is None or card.copy > 1:
        raise MalformedActionError(
            f"not a Pinochle card: suit={card.suit} rank={card.rank} copy={card.copy}"
        )
    return card_id(card.suit - 1, rank, card.copy)


def _cards(cards: tuple[int, ...]) -> list[cards_pb2.Card]:
    return [_CARDS[c] for c in cards]


def _meld(meld: Meld) -> pinochle_pb2.PinochleMeld:
    return pinochle_pb2.PinochleMeld(
        seat=meld.seat,
        type=meld.kind,  # type: ignore[arg-type]
        cards=_cards(meld.cards),
        points=meld.points,
    )


def _trick(trick: Trick) -> pinochle_pb2.PinochleTrick:
    return pinochle_pb2.PinochleTrick(
        leader=trick.leader, cards=_cards(trick.cards), winner=trick.winner
    )


class PinochleCodec(GameCodec):
    """Codec for ``referee.games.pinochle``."""

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: PinochleObservation = observation
        seats = [
            pinochle_pb2.PinochleSeat(
                score=obs.scores[seat],
                hand_points=obs.hand_points[seat],
                trick_points=obs.trick_points[seat],
                tricks_won=obs.tricks_won[seat],
                hand_size=obs.hand_sizes[seat],
                tabled=_cards(obs.tabled[seat]),
                known=_cards(obs.known[seat]),
                melds=[_meld(m) for m in obs.melds if m.seat == seat],
            )
            for seat in (0, 1)
        ]
        offered = []
        for meld in obs.meld_options:
            spec = MELDS[meld]
            kind = spec.kind_in(obs.trump)
            offered.append(
                pinochle_pb2.PinochleMeld(
                    seat=obs.seat,
                    type=kind,  # type: ignore[arg-type]
                    cards=_cards(spec.cards),
                    points=spec.points(obs.trump),
                )
            )
        message = pinochle_pb2.PinochleObservation(
            hand_number=obs.hand_number,
            dealer=obs.dealer,
            target=obs.target,
            trump=obs.trump + 1,  # type: ignore[arg-type]
            stock_size=obs.stock_size,
            phase=obs.phase,  # type: ignore[arg-type]
            hand=_cards(obs.hand),
            seats=seats,
            current_trick=pinochle_pb2.PinochleTrick(
                leader=obs.trick_leader, cards=_cards(obs.current_trick)
            ),
            completed_tricks=[_trick(t) for t in obs.completed_tricks],
            meld_options=offered,
            previous_hands=[
                pinochle_pb2.PinochleHandResult(
                    dealer=hand.dealer,
                    turn_up=_CARDS[hand.turn_up],
                    meld_points=hand.meld_points,
                    card_points=hand.card_points,
                    last_trick=hand.last_trick,
                    totals=hand.totals,
                )
                for hand in obs.previous_hands
            ],
        )
        if obs.turn_up is not None:
            message.turn_up.CopyFrom(_CARDS[obs.turn_up])
        return game_pb2.Observation(pinochle=message)

    def _encode_action(self, action: int) -> game_pb2.Action:
        if 0 <= action < MELD_BASE:
            move = pinochle_pb2.PinochleAction(play=_CARDS[action])
        elif MELD_BASE <= action < DIX_BASE:
            cards = _cards(MELDS[action - MELD_BASE].cards)
            move = pinochle_pb2.PinochleAction(meld=pinochle_pb2.PinochleMeldAction(cards=cards))
        elif DIX_BASE <= action < DRAW:
            dix = pinochle_pb2.PinochleExchangeDix(copy=action - DIX_BASE)
            move = pinochle_pb2.PinochleAction(exchange_dix=dix)
        elif action == DRAW:
            move = pinochle_pb2.PinochleAction(draw=pinochle_pb2.PinochleDraw())
        elif action == DECLARE_OUT:
            move = pinochle_pb2.PinochleAction(declare_out=pinochle_pb2.PinochleDeclareOut())
        else:
            raise ValueError(f"not a Pinochle action: {action}")
        return game_pb2.Action(pinochle=move)

    def decode_action(self, message: game_pb2.Action) -> int:
        if message.WhichOneof("game") != "pinochle":
            raise MalformedActionError("expected a Pinochle action (Action.pinochle)")
        action = message.pinochle
        kind = action.WhichOneof("action")
        if kind == "play":
            return card_from_wire(action.play)
        if kind == "meld":
            mask = 0
            for card in action.meld.cards:
                mask |= 1 << card_from_wire(card)
            meld = _MELD_BY_MASK.get(mask)
            if meld is None or len(action.meld.cards) != mask.bit_count():
                raise MalformedActionError("these cards are not a meld of the table")
            return MELD_BASE + meld
        if kind == "exchange_dix":
            copy = action.exchange_dix.copy
            if copy > 1:
                raise MalformedActionError("the dix copy is 0 or 1")
            return DIX_BASE + copy
        if kind == "draw":
            return DRAW
        if kind == "declare_out":
            return DECLARE_OUT
        raise MalformedActionError("a Pinochle action needs a move")
