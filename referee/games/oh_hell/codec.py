"""Oh Hell observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, oh_hell_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.codec.wire import (
    FieldMemo,
    IdentityCache,
    Memo,
    int_field,
    length_delimited,
    length_prefix,
    message_fields,
    optional_uint_field,
    packed_ints,
    packed_uints,
    tag,
    uint_field,
)
from referee.games.oh_hell.view import BID_BASE, MAX_SEATS, HandResult, OhHellObservation

_FinishedTrick = tuple[int, tuple[int, ...], int]
"""(leader, cards in play order, winner), as ``OhHellObservation.completed_tricks`` holds them."""

_PHASE_BIDDING = oh_hell_pb2.OH_HELL_PHASE_BIDDING
_PHASE_PLAYING = oh_hell_pb2.OH_HELL_PHASE_PLAYING
_CARDS = tuple(standard_card(card) for card in range(52))
_SEATS = range(MAX_SEATS)


_Obs = oh_hell_pb2.OhHellObservation
_Seat = oh_hell_pb2.OhHellSeat
_Trick = oh_hell_pb2.OhHellTrick
_Result = oh_hell_pb2.OhHellHandResult


_OBSERVATION_PREFIX = FieldMemo(tag(game_pb2.Observation, "oh_hell"), length_prefix)
"""``Observation.oh_hell``'s tag and length, by length: memoised, as the observation is
joined from parts and measured at every decision."""
_DEAL_STYLE_TAG = tag(_Obs, "deal_style")
_SCORING_TAG = tag(_Obs, "scoring")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_NUM_HANDS_TAG = tag(_Obs, "num_hands")
_HAND_SIZE_TAG = tag(_Obs, "hand_size")
_DEALER_TAG = tag(_Obs, "dealer")
_TRUMP_CARD_FIELD = message_fields(tag(_Obs, "trump_card"), _CARDS)
_HAND_FIELD_OF = dict(enumerate(message_fields(tag(_Obs, "hand"), _CARDS))).__getitem__
"""A ``hand`` entry by card id: a dict's bound ``__getitem__``, which ``map`` calls faster
than a tuple's (a slot wrapper)."""
_SEATS_PREFIX = FieldMemo(tag(_Obs, "seats"), length_prefix)
_PHASE_FIELD = {
    True: uint_field(tag(_Obs, "phase"), _PHASE_BIDDING),
    False: uint_field(tag(_Obs, "phase"), _PHASE_PLAYING),
}
_CURRENT_TRICK_PREFIX = FieldMemo(tag(_Obs, "current_trick"), length_prefix)
_COMPLETED_TRICKS_PREFIX = FieldMemo(tag(_Obs, "completed_tricks"), length_prefix)
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_BID_FIELD = FieldMemo(tag(_Seat, "bid"), optional_uint_field)
_SEAT_TRICKS_WON_FIELD = FieldMemo(tag(_Seat, "tricks_won"))
_SEAT_SCORE_FIELD = FieldMemo(tag(_Seat, "score"), int_field)
_TRICK_LEADER_FIELD = tuple(uint_field(tag(_Trick, "leader"), seat) for seat in _SEATS)
_TRICK_CARD_FIELD_OF = dict(enumerate(message_fields(tag(_Trick, "cards"), _CARDS))).__getitem__
_TRICK_WINNER_FIELD = tuple(optional_uint_field(tag(_Trick, "winner"), seat) for seat in _SEATS)
_NO_CURRENT_TRICK = tuple(
    _CURRENT_TRICK_PREFIX[len(leader)] + leader for leader in _TRICK_LEADER_FIELD
)
"""``current_trick`` before its first card, by leader."""
_RESULT_HAND_SIZE_TAG = tag(_Result, "hand_size")
_RESULT_DEALER_TAG = tag(_Result, "dealer")
_RESULT_TRUMP_CARD_FIELD = message_fields(tag(_Result, "trump_card"), _CARDS)
_RESULT_BIDS_TAG = tag(_Result, "bids")
_RESULT_TRICKS_TAG = tag(_Result, "tricks")
_RESULT_POINTS_TAG = tag(_Result, "points")
_SEAT_ENTRY_LIMIT = 4096


def _trick(leader: int, cards: tuple[int, ...], winner: int | None) -> oh_hell_pb2.OhHellTrick:
    trick = oh_hell_pb2.OhHellTrick(leader=leader, cards=[_CARDS[c] for c in cards])
    if winner is not None:
        trick.winner = winner
    return trick


def _completed_trick_field(trick: _FinishedTrick) -> bytes:
    """One ``completed_tricks`` entry, tag included."""
    leader, cards, winner = trick
    payload = b"".join(
        [
            _TRICK_LEADER_FIELD[leader],
            *map(_TRICK_CARD_FIELD_OF, cards),
            _TRICK_WINNER_FIELD[winner],
        ]
    )
    return _COMPLETED_TRICKS_PREFIX[len(payload)] + payload


def _header(obs: OhHellObservation) -> bytes:
    """The fields from ``deal_style`` to ``trump_card``: fixed for a hand."""
    return b"".join(
        [
            length_delimited(_DEAL_STYLE_TAG, obs.deal_style.encode()) if obs.deal_style else b"",
            length_delimited(_SCORING_TAG, obs.scoring.encode()) if obs.scoring else b"",
            uint_field(_HAND_NUMBER_TAG, obs.hand_number),
            uint_field(_NUM_HANDS_TAG, obs.num_hands),
            uint_field(_HAND_SIZE_TAG, obs.hand_size),
            uint_field(_DEALER_TAG, obs.dealer),
            _TRUMP_CARD_FIELD[obs.trump_card],
        ]
    )


def _hand_result_field(hand: HandResult) -> bytes:
    """One ``previous_hands`` entry, tag included."""
    return length_delimited(
        _PREVIOUS_HANDS_TAG,
        b"".join(
            [
                uint_field(_RESULT_HAND_SIZE_TAG, hand.hand_size),
                uint_field(_RESULT_DEALER_TAG, hand.dealer),
                _RESULT_TRUMP_CARD_FIELD[hand.trump_card],
                packed_uints(_RESULT_BIDS_TAG, hand.bids),
                packed_uints(_RESULT_TRICKS_TAG, hand.tricks),
                packed_ints(_RESULT_POINTS_TAG, hand.points),
            ]
        ),
    )


def _seat_entry(key: tuple[int | None, int, int]) -> bytes:
    """One ``seats`` entry, tag included, by (bid, tricks won, score)."""
    bid, tricks_won, score = key
    payload = (
        (b"" if bid is None else _SEAT_BID_FIELD[bid])
        + _SEAT_TRICKS_WON_FIELD[tricks_won]
        + _SEAT_SCORE_FIELD[score]
    )
    return _SEATS_PREFIX[len(payload)] + payload


class OhHellCodec(GameCodec):
    """Oh Hell's views (``view.OhHellObservation``) and actions on the wire.

    ``observation_bytes`` writes an observation from five parts: the header fields (options,
    hand number, dealer, trump), the seat's hand, the seat summaries with the phase, the current
    trick, and the finished tricks with the previous hands. The hand and the current trick
    change at every decision and are written directly. The other three are kept from the last
    observation and rebuilt when the fields they come from change: the header is compared by
    value; the others by identity, as the view shares those tuples until a bid, a trick taken
    or a new hand changes them (equal new tuples only cost a rebuild).
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._header_key: tuple[object, ...] = ()
        self._header = b""
        self._bids: tuple[int | None, ...] = ()
        self._tricks_won: tuple[int, ...] = ()
        self._scores: tuple[int, ...] = ()
        self._bidding: bool | None = None
        self._seats_and_phase = b""
        self._seat_entries = Memo(_seat_entry, _SEAT_ENTRY_LIMIT)
        self._completed: tuple[_FinishedTrick, ...] = ()
        self._completed_bytes = b""
        self._previous: tuple[HandResult, ...] = ()
        self._previous_bytes = b""
        self._hand_results: IdentityCache[bytes] = IdentityCache()
        self._history = b""
        """``completed_tricks`` and ``previous_hands``, tags included."""

    def observation_bytes(self, observation: Any) -> bytes:
        (
            _,
            _,
            deal_style,
            scoring,
            hand_number,
            num_hands,
            hand_size,
            dealer,
            trump_card,
            hand,
            bids,
            tricks_won,
            trick_leader,
            current_trick,
            completed,
            scores,
            previous,
            bidding,
        ) = observation
        header_key = (deal_style, scoring, hand_number, num_hands, hand_size, dealer, trump_card)
        if header_key != self._header_key:
            self._header_key, self._header = header_key, _header(observation)
        if (
            bids is not self._bids
            or tricks_won is not self._tricks_won
            or scores is not self._scores
            or bidding is not self._bidding
        ):
            self._update_seats(bids, tricks_won, scores, bidding)
        if completed is not self._completed or previous is not self._previous:
            self._update_history(completed, previous)
        if current_trick:
            current = b"".join(
                [_TRICK_LEADER_FIELD[trick_leader], *map(_TRICK_CARD_FIELD_OF, current_trick)]
            )
            current = _CURRENT_TRICK_PREFIX[len(current)] + current
        else:
            current = _NO_CURRENT_TRICK[trick_leader]
        payload = b"".join(
            [
                self._header,
                *map(_HAND_FIELD_OF, hand),
                self._seats_and_phase,
                current,
                self._history,
            ]
        )
        return _OBSERVATION_PREFIX[len(payload)] + payload

    def _update_seats(
        self,
        bids: tuple[int | None, ...],
        tricks_won: tuple[int, ...],
        scores: tuple[int, ...],
        bidding: bool,
    ) -> None:
        self._bids, self._tricks_won, self._scores, self._bidding = (
            bids,
            tricks_won,
            scores,
            bidding,
        )
        entries = self._seat_entries
        seats = [entries[bids[s], tricks_won[s], scores[s]] for s in range(len(bids))]
        self._seats_and_phase = b"".join([*seats, _PHASE_FIELD[bidding]])

    def _update_history(
        self, completed: tuple[_FinishedTrick, ...], previous: tuple[HandResult, ...]
    ) -> None:
        if previous is not self._previous:
            cache = self._hand_results
            self._previous = previous
            self._previous_bytes = b"".join(
                [cache.get(hand) or cache.put(hand, _hand_result_field(hand)) for hand in previous]
            )
        if completed is not self._completed:
            last = self._completed
            count = len(last)
            if len(completed) == count + 1 and completed[:count] == last:  # one trick taken
                self._completed_bytes += _completed_trick_field(completed[count])
            else:
                self._completed_bytes = b"".join(map(_completed_trick_field, completed))
            self._completed = completed
        self._history = self._completed_bytes + self._previous_bytes

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: OhHellObservation = observation
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
            current_trick=_trick(obs.trick_leader, obs.current_trick, None),
            completed_tricks=[
                _trick(leader, cards, winner) for leader, cards, winner in obs.completed_tricks
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
