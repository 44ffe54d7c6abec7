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
from referee.codec.wire import (
    BoundedCache,
    FieldMemo,
    IdentityCache,
    SequenceCache,
    int_field,
    length_delimited,
    message_fields,
    optional_uint_field,
    tag,
    uint_field,
    varint,
)
from referee.games.pinochle.rules import (
    DECLARE_OUT,
    DIX_BASE,
    DRAW,
    MELD_BASE,
    MELDS,
    NUM_CARDS,
    RANKS,
    HandResult,
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


def _hand_result(hand: HandResult) -> pinochle_pb2.PinochleHandResult:
    return pinochle_pb2.PinochleHandResult(
        dealer=hand.dealer,
        turn_up=_CARDS[hand.turn_up],
        meld_points=hand.meld_points,
        card_points=hand.card_points,
        last_trick=hand.last_trick,
        totals=hand.totals,
    )


def _meld_option(seat: int, trump: int, meld: int) -> pinochle_pb2.PinochleMeld:
    spec = MELDS[meld]
    return pinochle_pb2.PinochleMeld(
        seat=seat,
        type=spec.kind_in(trump),  # type: ignore[arg-type]
        cards=_cards(spec.cards),
        points=spec.points(trump),
    )


_Obs = pinochle_pb2.PinochleObservation
_Seat = pinochle_pb2.PinochleSeat
_Trick = pinochle_pb2.PinochleTrick
_OBSERVATION_TAG = tag(game_pb2.Observation, "pinochle")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_DEALER_TAG = tag(_Obs, "dealer")
_TARGET_TAG = tag(_Obs, "target")
_TRUMP_TAG = tag(_Obs, "trump")
_TURN_UP_FIELD: dict[int | None, bytes] = {
    None: b"",
    **dict(enumerate(message_fields(tag(_Obs, "turn_up"), _CARDS))),
}
_STOCK_SIZE = FieldMemo(tag(_Obs, "stock_size"))
_PHASE_FIELD = FieldMemo(tag(_Obs, "phase"))
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_SEATS_TAG = tag(_Obs, "seats")
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_MELD_OPTIONS_TAG = tag(_Obs, "meld_options")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_SCORE = FieldMemo(tag(_Seat, "score"), int_field)
_SEAT_HAND_POINTS = FieldMemo(tag(_Seat, "hand_points"), int_field)
_SEAT_TRICK_POINTS = FieldMemo(tag(_Seat, "trick_points"), int_field)
_SEAT_TRICKS_WON = FieldMemo(tag(_Seat, "tricks_won"))
_SEAT_HAND_SIZE = FieldMemo(tag(_Seat, "hand_size"))
_SEAT_TABLED_FIELD = message_fields(tag(_Seat, "tabled"), _CARDS)
_SEAT_KNOWN_FIELD = message_fields(tag(_Seat, "known"), _CARDS)
_SEAT_MELDS_TAG = tag(_Seat, "melds")
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_LEADER_FIELD = FieldMemo(_TRICK_LEADER_TAG)
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")


def _completed_trick_field(key: Trick) -> bytes:
    leader, cards, winner = key
    return length_delimited(
        _COMPLETED_TRICKS_TAG,
        b"".join(
            [
                uint_field(_TRICK_LEADER_TAG, leader),
                *map(_TRICK_CARD_FIELD.__getitem__, cards),
                optional_uint_field(_TRICK_WINNER_TAG, winner),  # always set when complete
            ]
        ),
    )


def _meld_option_field(seat: int, trump: int, meld: int) -> bytes:
    return length_delimited(_MELD_OPTIONS_TAG, _meld_option(seat, trump, meld).SerializeToString())


def _seat_meld_field(meld: Meld) -> bytes:
    return length_delimited(_SEAT_MELDS_TAG, _meld(meld).SerializeToString())


def _hand_result_field(hand: HandResult) -> bytes:
    return length_delimited(_PREVIOUS_HANDS_TAG, _hand_result(hand).SerializeToString())


def _header(obs: PinochleObservation) -> bytes:
    """The fields from ``hand_number`` to ``trump``: fixed for a hand."""
    return (
        uint_field(_HAND_NUMBER_TAG, obs.hand_number)
        + uint_field(_DEALER_TAG, obs.dealer)
        + uint_field(_TARGET_TAG, obs.target)
        + uint_field(_TRUMP_TAG, obs.trump + 1)
    )


def _after(key: tuple[tuple[int, ...], tuple[int, ...], bytes]) -> bytes:
    """A seat entry's fields after ``hand_size``: tabled and known cards, melds (encoded)."""
    tabled, known, melds = key
    return b"".join(
        [
            *map(_SEAT_TABLED_FIELD.__getitem__, tabled),
            *map(_SEAT_KNOWN_FIELD.__getitem__, known),
            melds,
        ]
    )


class PinochleCodec(GameCodec):
    """Codec for ``referee.games.pinochle``.

    ``observation_bytes`` writes the observation from parts cached for this match: the hand's
    header fields, each seat summary (scalars from tables; its tabled and known cards and
    melds cached, the melds encoded once per change of the meld list), the meld options, the
    finished tricks and the previous hands (both appended to as the match goes).
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._headers: BoundedCache[tuple[int, ...], bytes] = BoundedCache(256)
        self._seat_after: BoundedCache[tuple[tuple[int, ...], tuple[int, ...], bytes], bytes] = (
            BoundedCache(64)
        )
        self._declared: IdentityCache[bytes] = IdentityCache()
        self._melds_key: tuple[Meld, ...] | None = None
        self._seat_melds: tuple[bytes, ...] = (b"", b"")
        self._meld_options: BoundedCache[tuple[int, int, int], bytes] = BoundedCache()
        self._completed = SequenceCache(_completed_trick_field)
        self._previous = SequenceCache(_hand_result_field)

    def observation_bytes(self, observation: Any) -> bytes:
        obs: PinochleObservation = observation
        (
            seat,
            _,
            _,
            _,
            trump,
            turn_up,
            stock_size,
            phase,
            hand,
            tabled,
            known,
            hand_sizes,
            melds,
            scores,
            hand_points,
            trick_points,
            tricks_won,
            trick_leader,
            current_trick,
            completed,
            meld_options,
            previous,
            _,
        ) = obs
        header_key = obs[1:5]  # hand number, dealer, target, trump
        header = self._headers.get(header_key) or self._headers.put(header_key, _header(obs))
        if melds != self._melds_key:  # tuple of the engine's Meld objects: fast compare
            self._melds_key = melds
            declared = self._declared
            fields = [declared.get(m) or declared.put(m, _seat_meld_field(m)) for m in melds]
            self._seat_melds = tuple(
                b"".join([field for m, field in zip(melds, fields, strict=True) if m.seat == s])
                for s in (0, 1)
            )
        seats = []
        seat_melds, after_cache = self._seat_melds, self._seat_after
        for s in (0, 1):  # the rest of a seat entry changes at every trick: no memo per seat
            after_key = (tabled[s], known[s], seat_melds[s])
            after = after_cache.get(after_key)
            if after is None:  # often b"" (nothing tabled, known or melded): test for None
                after = after_cache.put(after_key, _after(after_key))
            entry = b"".join(
                [
                    _SEAT_SCORE[scores[s]],
                    _SEAT_HAND_POINTS[hand_points[s]],
                    _SEAT_TRICK_POINTS[trick_points[s]],
                    _SEAT_TRICKS_WON[tricks_won[s]],
                    _SEAT_HAND_SIZE[hand_sizes[s]],
                    after,
                ]
            )
            seats.append(_SEATS_TAG + varint(len(entry)) + entry)
        if meld_options:
            offered_cache = self._meld_options
            offered = b"".join(
                [
                    offered_cache.get((seat, trump, meld))
                    or offered_cache.put((seat, trump, meld), _meld_option_field(seat, trump, meld))
                    for meld in meld_options
                ]
            )
        else:
            offered = b""
        current = b"".join(
            [_TRICK_LEADER_FIELD[trick_leader], *map(_TRICK_CARD_FIELD.__getitem__, current_trick)]
        )
        payload = b"".join(
            [
                header,
                _TURN_UP_FIELD[turn_up],
                _STOCK_SIZE[stock_size],
                _PHASE_FIELD[phase],
                *map(_HAND_FIELD.__getitem__, hand),
                *seats,
                _CURRENT_TRICK_TAG,
                varint(len(current)),
                current,
                self._completed(completed),
                offered,
                self._previous(previous),
            ]
        )
        return length_delimited(_OBSERVATION_TAG, payload)

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
        offered = [_meld_option(obs.seat, obs.trump, meld) for meld in obs.meld_options]
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
            previous_hands=[_hand_result(hand) for hand in obs.previous_hands],
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
