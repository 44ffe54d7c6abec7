"""Klaberjass observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, klaberjass_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.games.cards import Rank, Suit
from referee.games.klaberjass import rules
from referee.games.klaberjass.rules import (
    ACCEPT,
    BELLA_BASE,
    DECK_SIZE,
    EXCHANGE,
    KEEP,
    NAME_BASE,
    NO_SEQUENCE,
    PASS,
    RANKS,
    HandResult,
    KlaberjassObservation,
    Run,
    Trick,
    card_id,
    card_rank,
    card_suit,
)

_CARDS = tuple(
    cards_pb2.Card(suit=card_suit(c), rank=card_rank(c))  # type: ignore[arg-type]
    for c in range(DECK_SIZE)
)
_PHASES = {
    rules.BIDDING_TURN_UP: klaberjass_pb2.KLABERJASS_PHASE_BIDDING_TURN_UP,
    rules.BIDDING_OTHER_SUIT: klaberjass_pb2.KLABERJASS_PHASE_BIDDING_OTHER_SUIT,
    rules.DIX: klaberjass_pb2.KLABERJASS_PHASE_DIX,
    rules.DECLARING: klaberjass_pb2.KLABERJASS_PHASE_DECLARING,
    rules.PLAYING: klaberjass_pb2.KLABERJASS_PHASE_PLAYING,
    rules.GAME_OVER: klaberjass_pb2.KLABERJASS_PHASE_GAME_OVER,
}
_CALLS = {
    PASS: klaberjass_pb2.KLABERJASS_CALL_PASS,
    ACCEPT: klaberjass_pb2.KLABERJASS_CALL_ACCEPT,
    EXCHANGE: klaberjass_pb2.KLABERJASS_CALL_EXCHANGE_DIX,
    KEEP: klaberjass_pb2.KLABERJASS_CALL_KEEP_DIX,
    NO_SEQUENCE: klaberjass_pb2.KLABERJASS_CALL_NO_SEQUENCE,
}
_ACTION_OF_CALL = {call: action for action, call in _CALLS.items()}


def _suit(index: int) -> cards_pb2.Suit.ValueType:
    """Wire suit of a rules suit index (``Suit - 1``)."""
    return cards_pb2.Suit.ValueType(index + 1)


def _rank(rank_index: int) -> cards_pb2.Rank.ValueType:
    return cards_pb2.Rank.ValueType(int(RANKS[rank_index]))


def _card_id(card: cards_pb2.Card) -> int:
    if card.suit not in Suit._value2member_map_ or card.rank not in Rank._value2member_map_:
        raise MalformedActionError(f"not a card: suit={card.suit} rank={card.rank}")
    if card.copy:
        raise MalformedActionError("Klaberjass uses a single deck: copy must be 0")
    rank = Rank(card.rank)
    if rank not in RANKS:
        raise MalformedActionError(f"{rank.name.lower()}s are not in the 32-card deck")
    return card_id(Suit(card.suit), rank)


def _trick(trick: Trick) -> klaberjass_pb2.KlaberjassTrick:
    message = klaberjass_pb2.KlaberjassTrick(
        leader=trick.leader, cards=[_CARDS[c] for c in trick.cards]
    )
    if trick.winner >= 0:
        message.winner = trick.winner
    return message


def _hand_result(hand: HandResult) -> klaberjass_pb2.KlaberjassHandResult:
    message = klaberjass_pb2.KlaberjassHandResult(
        dealer=hand.dealer,
        turn_up=_CARDS[hand.turn_up],
        thrown_in=hand.trump < 0,
        card_points=hand.card_points,
        sequence_points=hand.sequence_points,
        bella=hand.bella,
        totals=hand.totals,
        points=hand.points,
    )
    if hand.trump >= 0:
        message.trump = _suit(hand.trump)
        message.maker = hand.maker
        message.last_trick = hand.last_trick
    return message


class KlaberjassCodec(GameCodec):
    """Codec for ``referee.games.klaberjass``."""

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: KlaberjassObservation = observation
        seats = []
        for view in obs.seats:
            seat = klaberjass_pb2.KlaberjassSeat(
                score=view.score,
                hand_size=view.hand_size,
                tricks_won=view.tricks_won,
                card_points=view.card_points,
                declared_length=view.declared_length,
                sequence_points=view.sequence_points,
                shown_sequence_cards=[_CARDS[c] for c in view.shown_sequences],
                bella=view.bella,
                known_cards=[_CARDS[c] for c in view.known_cards],
            )
            if view.declared_top >= 0:
                seat.declared_top = _rank(view.declared_top)
            seats.append(seat)
        message = klaberjass_pb2.KlaberjassObservation(
            target_score=obs.target_score,
            hand_number=obs.hand_number,
            dealer=obs.dealer,
            phase=_PHASES[obs.phase],
            turn_up=_CARDS[obs.turn_up],
            bids=[
                klaberjass_pb2.KlaberjassBid(
                    seat=seat,
                    round=1 if index < 2 else 2,
                    trump=_bid_trump(action, obs.turn_up),
                )
                for index, (seat, action) in enumerate(obs.bids)
            ],
            hand=[_CARDS[c] for c in obs.hand],
            seats=seats,
            current_trick=_trick(obs.current_trick),
            completed_tricks=[_trick(t) for t in obs.completed_tricks],
            previous_hands=[_hand_result(h) for h in obs.previous_hands],
        )
        if obs.trump >= 0:
            message.trump = _suit(obs.trump)
            message.maker = obs.maker
        if obs.bottom_card >= 0:
            message.bottom_card.CopyFrom(_CARDS[obs.bottom_card])
        if obs.dix_exchanged_by >= 0:
            message.dix_exchanged_by = obs.dix_exchanged_by
        if obs.sequence_winner >= 0:
            message.sequence_winner = obs.sequence_winner
        return game_pb2.Observation(klaberjass=message)

    def _encode_action(self, action: int) -> game_pb2.Action:
        if 0 <= action < DECK_SIZE:
            move = klaberjass_pb2.KlaberjassAction(
                play=klaberjass_pb2.KlaberjassPlay(card=_CARDS[action])
            )
        elif BELLA_BASE <= action < BELLA_BASE + DECK_SIZE:
            move = klaberjass_pb2.KlaberjassAction(
                play=klaberjass_pb2.KlaberjassPlay(card=_CARDS[action - BELLA_BASE], bella=True)
            )
        elif action in _CALLS:
            move = klaberjass_pb2.KlaberjassAction(call=_CALLS[action])
        elif NAME_BASE <= action < NAME_BASE + 4:
            move = klaberjass_pb2.KlaberjassAction(name_trump=_suit(action - NAME_BASE))
        else:
            run = Run.from_action(action)
            move = klaberjass_pb2.KlaberjassAction(
                declare_sequence=klaberjass_pb2.KlaberjassSequence(
                    suit=_suit(run.suit), top=_rank(run.top), length=run.length
                )
            )
        return game_pb2.Action(klaberjass=move)

    def decode_action(self, message: game_pb2.Action) -> int:
        if message.WhichOneof("game") != "klaberjass":
            raise MalformedActionError("expected a Klaberjass action (Action.klaberjass)")
        move = message.klaberjass
        kind = move.WhichOneof("action")
        if kind == "call":
            if move.call not in _ACTION_OF_CALL:
                raise MalformedActionError("a Klaberjass call must be set")
            return _ACTION_OF_CALL[move.call]
        if kind == "name_trump":
            if move.name_trump not in Suit._value2member_map_:
                raise MalformedActionError("name_trump needs a suit")
            return NAME_BASE + move.name_trump - 1
        if kind == "declare_sequence":
            seq = move.declare_sequence
            if seq.suit not in Suit._value2member_map_ or seq.top not in Rank._value2member_map_:
                raise MalformedActionError("a sequence needs a suit and a top rank")
            top_rank = Rank(seq.top)
            if top_rank not in RANKS:
                raise MalformedActionError("a sequence's top card must be 7 to ace")
            top = RANKS.index(top_rank)
            if not 3 <= seq.length <= top + 1:
                raise MalformedActionError("a sequence has 3 to 8 cards, down to the 7 at most")
            return Run(seq.suit - 1, top - seq.length + 1, seq.length).action
        if kind == "play":
            card = _card_id(move.play.card)
            return BELLA_BASE + card if move.play.bella else card
        raise MalformedActionError("a Klaberjass action needs a call, a suit, a sequence or a card")


def _bid_trump(action: int, turn_up: int) -> cards_pb2.Suit.ValueType:
    if action == ACCEPT:
        return _suit(turn_up // 8)
    if NAME_BASE <= action < NAME_BASE + 4:
        return _suit(action - NAME_BASE)
    return cards_pb2.SUIT_UNSPECIFIED
