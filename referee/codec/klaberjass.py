"""Klaberjass observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, klaberjass_pb2
from referee.codec.base import GameCodec, MalformedActionError
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
    SeatView,
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


_Obs = klaberjass_pb2.KlaberjassObservation
_Seat = klaberjass_pb2.KlaberjassSeat
_Trick = klaberjass_pb2.KlaberjassTrick
_OBSERVATION_TAG = tag(game_pb2.Observation, "klaberjass")
_TARGET_SCORE_TAG = tag(_Obs, "target_score")
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_DEALER_TAG = tag(_Obs, "dealer")
_PHASE_TAG = tag(_Obs, "phase")
_TURN_UP_FIELD = message_fields(tag(_Obs, "turn_up"), _CARDS)
_TRUMP_TAG = tag(_Obs, "trump")
_MAKER_TAG = tag(_Obs, "maker")
_BIDS_TAG = tag(_Obs, "bids")
_BOTTOM_CARD_FIELD = message_fields(tag(_Obs, "bottom_card"), _CARDS)
_DIX_EXCHANGED_BY_FIELD = {
    -1: b"",
    **{seat: optional_uint_field(tag(_Obs, "dix_exchanged_by"), seat) for seat in (0, 1)},
}
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_SEATS_TAG = tag(_Obs, "seats")
_SEQUENCE_WINNER_FIELD = {
    -1: b"",
    **{seat: optional_uint_field(tag(_Obs, "sequence_winner"), seat) for seat in (0, 1)},
}
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_DECLARED_TOP_FIELD = tuple(
    uint_field(tag(_Seat, "declared_top"), _rank(top)) for top in range(len(RANKS))
)
_SEAT_SHOWN_FIELD = message_fields(tag(_Seat, "shown_sequence_cards"), _CARDS)
_SEAT_BELLA_FIELD = FieldMemo(tag(_Seat, "bella"))
_SEAT_KNOWN_FIELD = message_fields(tag(_Seat, "known_cards"), _CARDS)
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_LEADER_FIELD = FieldMemo(_TRICK_LEADER_TAG)
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")


_SEAT_SCORE = FieldMemo(tag(_Seat, "score"), int_field)
_SEAT_HAND_SIZE = FieldMemo(tag(_Seat, "hand_size"))
_SEAT_TRICKS_WON = FieldMemo(tag(_Seat, "tricks_won"))
_SEAT_CARD_POINTS = FieldMemo(tag(_Seat, "card_points"))
_SEAT_DECLARED_LENGTH = FieldMemo(tag(_Seat, "declared_length"))
_SEAT_SEQUENCE_POINTS = FieldMemo(tag(_Seat, "sequence_points"))


def _seat_memo(view: SeatView) -> EntryMemo:
    """A seat's ``seats`` entries by hand size, for the rest of ``view``.

    Every card changes a hand size; the rest changes at most once a trick, and only for one
    seat: the codec keeps a memo per seat's rest.
    """
    score, _, tricks, points, length, top, sequence_points, shown, bella, known = view
    after = b"".join(
        [
            _SEAT_TRICKS_WON[tricks],
            _SEAT_CARD_POINTS[points],
            _SEAT_DECLARED_LENGTH[length],
            _SEAT_DECLARED_TOP_FIELD[top] if top >= 0 else b"",
            _SEAT_SEQUENCE_POINTS[sequence_points],
            *map(_SEAT_SHOWN_FIELD.__getitem__, shown),
            _SEAT_BELLA_FIELD[bella],
            *map(_SEAT_KNOWN_FIELD.__getitem__, known),
        ]
    )
    return EntryMemo(_SEATS_TAG, _SEAT_SCORE[score], _SEAT_HAND_SIZE, after)


def _trick_bytes(leader: int, cards: tuple[int, ...], winner: int) -> bytes:
    """A serialized ``KlaberjassTrick`` (without its own tag); ``winner`` -1 while in play."""
    return b"".join(
        [
            uint_field(_TRICK_LEADER_TAG, leader),
            *map(_TRICK_CARD_FIELD.__getitem__, cards),
            optional_uint_field(_TRICK_WINNER_TAG, winner) if winner >= 0 else b"",
        ]
    )


def _header(obs: KlaberjassObservation) -> bytes:
    """The observation's fields that change at most a few times a hand, up to ``maker``."""
    return b"".join(
        [
            uint_field(_TARGET_SCORE_TAG, obs.target_score),
            uint_field(_HAND_NUMBER_TAG, obs.hand_number),
            uint_field(_DEALER_TAG, obs.dealer),
            uint_field(_PHASE_TAG, _PHASES[obs.phase]),
            _TURN_UP_FIELD[obs.turn_up],
            uint_field(_TRUMP_TAG, _suit(obs.trump)) if obs.trump >= 0 else b"",
            optional_uint_field(_MAKER_TAG, obs.maker) if obs.trump >= 0 else b"",
        ]
    )


def _bid_fields(turn_up: int, bids: tuple[tuple[int, int], ...]) -> bytes:
    """The ``bids`` entries, tags included."""
    return b"".join(
        [
            length_delimited(
                _BIDS_TAG,
                klaberjass_pb2.KlaberjassBid(
                    seat=seat,
                    round=1 if index < 2 else 2,
                    trump=_bid_trump(action, turn_up),
                ).SerializeToString(),
            )
            for index, (seat, action) in enumerate(bids)
        ]
    )


def _completed_trick_field(key: Trick) -> bytes:
    return length_delimited(_COMPLETED_TRICKS_TAG, _trick_bytes(*key))


def _hand_result_field(hand: HandResult) -> bytes:
    return length_delimited(_PREVIOUS_HANDS_TAG, _hand_result(hand).SerializeToString())


class KlaberjassCodec(GameCodec):
    """Codec for ``referee.games.klaberjass``.

    ``observation_bytes`` writes the observation from parts cached for this match: the hand's
    header fields, the bids, each seat summary (a memo per seat state but the hand size), the
    finished tricks and the previous hands (both appended to as the match goes); the rest is
    written directly in field order.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._headers: BoundedCache[tuple[int, ...], bytes] = BoundedCache(256)
        self._bids: BoundedCache[tuple[object, ...], bytes] = BoundedCache(256)
        self._seat_memos: BoundedCache[tuple[object, ...], EntryMemo] = BoundedCache(16)
        self._completed = SequenceCache(_completed_trick_field)
        self._previous = SequenceCache(_hand_result_field)

    def observation_bytes(self, observation: Any) -> bytes:
        obs: KlaberjassObservation = observation
        (
            _,
            _,
            _,
            _,
            _,
            turn_up,
            _,
            _,
            bids,
            bottom_card,
            dix_exchanged_by,
            hand,
            (seat_0, seat_1),
            sequence_winner,
            _,
            (leader, trick_cards, _),
            completed,
            previous,
        ) = obs
        header_key = obs[1:8]
        header = self._headers.get(header_key) or self._headers.put(header_key, _header(obs))
        if bids:
            bids_key = (turn_up, bids)
            bid_bytes = self._bids.get(bids_key) or self._bids.put(
                bids_key, _bid_fields(turn_up, bids)
            )
        else:
            bid_bytes = b""
        current = b"".join(
            [_TRICK_LEADER_FIELD[leader], *map(_TRICK_CARD_FIELD.__getitem__, trick_cards)]
        )
        payload = b"".join(
            [
                header,
                bid_bytes,
                _BOTTOM_CARD_FIELD[bottom_card] if bottom_card >= 0 else b"",
                _DIX_EXCHANGED_BY_FIELD[dix_exchanged_by],
                *map(_HAND_FIELD.__getitem__, hand),
                self._seat(seat_0),
                self._seat(seat_1),
                _SEQUENCE_WINNER_FIELD[sequence_winner],
                _CURRENT_TRICK_TAG,
                varint(len(current)),
                current,
                self._completed(completed),
                self._previous(previous),
            ]
        )
        return length_delimited(_OBSERVATION_TAG, payload)

    def _seat(self, view: SeatView) -> bytes:
        """A seat entry, tag included, from the memo of its fields but the hand size."""
        rest = view[:1] + view[2:]
        memo = self._seat_memos.get(rest)
        if memo is None:
            memo = self._seat_memos.put(rest, _seat_memo(view))
        return memo[view[1]]

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
