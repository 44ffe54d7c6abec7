"""Klaberjass observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, klaberjass_pb2
from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.wire import (
    FieldMemo,
    Memo,
    SequenceCache,
    int_field,
    length_delimited,
    length_prefix,
    message_fields,
    optional_uint_field,
    suit_tables,
    tag,
    uint_field,
    varint,
)
from referee.games.cards import Rank, Suit
from referee.games.klaberjass.view import (
    ACCEPT,
    BELLA_BASE,
    BIDDING_OTHER_SUIT,
    BIDDING_TURN_UP,
    CARD_POINTS_IN_HAND,
    CARDS_PER_SUIT,
    DECK_SIZE,
    DECLARING,
    DIX,
    EXCHANGE,
    GAME_OVER,
    KEEP,
    NAME_BASE,
    NO_SEQUENCE,
    PASS,
    PLAYING,
    RANKS,
    SUIT_BITS,
    SUITS,
    TRICKS,
    HandResult,
    KlaberjassObservation,
    Run,
    SeatView,
    TableView,
    Trick,
    bid_trump,
    card_id,
    card_rank,
    card_suit,
    cards_of,
    suit_card,
    suit_of,
)

_CARDS = tuple(
    cards_pb2.Card(suit=card_suit(c), rank=card_rank(c))  # type: ignore[arg-type]
    for c in range(DECK_SIZE)
)
_PHASES = {
    BIDDING_TURN_UP: klaberjass_pb2.KLABERJASS_PHASE_BIDDING_TURN_UP,
    BIDDING_OTHER_SUIT: klaberjass_pb2.KLABERJASS_PHASE_BIDDING_OTHER_SUIT,
    DIX: klaberjass_pb2.KLABERJASS_PHASE_DIX,
    DECLARING: klaberjass_pb2.KLABERJASS_PHASE_DECLARING,
    PLAYING: klaberjass_pb2.KLABERJASS_PHASE_PLAYING,
    GAME_OVER: klaberjass_pb2.KLABERJASS_PHASE_GAME_OVER,
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


def _bid_trump(action: int, turn_up: int) -> cards_pb2.Suit.ValueType:
    """The suit a bid accepts or names (``SUIT_UNSPECIFIED`` for a pass)."""
    trump = bid_trump(action, turn_up)
    return _suit(trump) if trump >= 0 else cards_pb2.SUIT_UNSPECIFIED


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
_OBSERVATION_HEAD = FieldMemo(tag(game_pb2.Observation, "klaberjass"), length_prefix)
"""``[len(payload)]``: the tag and length before an observation's payload."""
_TARGET_SCORE = FieldMemo(tag(_Obs, "target_score"))
_HAND_NUMBER = FieldMemo(tag(_Obs, "hand_number"))
_DEALER_FIELD = (b"", uint_field(tag(_Obs, "dealer"), 1))
_PHASE_FIELD = {phase: uint_field(tag(_Obs, "phase"), value) for phase, value in _PHASES.items()}
_TURN_UP_FIELD = message_fields(tag(_Obs, "turn_up"), _CARDS)
_TRUMP_FIELD = {-1: b"", **{s: uint_field(tag(_Obs, "trump"), _suit(s)) for s in range(SUITS)}}
_MAKER_FIELD = (
    optional_uint_field(tag(_Obs, "maker"), 0),
    optional_uint_field(tag(_Obs, "maker"), 1),
)
_BID_FIELDS = tuple(
    tuple(
        tuple(
            tuple(
                length_delimited(
                    tag(_Obs, "bids"),
                    klaberjass_pb2.KlaberjassBid(
                        seat=seat,
                        round=round_,
                        trump=_bid_trump(action, suit_card(turn_up_suit, 0)),
                    ).SerializeToString(),
                )
                for action in range(PASS, NAME_BASE + SUITS)
            )
            for round_ in (1, 2)
        )
        for seat in (0, 1)
    )
    for turn_up_suit in range(SUITS)
)
"""``[turn-up's suit][seat][round - 1][action - PASS]``: one ``bids`` entry."""
_BOTTOM_CARD_FIELD = message_fields(tag(_Obs, "bottom_card"), _CARDS)
_DIX_EXCHANGED_BY_FIELD = {
    -1: b"",
    **{seat: optional_uint_field(tag(_Obs, "dix_exchanged_by"), seat) for seat in (0, 1)},
}
_HAND_SUITS = suit_tables(message_fields(tag(_Obs, "hand"), _CARDS), CARDS_PER_SUIT)
_DIAMONDS_SHIFT, _HEARTS_SHIFT, _SPADES_SHIFT = (suit_card(suit, 0) for suit in (1, 2, 3))
_HAND_CLUBS, _HAND_DIAMONDS, _HAND_HEARTS, _HAND_SPADES = _HAND_SUITS
_SEAT_HEAD = tuple(tag(_Obs, "seats") + varint(size) for size in range(256))
"""``[len(entry)]``: the tag and length before a seat entry (at most about 130 bytes: nine cards
shown and nine known)."""
_SEQUENCE_WINNER_FIELD = {
    -1: b"",
    **{seat: optional_uint_field(tag(_Obs, "sequence_winner"), seat) for seat in (0, 1)},
}
_CURRENT_TRICK_TAG = tag(_Obs, "current_trick")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_SCORE = FieldMemo(tag(_Seat, "score"), int_field)
_SEAT_HAND_SIZE = tuple(uint_field(tag(_Seat, "hand_size"), size) for size in range(DECK_SIZE))
_SEAT_TRICKS_WON = tuple(uint_field(tag(_Seat, "tricks_won"), won) for won in range(TRICKS + 1))
_SEAT_CARD_POINTS = tuple(
    uint_field(tag(_Seat, "card_points"), points) for points in range(CARD_POINTS_IN_HAND + 1)
)
"""``[points]``, for every total of card points a seat can take in a hand."""
_SEAT_DECLARED_LENGTH = tuple(
    uint_field(tag(_Seat, "declared_length"), length) for length in range(len(RANKS) + 1)
)
_SEAT_DECLARED_TOP_FIELD = (
    *(uint_field(tag(_Seat, "declared_top"), _rank(top)) for top in range(len(RANKS))),
    b"",
)
"""``[top]``, ``b""`` at -1 (no sequence)."""
_SEAT_SEQUENCE_POINTS = FieldMemo(tag(_Seat, "sequence_points"))
_SEAT_SHOWN_FIELD = message_fields(tag(_Seat, "shown_sequence_cards"), _CARDS)
_SEAT_BELLA_FIELD = (b"", uint_field(tag(_Seat, "bella"), 1))
_SEAT_KNOWN_FIELD = message_fields(tag(_Seat, "known_cards"), _CARDS)
_TRICK_LEADER_FIELD = FieldMemo(tag(_Trick, "leader"))
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")


def _trick_bytes(trick: Trick) -> bytes:
    """A serialized ``KlaberjassTrick`` (without its own tag); no winner while in play."""
    winner = trick.winner
    return b"".join(
        [
            _TRICK_LEADER_FIELD[trick.leader],
            *[_TRICK_CARD_FIELD[card] for card in trick.cards],
            optional_uint_field(_TRICK_WINNER_TAG, winner) if winner >= 0 else b"",
        ]
    )


_CURRENT_TRICK_FIELD: Memo[Trick, bytes] = Memo(
    lambda trick: length_delimited(_CURRENT_TRICK_TAG, _trick_bytes(trick))
)
"""The whole ``current_trick`` field (a message: always written) by trick: the view shares
one ``Trick`` per leader and card led, 66 in all."""
_COMPLETED_TRICK_FIELD: Memo[Trick, bytes] = Memo(
    lambda trick: length_delimited(_COMPLETED_TRICKS_TAG, _trick_bytes(trick)), limit=8192
)
"""A ``completed_tricks`` entry by trick: the view shares one ``Trick`` per finished trick
(4,000 at most)."""


def _hand_result_field(hand: HandResult) -> bytes:
    return length_delimited(_PREVIOUS_HANDS_TAG, _hand_result(hand).SerializeToString())


_Bids = tuple[tuple[int, int], ...]
"""A hand's bids: (seat, action) each."""


def _bids_fields(entries: tuple[tuple[tuple[bytes, ...], ...], ...]) -> Memo[_Bids, bytes]:
    """The ``bids`` entries of a hand's bids, for one suit of the turn-up (``entries``:
    ``_BID_FIELDS`` of the suit), by bidding sequence (a few dozen per suit)."""
    return Memo(
        lambda bids: b"".join(
            [
                entries[seat][index // 2][action - PASS]  # two bids a round
                for index, (seat, action) in enumerate(bids)
            ]
        ),
        limit=1024,
    )


_BIDS_FIELDS = tuple(_bids_fields(entries) for entries in _BID_FIELDS)
"""``[turn-up's suit][bids]``"""


def _header(table: TableView) -> bytes:
    """The fields from ``target_score`` to ``dix_exchanged_by``."""
    trump, bottom = table.trump, table.bottom_card
    return b"".join(
        (
            _TARGET_SCORE[table.target_score],
            _HAND_NUMBER[table.hand_number],
            _DEALER_FIELD[table.dealer],
            _PHASE_FIELD[table.phase],
            _TURN_UP_FIELD[table.turn_up],
            _TRUMP_FIELD[trump],
            _MAKER_FIELD[table.maker] if trump >= 0 else b"",
            _BIDS_FIELDS[suit_of(table.turn_up)][table.bids],
            _BOTTOM_CARD_FIELD[bottom] if bottom >= 0 else b"",
            _DIX_EXCHANGED_BY_FIELD[table.dix_exchanged_by],
        )
    )


def _seat_parts(view: SeatView) -> tuple[SeatView, bytes, bytes]:
    """``view`` with a seat entry's fields before ``hand_size`` and after ``card_points``."""
    tail = (
        _SEAT_DECLARED_LENGTH[view.declared_length]
        + _SEAT_DECLARED_TOP_FIELD[view.declared_top]
        + _SEAT_SEQUENCE_POINTS[view.sequence_points]
    )
    if view.shown_sequences:
        tail += b"".join(map(_SEAT_SHOWN_FIELD.__getitem__, view.shown_sequences))
    tail += _SEAT_BELLA_FIELD[view.bella]
    if view.known_cards:
        tail += b"".join(map(_SEAT_KNOWN_FIELD.__getitem__, view.known_cards))
    return view, _SEAT_SCORE[view.score], tail


_NO_SEAT_PARTS = _seat_parts(SeatView(0, 0, -1, 0, (), False, ()))
"""The parts of no view's seat (views are compared by identity): what a codec starts
from."""


class KlaberjassCodec(GameCodec):
    """Codec for ``referee.games.klaberjass``.

    ``observation_bytes`` encodes the view's shared table once per table (the view makes a
    new one only when something public changes but a card led or a trick) in ``_table_parts``,
    and its tricks won, card points and finished tricks once per trick (the view shares them
    until the next trick is over) in ``_trick_parts``. Per decision it adds the hand (a table
    per suit's cards), the two seat entries from those parts and the hand sizes, and the
    current trick (one per trick object).
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._parts: tuple[Any, ...] = (None,) * 4
        """``_shared_parts`` of the last table, tricks won, card points and finished tricks (the
        first four)."""
        self._table_bytes: tuple[Any, ...] = (None,)
        """``_table_parts`` of the last table (first)."""
        self._seats = (_NO_SEAT_PARTS, _NO_SEAT_PARTS)
        """``_seat_parts`` of each seat's last view."""
        self._finished: tuple[tuple[Trick, ...], bytes] = ((), b"")
        """The last finished tricks and their entries."""
        self._previous = SequenceCache(Memo(_hand_result_field, 1024))

    def observation_bytes(self, observation: Any) -> bytes:
        obs: KlaberjassObservation = observation
        table, won, points, completed = (
            obs.table,
            obs.tricks_won,
            obs.card_points,
            obs.completed_tricks,
        )
        parts = self._parts
        if (
            parts[0] is not table
            or parts[1] is not won
            or parts[2] is not points
            or parts[3] is not completed
        ):
            parts = self._parts = self._shared_parts(table, won, points, completed)
        _, _, _, _, header, heads0, after0, heads1, after1, finished = parts
        hand = obs.hand
        size0, size1 = obs.hand_sizes
        payload = b"".join(
            (
                header,
                _HAND_CLUBS[hand & SUIT_BITS],
                _HAND_DIAMONDS[hand >> _DIAMONDS_SHIFT & SUIT_BITS],
                _HAND_HEARTS[hand >> _HEARTS_SHIFT & SUIT_BITS],
                _HAND_SPADES[hand >> _SPADES_SHIFT],
                heads0[size0 > 0],  # a seat entry's tag, length and score
                _SEAT_HAND_SIZE[size0],
                after0,
                heads1[size1 > 0],
                _SEAT_HAND_SIZE[size1],
                after1,  # and sequence_winner
                _CURRENT_TRICK_FIELD[obs.current_trick],
                finished,
            )
        )
        return _OBSERVATION_HEAD[len(payload)] + payload

    def _shared_parts(
        self,
        table: TableView,
        won: tuple[int, int],
        points: tuple[int, int],
        completed: tuple[Trick, ...],
    ) -> tuple[Any, ...]:
        """What a table and the tricks add to every observation that shares them, in the order
        written after those four: the fields up to ``dix_exchanged_by``; each seat entry's
        start (tag, length and score) by whether its hand size is written (not at 0), and its
        fields after the hand size (``sequence_winner`` after the last); the finished tricks
        and previous hands."""
        table_bytes = self._table_bytes
        if table_bytes[0] is not table:
            table_bytes = self._table_bytes = self._table_parts(table)
        _, header, (_, score0, tail0), (_, score1, tail1), sequence_winner, previous = table_bytes
        after0 = _SEAT_TRICKS_WON[won[0]] + _SEAT_CARD_POINTS[points[0]] + tail0
        after1 = _SEAT_TRICKS_WON[won[1]] + _SEAT_CARD_POINTS[points[1]] + tail1
        length0 = len(score0) + len(after0)
        length1 = len(score1) + len(after1)
        last, finished = self._finished
        if completed is not last:
            count = len(last)
            if len(completed) == count + 1 and completed[:count] == last:  # one more trick
                finished += _COMPLETED_TRICK_FIELD[completed[count]]
            else:
                finished = b"".join(map(_COMPLETED_TRICK_FIELD.__getitem__, completed))
            self._finished = (completed, finished)
        return (
            table,
            won,
            points,
            completed,
            header,
            (_SEAT_HEAD[length0] + score0, _SEAT_HEAD[length0 + 2] + score0),
            after0,
            (_SEAT_HEAD[length1] + score1, _SEAT_HEAD[length1 + 2] + score1),
            after1 + sequence_winner,
            finished + previous,
        )

    def _table_parts(self, table: TableView) -> tuple[Any, ...]:
        """What ``table`` adds to every observation that shares it, in the order written:
        (table, fields up to ``dix_exchanged_by``, each seat's ``_seat_parts``,
        ``sequence_winner``, previous hands)."""
        view0, view1 = table.seats
        seat0, seat1 = self._seats
        if seat0[0] is not view0:
            seat0 = _seat_parts(view0)
        if seat1[0] is not view1:
            seat1 = _seat_parts(view1)
        self._seats = (seat0, seat1)
        return (
            table,
            _header(table),
            seat0,
            seat1,
            _SEQUENCE_WINNER_FIELD[table.sequence_winner],
            self._previous(table.previous_hands),
        )

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: KlaberjassObservation = observation
        table = obs.table
        seats = []
        for view, hand_size, won, points in zip(
            table.seats, obs.hand_sizes, obs.tricks_won, obs.card_points, strict=True
        ):
            seat = klaberjass_pb2.KlaberjassSeat(
                score=view.score,
                hand_size=hand_size,
                tricks_won=won,
                card_points=points,
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
            target_score=table.target_score,
            hand_number=table.hand_number,
            dealer=table.dealer,
            phase=_PHASES[table.phase],
            turn_up=_CARDS[table.turn_up],
            bids=[
                klaberjass_pb2.KlaberjassBid(
                    seat=seat,
                    round=1 if index < 2 else 2,
                    trump=_bid_trump(action, table.turn_up),
                )
                for index, (seat, action) in enumerate(table.bids)
            ],
            hand=[_CARDS[c] for c in cards_of(obs.hand)],
            seats=seats,
            current_trick=_trick(obs.current_trick),
            completed_tricks=[_trick(t) for t in obs.completed_tricks],
            previous_hands=[_hand_result(h) for h in table.previous_hands],
        )
        if table.trump >= 0:
            message.trump = _suit(table.trump)
            message.maker = table.maker
        if table.bottom_card >= 0:
            message.bottom_card.CopyFrom(_CARDS[table.bottom_card])
        if table.dix_exchanged_by >= 0:
            message.dix_exchanged_by = table.dix_exchanged_by
        if table.sequence_winner >= 0:
            message.sequence_winner = table.sequence_winner
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
        elif NAME_BASE <= action < NAME_BASE + SUITS:
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
