"""Mau-Mau observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, mau_mau_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.codec.wire import (
    BoundedCache,
    EntryMemo,
    FieldMemo,
    SequenceCache,
    int_field,
    length_delimited,
    message_fields,
    tag,
    uint_field,
)
from referee.games.mau_mau.rules import (
    ANNOUNCE_SHIFT,
    DRAW,
    LAST_CARD,
    PASS,
    DealResult,
    MauMauObservation,
    action_cards,
    discard_action,
)

_CARDS = tuple(standard_card(card) for card in range(52))
_PHASE_DISCARD = mau_mau_pb2.MAU_MAU_PHASE_DISCARD
_PHASE_PLAY_DRAWN = mau_mau_pb2.MAU_MAU_PHASE_PLAY_DRAWN
_JACK_INDEX = 9

_Obs = mau_mau_pb2.MauMauObservation
_Seat = mau_mau_pb2.MauMauSeat
_OBSERVATION_TAG = tag(game_pb2.Observation, "mau_mau")
_SCORING_TAG = tag(_Obs, "scoring")
_TARGET_TAG = tag(_Obs, "target")
_CANNOT_DISCARD_TAG = tag(_Obs, "cannot_discard")
_JACK_WILD_TAG = tag(_Obs, "jack_wild")
_DEAL_NUMBER_TAG = tag(_Obs, "deal_number")
_DEALER_TAG = tag(_Obs, "dealer")
_CLOCKWISE_TAG = tag(_Obs, "clockwise")
_PHASE_TAG = tag(_Obs, "phase")
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_SEATS_TAG = tag(_Obs, "seats")
_START_SUIT_FIELD = FieldMemo(tag(_Obs, "start_suit"))
_TOP_CARD_FIELD = message_fields(tag(_Obs, "top_card"), _CARDS)
_DISCARD_PILE_FIELD = message_fields(tag(_Obs, "discard_pile"), _CARDS)
_STOCK_SIZE = FieldMemo(tag(_Obs, "stock_size"))
_ANNOUNCED_SUIT_FIELD = FieldMemo(tag(_Obs, "announced_suit"))
_ANY_CARD_FIELD = FieldMemo(tag(_Obs, "any_card"))
_DRAWN_CARD_FIELD = message_fields(tag(_Obs, "drawn_card"), _CARDS)
_PREVIOUS_DEALS_TAG = tag(_Obs, "previous_deals")
_SEAT_HAND_SIZE = FieldMemo(tag(_Seat, "hand_size"))
_SEAT_TALLY_TAG = tag(_Seat, "tally")
_SEAT_FINES_TAG = tag(_Seat, "fines")
_SEAT_BARRED_TAG = tag(_Seat, "barred")


def _deal_result(deal: DealResult) -> mau_mau_pb2.MauMauDealResult:
    return mau_mau_pb2.MauMauDealResult(
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


def _deal_result_field(deal: DealResult) -> bytes:
    return length_delimited(_PREVIOUS_DEALS_TAG, _deal_result(deal).SerializeToString())


def _header(obs: MauMauObservation) -> bytes:
    """The fields from ``scoring`` to ``phase``."""
    return b"".join(
        [
            length_delimited(_SCORING_TAG, obs.scoring.encode()) if obs.scoring else b"",
            uint_field(_TARGET_TAG, obs.target),
            length_delimited(_CANNOT_DISCARD_TAG, obs.cannot_discard.encode())
            if obs.cannot_discard
            else b"",
            uint_field(_JACK_WILD_TAG, obs.jack_wild),
            uint_field(_DEAL_NUMBER_TAG, obs.deal_number),
            uint_field(_DEALER_TAG, obs.dealer),
            uint_field(_CLOCKWISE_TAG, obs.clockwise),
            uint_field(_PHASE_TAG, _PHASE_PLAY_DRAWN if obs.playing_drawn_card else _PHASE_DISCARD),
        ]
    )


def _seat_memo(rest: tuple[int, int, bool]) -> EntryMemo:
    """A seat's ``seats`` entries by hand size, for its (tally, fines, barred).

    Hand sizes change at every play, the rest rarely: the codec keeps one memo per seat while
    the rest is unchanged.
    """
    tally, fines, barred = rest
    after = (
        int_field(_SEAT_TALLY_TAG, tally)
        + uint_field(_SEAT_FINES_TAG, fines)
        + uint_field(_SEAT_BARRED_TAG, barred)
    )
    return EntryMemo(_SEATS_TAG, b"", _SEAT_HAND_SIZE, after)


class MauMauCodec(GameCodec):
    """Codec for ``referee.games.mau_mau``.

    ``observation_bytes`` writes the observation from parts cached for this match: the deal's
    header fields (options, deal, dealer, direction, phase), each seat summary (a memo per
    seat by hand size while its tally, fines and bar are unchanged), the discard pile and the
    previous deals (both appended to as the match goes); scalars come from tables.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._headers: BoundedCache[tuple[object, ...], bytes] = BoundedCache(256)
        self._seat_block: tuple[tuple[int, ...], ...] = ()
        self._seat_memos: list[EntryMemo] = []
        self._seat_memos_by_rest: BoundedCache[tuple[int, int, bool], EntryMemo] = BoundedCache(32)
        self._pile = SequenceCache(_DISCARD_PILE_FIELD.__getitem__)
        self._previous = SequenceCache(_deal_result_field)

    def observation_bytes(self, observation: Any) -> bytes:
        obs: MauMauObservation = observation
        (
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            hand,
            hand_sizes,
            start_card,
            pile,
            stock_size,
            announced_suit,
            any_card,
            drawn_card,
            fines,
            barred,
            tallies,
            previous,
        ) = obs
        header_key = obs[2:10]  # scoring .. phase: fixed for a deal but for the phase
        header = self._headers.get(header_key) or self._headers.put(header_key, _header(obs))
        block = (tallies, fines, barred)  # change at fines and deal ends, unlike hand sizes
        if block != self._seat_block:
            self._seat_block = block
            memos = self._seat_memos_by_rest
            self._seat_memos = [
                memo if (memo := memos.get(rest)) is not None else memos.put(rest, _seat_memo(rest))
                for rest in zip(tallies, fines, barred, strict=False)
            ]
        payload = b"".join(
            [
                header,
                *map(_HAND_FIELD.__getitem__, hand),
                *map(EntryMemo.__getitem__, self._seat_memos, hand_sizes),
                _START_SUIT_FIELD[start_card // 13 + 1],
                _TOP_CARD_FIELD[pile[-1]],
                self._pile(pile),
                _STOCK_SIZE[stock_size],
                _ANNOUNCED_SUIT_FIELD[announced_suit],
                _ANY_CARD_FIELD[any_card],
                b"" if drawn_card is None else _DRAWN_CARD_FIELD[drawn_card],
                self._previous(previous),
            ]
        )
        return length_delimited(_OBSERVATION_TAG, payload)

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
            previous_deals=[_deal_result(deal) for deal in obs.previous_deals],
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
