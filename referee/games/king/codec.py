"""King observations and actions on the wire."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, king_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.common import standard_card, standard_card_id
from referee.codec.wire import (
    BoundedCache,
    FieldMemo,
    Memo,
    SequenceCache,
    int_field,
    length_delimited,
    length_prefix,
    message_fields,
    optional_uint_field,
    tag,
    uint_field,
    varint,
)
from referee.games.king.view import (
    ACCEPT,
    MATCH_BASE,
    MAX_OFFER,
    NUM_CARDS,
    NUM_SEATS,
    NUM_TRICKS,
    OFFER_BASE,
    OPT_OUT,
    PASS,
    REFUSE,
    TRUMP_BASE,
    AuctionView,
    HandResult,
    KingObservation,
)

_CARDS = tuple(standard_card(card) for card in range(NUM_CARDS))
_ANSWERS = {
    ACCEPT: king_pb2.KING_ANSWER_ACCEPT,
    REFUSE: king_pb2.KING_ANSWER_REFUSE,
    OPT_OUT: king_pb2.KING_ANSWER_OPT_OUT,
}
_ANSWER_ACTIONS = {answer: action for action, answer in _ANSWERS.items()}

_Obs = king_pb2.KingObservation
_Seat = king_pb2.KingSeat
_Trick = king_pb2.KingTrick
_Auction = king_pb2.KingAuction
_OBSERVATION_TAG = tag(game_pb2.Observation, "king")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_CONTRACT_TAG = tag(_Obs, "contract")
_DEALER_TAG = tag(_Obs, "dealer")
_PHASE_TAG = tag(_Obs, "phase")
_TRUMP_TAG = tag(_Obs, "trump")
_HAND_FIELD_OF = dict(enumerate(message_fields(tag(_Obs, "hand"), _CARDS))).__getitem__
"""A ``hand`` entry by card id. A dict's bound ``__getitem__``, as ``map`` calls it faster than
a tuple's (a slot wrapper)."""
_SEATS_TAG = tag(_Obs, "seats")
_AUCTION_TAG = tag(_Obs, "auction")
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_CARDS_IN_HAND_TAG = tag(_Seat, "cards_in_hand")
_SEAT_TRICKS_WON = FieldMemo(tag(_Seat, "tricks_won"))
_SEAT_HAND_POINTS = FieldMemo(tag(_Seat, "hand_points"), int_field)
_SEAT_NEGATIVE_TOTAL = FieldMemo(tag(_Seat, "negative_total"), int_field)
_SEAT_POSITIVE_TOTAL = FieldMemo(tag(_Seat, "positive_total"), int_field)
_SEAT_BALANCE = FieldMemo(tag(_Seat, "balance"), int_field)
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_LEADER_FIELD = FieldMemo(_TRICK_LEADER_TAG)
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_CARD_FIELD_OF = dict(enumerate(_TRICK_CARD_FIELD)).__getitem__
_TRICK_WINNER_FIELD = FieldMemo(tag(_Trick, "winner"), optional_uint_field)
_COMPLETED_TRICK_PREFIX = FieldMemo(_COMPLETED_TRICKS_TAG, length_prefix)
"""A ``completed_tricks`` entry's tag and length by length."""
_AUCTION_CALLS_TAG = tag(_Auction, "calls")
_AUCTION_BEST_OFFER_TAG = tag(_Auction, "best_offer")
_AUCTION_BEST_BIDDER_TAG = tag(_Auction, "best_bidder")
_AUCTION_MINIMUM_OFFER_TAG = tag(_Auction, "minimum_offer")
_AUCTION_HIGHEST_OFFER_TAG = tag(_Auction, "highest_offer")
_AUCTION_ACCEPTED_TAG = tag(_Auction, "accepted")
_AUCTION_BUYER_TAG = tag(_Auction, "buyer")
_AUCTION_PRICE_TAG = tag(_Auction, "price")


def _suit(suit_index: int) -> cards_pb2.Suit.ValueType:
    """Wire suit of an engine suit index (``card // 13``); unspecified for -1."""
    return suit_index + 1 if suit_index >= 0 else cards_pb2.SUIT_UNSPECIFIED  # type: ignore[return-value]


def _bid(action: int) -> king_pb2.KingBid:
    if action == PASS:
        return king_pb2.KingBid(kind=king_pb2.KING_BID_KIND_PASS)
    if action > MATCH_BASE:
        return king_pb2.KingBid(kind=king_pb2.KING_BID_KIND_MATCH, tricks=action - MATCH_BASE)
    return king_pb2.KingBid(kind=king_pb2.KING_BID_KIND_OFFER, tricks=action - OFFER_BASE)


def _call(seat: int, action: int) -> king_pb2.KingAuctionCall:
    if action in _ANSWERS:
        return king_pb2.KingAuctionCall(seat=seat, answer=_ANSWERS[action])
    return king_pb2.KingAuctionCall(seat=seat, bid=_bid(action))


def _auction(view: AuctionView) -> king_pb2.KingAuction:
    message = king_pb2.KingAuction(
        calls=[_call(seat, action) for seat, action in view.calls if action < TRUMP_BASE],
        best_offer=view.best_offer,
        minimum_offer=view.minimum_offer,
        highest_offer=view.highest_offer,
        accepted=view.accepted,
        price=view.price,
    )
    if view.best_bidder >= 0:
        message.best_bidder = view.best_bidder
    if view.buyer >= 0:
        message.buyer = view.buyer
    return message


def _trick(leader: int, cards: tuple[int, ...], winner: int | None) -> king_pb2.KingTrick:
    trick = king_pb2.KingTrick(leader=leader, cards=[_CARDS[c] for c in cards])
    if winner is not None:
        trick.winner = winner
    return trick


def _hand_result(hand: HandResult) -> king_pb2.KingHandResult:
    message = king_pb2.KingHandResult(
        hand_number=hand.hand_number,
        contract=hand.contract,  # type: ignore[arg-type]
        dealer=hand.dealer,
        trump=_suit(hand.trump),
        price=hand.price,
        opted_out=hand.opted_out,
        tricks=hand.tricks,
        points=hand.points,
    )
    if hand.buyer >= 0:
        message.buyer = hand.buyer
    return message


_SeatParts = tuple[tuple[bytes, ...], bytes]


def _seat_parts(rest: tuple[int, ...]) -> _SeatParts:
    """A seat's ``seats`` entry for its (tricks, points, -total, +total), in two parts: its
    start (tag, length and ``cards_in_hand`` field) by cards in hand, and the fields after.

    Cards in hand change at every card, the rest only when a trick is taken: the codec keeps
    these per seat until then and writes an entry as ``heads[cards], after``.
    """
    tricks_won, hand_points, negative, positive = rest
    after = b"".join(
        [
            _SEAT_TRICKS_WON[tricks_won],
            _SEAT_HAND_POINTS[hand_points],
            _SEAT_NEGATIVE_TOTAL[negative],
            _SEAT_POSITIVE_TOTAL[positive],
            _SEAT_BALANCE[negative + positive],
        ]
    )
    return _seat_heads(len(after)), after


@lru_cache(maxsize=128)
def _seat_heads(after_length: int) -> tuple[bytes, ...]:
    """Starts of a ``seats`` entry by cards in hand (0..13), for fields after them this long."""
    fields = [uint_field(_SEAT_CARDS_IN_HAND_TAG, cards) for cards in range(NUM_TRICKS + 1)]
    return tuple(_SEATS_TAG + varint(len(field) + after_length) + field for field in fields)


def _call_field(call: tuple[int, int]) -> bytes:
    """One ``calls`` entry of the auction; naming trumps is not a call on the wire."""
    seat, action = call
    if action >= TRUMP_BASE:
        return b""
    return length_delimited(_AUCTION_CALLS_TAG, _call(seat, action).SerializeToString())


def _auction_field(view: AuctionView, calls: bytes) -> bytes:
    """The ``auction`` field (always set when there is one) around its calls' bytes."""
    best_bidder, buyer = view.best_bidder, view.buyer
    return length_delimited(
        _AUCTION_TAG,
        b"".join(
            [
                calls,
                uint_field(_AUCTION_BEST_OFFER_TAG, view.best_offer),
                optional_uint_field(_AUCTION_BEST_BIDDER_TAG, best_bidder)
                if best_bidder >= 0
                else b"",
                uint_field(_AUCTION_MINIMUM_OFFER_TAG, view.minimum_offer),
                uint_field(_AUCTION_HIGHEST_OFFER_TAG, view.highest_offer),
                uint_field(_AUCTION_ACCEPTED_TAG, int(view.accepted)),
                optional_uint_field(_AUCTION_BUYER_TAG, buyer) if buyer >= 0 else b"",
                uint_field(_AUCTION_PRICE_TAG, view.price),
            ]
        ),
    )


def _completed_trick_field(trick: tuple[int, tuple[int, ...], int]) -> bytes:
    leader, cards, winner = trick
    body = b"".join(
        [
            _TRICK_LEADER_FIELD[leader],
            *map(_TRICK_CARD_FIELD_OF, cards),
            _TRICK_WINNER_FIELD[winner],
        ]
    )
    return _COMPLETED_TRICK_PREFIX[len(body)] + body


def _header(obs: KingObservation) -> bytes:
    """The observation's fields up to ``trump``: they change a few times a hand."""
    return (
        uint_field(_HAND_NUMBER_TAG, obs.hand_number)
        + uint_field(_CONTRACT_TAG, obs.contract)
        + uint_field(_DEALER_TAG, obs.dealer)
        + uint_field(_PHASE_TAG, obs.phase)
        + uint_field(_TRUMP_TAG, _suit(obs.trump))
    )


def _hand_result_field(hand: HandResult) -> bytes:
    return length_delimited(_PREVIOUS_HANDS_TAG, _hand_result(hand).SerializeToString())


_OBSERVATION_PREFIX = FieldMemo(_OBSERVATION_TAG, length_prefix)
"""The ``Observation.king`` tag and length by payload length."""

_CARD_FIELD_LENGTH = len(_TRICK_CARD_FIELD[0])
if any(len(field) != _CARD_FIELD_LENGTH for field in _TRICK_CARD_FIELD):
    raise AssertionError("a card's suit and rank are never zero: every card field has one length")
_CURRENT_TRICK_HEADS = tuple(
    tuple(
        _CURRENT_TRICK_TAG
        + varint(len(_TRICK_LEADER_FIELD[leader]) + cards * _CARD_FIELD_LENGTH)
        + _TRICK_LEADER_FIELD[leader]
        for cards in range(NUM_SEATS + 1)
    )
    for leader in range(NUM_SEATS)
)
"""``current_trick``'s tag, length and leader field by leader and number of cards played: the
cards' fields follow."""


class KingCodec(GameCodec):
    """Codec for ``referee.games.king``.

    ``observation_bytes`` runs at every decision. The engine shares the tuples that change
    only per trick, per call or per hand between observations, so the codec keeps the bytes
    built from them and checks them by identity: the seat summaries (each split around
    ``cards_in_hand``, the only field that changes within a trick), the auction, and the
    finished tricks with the previous hands (both appended to as the match goes). The header
    fields are checked by value; the hand and the current trick are written directly.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._header_key: tuple[int, ...] = ()
        self._header = b""
        self._seat_key: tuple[tuple[int, ...], ...] = ((), (), (), ())
        self._seats: tuple[Any, ...] = ()
        self._seat_parts: BoundedCache[tuple[int, ...], _SeatParts] = BoundedCache(16)
        self._auction_key: AuctionView | None = None
        self._auction_field = b""
        self._calls = SequenceCache(Memo(_call_field, 1024))
        self._completed_key: tuple[tuple[int, tuple[int, ...], int], ...] | None = None
        self._previous_key: tuple[HandResult, ...] | None = None
        self._tail = b""
        self._completed = SequenceCache(Memo(_completed_trick_field, 1024))
        self._previous = SequenceCache(Memo(_hand_result_field, 1024))

    def observation_bytes(self, observation: Any) -> bytes:
        obs: KingObservation = observation
        (
            _,
            _,
            _,
            _,
            _,
            _,
            hand,
            cards_in_hand,
            tricks_won,
            hand_points,
            negative,
            positive,
            auction,
            trick_leader,
            current_trick,
            completed,
            previous,
        ) = obs
        header_key = obs[1:6]
        if header_key != self._header_key:
            self._header_key, self._header = header_key, _header(obs)
        seat_key = self._seat_key
        if (
            tricks_won is not seat_key[0]
            or hand_points is not seat_key[1]
            or negative is not seat_key[2]
            or positive is not seat_key[3]
        ):
            self._update_seats(tricks_won, hand_points, negative, positive)
        if auction is not self._auction_key:
            self._auction_key = auction
            self._auction_field = (
                b"" if auction is None else _auction_field(auction, self._calls(auction.calls))
            )
        heads0, after0, heads1, after1, heads2, after2, heads3, after3 = self._seats
        cards0, cards1, cards2, cards3 = cards_in_hand
        if completed is not self._completed_key or previous is not self._previous_key:
            self._completed_key, self._previous_key = completed, previous
            self._tail = self._completed(completed) + self._previous(previous)
        payload = b"".join(
            [
                self._header,
                *map(_HAND_FIELD_OF, hand),
                heads0[cards0],
                after0,
                heads1[cards1],
                after1,
                heads2[cards2],
                after2,
                heads3[cards3],
                after3,
                self._auction_field,
                _CURRENT_TRICK_HEADS[trick_leader][len(current_trick)],
                *map(_TRICK_CARD_FIELD_OF, current_trick),
                self._tail,
            ]
        )
        return _OBSERVATION_PREFIX[len(payload)] + payload

    def _update_seats(self, *block: tuple[int, ...]) -> None:
        """Every seat's entry parts, flat (King has four seats): a trick changes one or two
        seats' (tricks, points, -total, +total), so the others keep theirs."""
        self._seat_key = block
        cache = self._seat_parts
        seats: list[Any] = []
        for rest in zip(*block, strict=True):
            parts = cache.get(rest)
            seats += parts if parts is not None else cache.put(rest, _seat_parts(rest))
        self._seats = tuple(seats)

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: KingObservation = observation
        seats = [
            king_pb2.KingSeat(
                cards_in_hand=obs.cards_in_hand[seat],
                tricks_won=obs.tricks_won[seat],
                hand_points=obs.hand_points[seat],
                negative_total=obs.negative_totals[seat],
                positive_total=obs.positive_totals[seat],
                balance=obs.negative_totals[seat] + obs.positive_totals[seat],
            )
            for seat in range(len(obs.cards_in_hand))
        ]
        message = king_pb2.KingObservation(
            hand_number=obs.hand_number,
            contract=obs.contract,  # type: ignore[arg-type]
            dealer=obs.dealer,
            phase=obs.phase,  # type: ignore[arg-type]
            trump=_suit(obs.trump),
            hand=[_CARDS[c] for c in obs.hand],
            seats=seats,
            current_trick=_trick(obs.trick_leader, obs.current_trick, None),
            completed_tricks=[
                _trick(leader, cards, winner) for leader, cards, winner in obs.completed_tricks
            ],
            previous_hands=[_hand_result(hand) for hand in obs.previous_hands],
        )
        if obs.auction is not None:
            message.auction.CopyFrom(_auction(obs.auction))
        return game_pb2.Observation(king=message)

    def _encode_action(self, action: int) -> game_pb2.Action:
        if 0 <= action < NUM_CARDS:
            king = king_pb2.KingAction(play=_CARDS[action])
        elif action >= TRUMP_BASE:
            king = king_pb2.KingAction(trump=_suit(action - TRUMP_BASE))
        elif action in _ANSWERS:
            king = king_pb2.KingAction(answer=_ANSWERS[action])
        else:
            king = king_pb2.KingAction(bid=_bid(action))
        return game_pb2.Action(king=king)

    def decode_action(self, message: game_pb2.Action) -> int:
        if message.WhichOneof("game") != "king":
            raise MalformedActionError("expected a King action (Action.king)")
        action = message.king
        kind = action.WhichOneof("action")
        if kind == "play":
            return standard_card_id(action.play)
        if kind == "trump":
            if not cards_pb2.SUIT_CLUBS <= action.trump <= cards_pb2.SUIT_SPADES:
                raise MalformedActionError(f"not a suit: {action.trump}")
            return TRUMP_BASE + action.trump - 1
        if kind == "answer":
            if action.answer not in _ANSWER_ACTIONS:
                raise MalformedActionError(f"not a dealer's answer: {action.answer}")
            return _ANSWER_ACTIONS[action.answer]
        if kind == "bid":
            return _decode_bid(action.bid)
        raise MalformedActionError("a King action needs a card, a bid, an answer or a trump")


def _decode_bid(bid: king_pb2.KingBid) -> int:
    if bid.kind == king_pb2.KING_BID_KIND_PASS:
        return PASS
    if not 1 <= bid.tricks <= MAX_OFFER:
        raise MalformedActionError(f"an offer is 1 to {MAX_OFFER} tricks, not {bid.tricks}")
    if bid.kind == king_pb2.KING_BID_KIND_OFFER:
        return OFFER_BASE + bid.tricks
    if bid.kind == king_pb2.KING_BID_KIND_MATCH:
        return MATCH_BASE + bid.tricks
    raise MalformedActionError(f"not a kind of bid: {bid.kind}")
