"""King observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, king_pb2
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
    optional_uint_field,
    tag,
    uint_field,
    varint,
)
from referee.games.king.rules import (
    ACCEPT,
    MATCH_BASE,
    MAX_OFFER,
    OFFER_BASE,
    OPT_OUT,
    PASS,
    REFUSE,
    TRUMP_BASE,
    AuctionView,
    HandResult,
    KingObservation,
)

_CARDS = tuple(standard_card(card) for card in range(52))
_ANSWERS = {
    ACCEPT: king_pb2.KING_ANSWER_ACCEPT,
    REFUSE: king_pb2.KING_ANSWER_REFUSE,
    OPT_OUT: king_pb2.KING_ANSWER_OPT_OUT,
}
_ANSWER_ACTIONS = {answer: action for action, answer in _ANSWERS.items()}

_Obs = king_pb2.KingObservation
_Seat = king_pb2.KingSeat
_Trick = king_pb2.KingTrick
_OBSERVATION_TAG = tag(game_pb2.Observation, "king")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_CONTRACT_TAG = tag(_Obs, "contract")
_DEALER_TAG = tag(_Obs, "dealer")
_PHASE_TAG = tag(_Obs, "phase")
_TRUMP_TAG = tag(_Obs, "trump")
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_SEATS_TAG = tag(_Obs, "seats")
_AUCTION_TAG = tag(_Obs, "auction")
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_CARDS_IN_HAND = FieldMemo(tag(_Seat, "cards_in_hand"))
_SEAT_TRICKS_WON = FieldMemo(tag(_Seat, "tricks_won"))
_SEAT_HAND_POINTS = FieldMemo(tag(_Seat, "hand_points"), int_field)
_SEAT_NEGATIVE_TOTAL = FieldMemo(tag(_Seat, "negative_total"), int_field)
_SEAT_POSITIVE_TOTAL = FieldMemo(tag(_Seat, "positive_total"), int_field)
_SEAT_BALANCE = FieldMemo(tag(_Seat, "balance"), int_field)
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_LEADER_FIELD = FieldMemo(_TRICK_LEADER_TAG)
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")


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


def _seat_memo(rest: tuple[int, ...]) -> EntryMemo:
    """A seat's ``seats`` entries by cards in hand, for its (tricks, points, -total, +total).

    Within a trick only the cards in hand change, so the codec keeps one memo per seat until
    a trick is taken.
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
    return EntryMemo(_SEATS_TAG, b"", _SEAT_CARDS_IN_HAND, after)


def _completed_trick_field(trick: tuple[int, tuple[int, ...], int]) -> bytes:
    leader, cards, winner = trick
    return length_delimited(
        _COMPLETED_TRICKS_TAG,
        b"".join(
            [
                uint_field(_TRICK_LEADER_TAG, leader),
                *map(_TRICK_CARD_FIELD.__getitem__, cards),
                optional_uint_field(_TRICK_WINNER_TAG, winner),
            ]
        ),
    )


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


class KingCodec(GameCodec):
    """Codec for ``referee.games.king``.

    ``observation_bytes`` writes the observation from parts cached for this match: the hand's
    header fields, each seat summary (a memo per seat by cards in hand while the trick-level
    fields are unchanged), the auction, the finished tricks and the previous hands (both
    appended to as the match goes); the hand and the current trick are written directly.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._headers: BoundedCache[tuple[object, ...], bytes] = BoundedCache(256)
        self._seat_block: tuple[tuple[int, ...], ...] = ()
        self._seat_memos: list[EntryMemo] = []
        self._seat_memos_by_rest: BoundedCache[tuple[int, ...], EntryMemo] = BoundedCache(16)
        self._auctions: BoundedCache[AuctionView, bytes] = BoundedCache(256)
        self._completed = SequenceCache(_completed_trick_field)
        self._previous = SequenceCache(_hand_result_field)

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
            _,
            _,
            _,
            _,
            auction,
            trick_leader,
            current_trick,
            completed,
            previous,
        ) = obs
        header_key = obs[1:6]
        header = self._headers.get(header_key) or self._headers.put(header_key, _header(obs))
        block = obs[8:12]  # tricks won, hand points, totals: they change when a trick ends
        if block != self._seat_block:  # tuples shared by the engine compare by identity first
            self._seat_block = block
            memos = self._seat_memos_by_rest  # a trick changes one or two seats' rest
            self._seat_memos = [
                memo if (memo := memos.get(rest)) is not None else memos.put(rest, _seat_memo(rest))
                for rest in zip(*block, strict=False)  # equal lengths
            ]
        if auction is None:
            auction_field = b""
        else:
            auction_field = self._auctions.get(auction) or self._auctions.put(
                auction, length_delimited(_AUCTION_TAG, _auction(auction).SerializeToString())
            )
        current = b"".join(
            [_TRICK_LEADER_FIELD[trick_leader], *map(_TRICK_CARD_FIELD.__getitem__, current_trick)]
        )
        payload = b"".join(
            [
                header,
                *map(_HAND_FIELD.__getitem__, hand),
                *map(EntryMemo.__getitem__, self._seat_memos, cards_in_hand),
                auction_field,
                _CURRENT_TRICK_TAG,
                varint(len(current)),
                current,
                self._completed(completed),
                self._previous(previous),
            ]
        )
        return length_delimited(_OBSERVATION_TAG, payload)

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
        if 0 <= action < 52:
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
