"""Oh Hell observations and actions on the wire."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, oh_hell_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.codec.wire import (
    BoundedCache,
    FieldMemo,
    IdentityCache,
    LastValue,
    SequenceCache,
    int_field,
    length_delimited,
    message_fields,
    optional_uint_field,
    packed_ints,
    packed_uints,
    tag,
    uint_field,
    varint,
)
from referee.games.oh_hell.rules import BID_BASE, HandResult, OhHellObservation, trick_winner

_PHASE_BIDDING = oh_hell_pb2.OH_HELL_PHASE_BIDDING
_PHASE_PLAYING = oh_hell_pb2.OH_HELL_PHASE_PLAYING
_CARDS = tuple(standard_card(card) for card in range(52))


_Obs = oh_hell_pb2.OhHellObservation
_Seat = oh_hell_pb2.OhHellSeat
_Trick = oh_hell_pb2.OhHellTrick
_Result = oh_hell_pb2.OhHellHandResult
_OBSERVATION_TAG = tag(game_pb2.Observation, "oh_hell")
_DEAL_STYLE_TAG = tag(_Obs, "deal_style")
_SCORING_TAG = tag(_Obs, "scoring")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_NUM_HANDS_TAG = tag(_Obs, "num_hands")
_HAND_SIZE_TAG = tag(_Obs, "hand_size")
_DEALER_TAG = tag(_Obs, "dealer")
_TRUMP_CARD_FIELD = message_fields(tag(_Obs, "trump_card"), _CARDS)
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_SEATS_TAG = tag(_Obs, "seats")
_PHASE_FIELD = {
    True: uint_field(tag(_Obs, "phase"), _PHASE_BIDDING),
    False: uint_field(tag(_Obs, "phase"), _PHASE_PLAYING),
}
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_BID_TAG = tag(_Seat, "bid")
_SEAT_TRICKS_WON_TAG = tag(_Seat, "tricks_won")
_SEAT_SCORE_TAG = tag(_Seat, "score")
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_LEADER_FIELD = FieldMemo(_TRICK_LEADER_TAG)
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")
_RESULT_HAND_SIZE_TAG = tag(_Result, "hand_size")
_RESULT_DEALER_TAG = tag(_Result, "dealer")
_RESULT_TRUMP_CARD_FIELD = message_fields(tag(_Result, "trump_card"), _CARDS)
_RESULT_BIDS_TAG = tag(_Result, "bids")
_RESULT_TRICKS_TAG = tag(_Result, "tricks")
_RESULT_POINTS_TAG = tag(_Result, "points")


def _trick(
    leader: int, cards: tuple[int, ...], num_seats: int, trump_suit: int, complete: bool
) -> oh_hell_pb2.OhHellTrick:
    trick = oh_hell_pb2.OhHellTrick(leader=leader, cards=[_CARDS[c] for c in cards])
    if complete:
        trick.winner = (leader + trick_winner(cards, trump_suit)) % num_seats
    return trick


def _trick_bytes(leader: int, cards: tuple[int, ...], winner: int | None) -> bytes:
    """A serialized ``OhHellTrick`` (without its own tag)."""
    return b"".join(
        [
            uint_field(_TRICK_LEADER_TAG, leader),
            *[_TRICK_CARD_FIELD[c] for c in cards],
            b"" if winner is None else optional_uint_field(_TRICK_WINNER_TAG, winner),
        ]
    )


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


def _seat_field(bid: int | None, tricks_won: int, score: int) -> bytes:
    """One ``seats`` entry, tag included."""
    return length_delimited(
        _SEATS_TAG,
        (b"" if bid is None else optional_uint_field(_SEAT_BID_TAG, bid))
        + uint_field(_SEAT_TRICKS_WON_TAG, tricks_won)
        + int_field(_SEAT_SCORE_TAG, score),
    )


class OhHellCodec(GameCodec):
    """Codec for ``referee.games.oh_hell``.

    ``observation_bytes`` writes the observation from parts cached for this match: the hand's
    header fields (options, hand number, dealer, trump), the seat summaries (checked first by
    identity: the engine shares them until a trick is taken), the finished tricks (appended to,
    one cache per trump suit) and the previous hands; the hand and the current trick, new at
    every decision, are written directly.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._headers: BoundedCache[tuple[object, ...], bytes] = BoundedCache(64)
        self._seats: BoundedCache[tuple[tuple[int | None, ...], ...], bytes] = BoundedCache()
        self._last_seats = LastValue()
        self._seat_entries: BoundedCache[tuple[int | None, int, int], bytes] = BoundedCache()
        self._completed = tuple(
            SequenceCache(self._completed_trick(trump_suit)) for trump_suit in range(4)
        )
        """Finished tricks by trump suit: the suit decides each trick's winner."""
        self._hand_results: IdentityCache[bytes] = IdentityCache()
        self._last_previous = LastValue()

    def observation_bytes(self, observation: Any) -> bytes:
        obs: OhHellObservation = observation
        (
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
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
        ) = obs
        header_key = obs[2:9]  # deal style .. trump card: fixed for a hand
        header = self._headers.get(header_key) or self._headers.put(header_key, _header(obs))
        seats_key = (bids, tricks_won, scores)
        last = self._last_seats  # the engine shares these tuples until a trick is taken
        if seats_key != last.key:
            seats = self._seats.get(seats_key)
            if seats is None:
                seats = self._seats.put(
                    seats_key, b"".join(map(self._seat, bids, tricks_won, scores))
                )
            last.key, last.value = seats_key, seats
        current = b"".join(
            [_TRICK_LEADER_FIELD[trick_leader], *map(_TRICK_CARD_FIELD.__getitem__, current_trick)]
        )
        last_previous = self._last_previous
        if previous != last_previous.key:
            last_previous.key, last_previous.value = previous, self._previous_bytes(previous)
        payload = b"".join(
            [
                header,
                *map(_HAND_FIELD.__getitem__, hand),
                last.value,
                _PHASE_FIELD[bidding],
                _CURRENT_TRICK_TAG,
                varint(len(current)),
                current,
                self._completed[trump_card // 13](completed),
                last_previous.value,
            ]
        )
        return length_delimited(_OBSERVATION_TAG, payload)

    def _completed_trick(self, trump_suit: int) -> Callable[[tuple[int, tuple[int, ...]]], bytes]:
        """Encodes one finished trick (tag included); ``trump_suit`` decides its winner."""
        num_seats = self.game.num_seats

        def encode(trick: tuple[int, tuple[int, ...]]) -> bytes:
            leader, cards = trick
            winner = (leader + trick_winner(cards, trump_suit)) % num_seats
            return length_delimited(_COMPLETED_TRICKS_TAG, _trick_bytes(leader, cards, winner))

        return encode

    def _seat(self, bid: int | None, tricks_won: int, score: int) -> bytes:
        key = (bid, tricks_won, score)
        encoded = self._seat_entries.get(key)
        if encoded is None:
            encoded = self._seat_entries.put(key, _seat_field(bid, tricks_won, score))
        return encoded

    def _previous_bytes(self, hands: tuple[HandResult, ...]) -> bytes:
        cache = self._hand_results
        return b"".join(
            [cache.get(hand) or cache.put(hand, _hand_result_field(hand)) for hand in hands]
        )

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
