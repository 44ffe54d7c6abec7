"""Pinochle observations and actions on the wire.

Engine card ids (``12 * suit + 2 * rank + copy``, see ``referee.games.pinochle.view``) become
``Card(suit, rank, copy)``. A meld action is sent as its cards alone, because the engine's meld
ids do not depend on trump (so encoded actions can be cached); the observation's
``meld_options`` gives each offered meld's type and points in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, pinochle_pb2
from referee.codec.base import GameCodec, MalformedActionError, legal_action_field
from referee.codec.wire import (
    HEADS_LIMIT,
    FieldMemo,
    IdentityCache,
    Memo,
    SequenceCache,
    int_field,
    length_delimited,
    length_heads,
    length_prefix,
    message_fields,
    optional_uint_field,
    suit_tables,
    tag,
    uint_field,
)
from referee.games.pinochle.view import (
    CARD_POINTS,
    DECLARE_OUT,
    DIX_BASE,
    DRAW,
    MELD_BASE,
    MELDS,
    NUM_CARDS,
    PHASE_OVER,
    RANKS,
    SUIT_BITS,
    TRICKS_PER_HAND,
    HandResult,
    Meld,
    PinochleObservation,
    SeatView,
    TableView,
    Trick,
    card_id,
    card_rank,
    card_suit,
    cards_of,
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


def _suit_fields(field_tag: bytes) -> tuple[tuple[bytes, ...], ...]:
    """A repeated card field's ``suit_tables`` (cards in id order, as ``cards_of``)."""
    return suit_tables(message_fields(field_tag, _CARDS), 12)


def _mask_fields(suits: tuple[tuple[bytes, ...], ...], mask: int) -> bytes:
    """The cards of ``mask`` as repeated fields (``suits`` from ``_suit_fields``)."""
    return (
        suits[0][mask & SUIT_BITS]
        + suits[1][mask >> 12 & SUIT_BITS]
        + suits[2][mask >> 24 & SUIT_BITS]
        + suits[3][mask >> 36]
    )


_DECK = range(NUM_CARDS)
_Obs = pinochle_pb2.PinochleObservation
_Seat = pinochle_pb2.PinochleSeat
_Trick = pinochle_pb2.PinochleTrick
_OBSERVATION_TAG = tag(game_pb2.Observation, "pinochle")
_OBSERVATION_HEADS = length_heads(_OBSERVATION_TAG)
"""``[len(payload)]``: the tag and length before an observation's payload."""
_HAND_NUMBER_TAG = tag(_Obs, "hand_number")
_DEALER_TAG = tag(_Obs, "dealer")
_TARGET_TAG = tag(_Obs, "target")
_TRUMP_TAG = tag(_Obs, "trump")
_TURN_UP_FIELD: dict[int | None, bytes] = {
    None: b"",
    **dict(enumerate(message_fields(tag(_Obs, "turn_up"), _CARDS))),
}
_STOCK_SIZE = tuple(uint_field(tag(_Obs, "stock_size"), size) for size in range(NUM_CARDS))
_PHASE_FIELD = tuple(uint_field(tag(_Obs, "phase"), phase) for phase in range(PHASE_OVER + 1))
_HAND_CLUBS, _HAND_DIAMONDS, _HAND_HEARTS, _HAND_SPADES = _suit_fields(tag(_Obs, "hand"))
_SEATS_TAG = tag(_Obs, "seats")
_COMPLETED_TRICKS_TAG = tag(_Obs, "completed_tricks")
_MELD_OPTIONS_TAG = tag(_Obs, "meld_options")
_PREVIOUS_HANDS_TAG = tag(_Obs, "previous_hands")
_SEAT_SCORE = FieldMemo(tag(_Seat, "score"), int_field)
_SEAT_HAND_POINTS = FieldMemo(tag(_Seat, "hand_points"), int_field)
_SEAT_TRICK_POINTS = tuple(
    int_field(tag(_Seat, "trick_points"), points) for points in range(8 * sum(CARD_POINTS) + 1)
)
"""By a hand's card points so far (at most all 48 cards')."""
_SEAT_TRICKS_WON = tuple(
    uint_field(tag(_Seat, "tricks_won"), tricks) for tricks in range(TRICKS_PER_HAND + 1)
)
_HAND_SIZE_TAG = tag(_Seat, "hand_size")
_HAND_SIZE_FIELDS = tuple(uint_field(_HAND_SIZE_TAG, size) for size in range(NUM_CARDS + 1))
_SEATS_HEAD = FieldMemo(_SEATS_TAG, length_prefix)
_SEAT_TABLED_SUITS = _suit_fields(tag(_Seat, "tabled"))
_SEAT_KNOWN_SUITS = _suit_fields(tag(_Seat, "known"))
_SEAT_MELDS_TAG = tag(_Seat, "melds")
_TRICK_LEADER_TAG = tag(_Trick, "leader")
_TRICK_CARD_FIELD = message_fields(tag(_Trick, "cards"), _CARDS)
_TRICK_WINNER_TAG = tag(_Trick, "winner")
_CURRENT_TRICK_FIELDS = tuple(
    {
        cards: length_delimited(
            tag(_Obs, "current_trick"),
            uint_field(_TRICK_LEADER_TAG, leader) + b"".join([_TRICK_CARD_FIELD[c] for c in cards]),
        )
        for cards in ((), *((card,) for card in range(NUM_CARDS)))
    }
    for leader in (0, 1)
)
"""``[leader][current_trick]``: the whole ``current_trick`` field (a message: always written)."""


_TRICK_PAIRS = tuple(_TRICK_CARD_FIELD[a] + _TRICK_CARD_FIELD[b] for a in _DECK for b in _DECK)
"""``[48 * lead + second]``: a finished trick's ``cards`` fields."""
_TRICK_LEADER_FIELDS = (uint_field(_TRICK_LEADER_TAG, 0), uint_field(_TRICK_LEADER_TAG, 1))
_TRICK_WINNER_FIELDS = tuple(optional_uint_field(_TRICK_WINNER_TAG, w) for w in (0, 1))
"""Always written once the trick is complete (``optional``)."""


def _completed_trick_field(trick: Trick) -> bytes:
    leader, (lead, second), winner = trick
    body = _TRICK_LEADER_FIELDS[leader] + _TRICK_PAIRS[48 * lead + second]
    return length_delimited(_COMPLETED_TRICKS_TAG, body + _TRICK_WINNER_FIELDS[winner])


_COMPLETED_TRICK_FIELDS: Memo[Trick, bytes] = Memo(_completed_trick_field, 16384)
"""Every match's finished tricks, shared: at most 9,216 (leader, cards, winner)."""


def _meld_option_field(key: int) -> bytes:
    """The ``meld_options`` entry of ``key = (2 * trump + seat) * len(MELDS) + meld``."""
    choice, meld = divmod(key, len(MELDS))
    trump, seat = divmod(choice, 2)
    return length_delimited(_MELD_OPTIONS_TAG, _meld_option(seat, trump, meld).SerializeToString())


_MELD_OPTION_FIELDS: Memo[int, bytes] = Memo(_meld_option_field, 8 * len(MELDS))
"""Every match's offered melds, shared (``_meld_option_field`` keys)."""
_SEAT_MELD_FIELDS: IdentityCache[bytes] = IdentityCache(4096)
"""Declared melds' ``melds`` entries: the engine's records are shared constants."""


def _seat_meld_field(meld: Meld) -> bytes:
    return length_delimited(_SEAT_MELDS_TAG, _meld(meld).SerializeToString())


def _hand_result_field(hand: HandResult) -> bytes:
    return length_delimited(_PREVIOUS_HANDS_TAG, _hand_result(hand).SerializeToString())


def _header(key: tuple[int, ...]) -> bytes:
    """The fields from ``hand_number`` to ``trump`` (``key``, a table's first four): fixed for
    a hand."""
    hand_number, dealer, target, trump = key
    return (
        uint_field(_HAND_NUMBER_TAG, hand_number)
        + uint_field(_DEALER_TAG, dealer)
        + uint_field(_TARGET_TAG, target)
        + uint_field(_TRUMP_TAG, trump + 1)
    )


_HEADERS: Memo[tuple[int, ...], bytes] = Memo(_header)
"""Every match's headers, shared: a few targets, hand numbers, dealers and trumps."""


SeatParts = tuple[SeatView, bytes, bytes, tuple[bytes, bytes]]
"""A seat view's ``seats`` entry in parts: (view, its melds encoded, the fields after
``hand_size`` (tabled and known cards, melds), (the field's head and the fields before
``hand_size`` when the hand size is 0 (omitted), when it is not)). A hand size is under 128,
so its field is 2 bytes when present: the two heads cover every size."""


def _seat_parts(view: SeatView, melds: bytes, last: SeatParts) -> SeatParts:
    """The parts of ``view`` with its ``melds`` (encoded), keeping ``last``'s fields after
    ``hand_size`` when neither its cards nor its melds changed (the usual case: tricks change
    the scalars)."""
    known = last[0]
    if known.tabled == view.tabled and known.known == view.known and last[1] == melds:
        after = last[2]
    else:
        after = (
            _mask_fields(_SEAT_TABLED_SUITS, view.tabled)
            + _mask_fields(_SEAT_KNOWN_SUITS, view.known)
            + melds
        )
    before = (
        _SEAT_SCORE[view.score]
        + _SEAT_HAND_POINTS[view.hand_points]
        + _SEAT_TRICK_POINTS[view.trick_points]
        + _SEAT_TRICKS_WON[view.tricks_won]
    )
    length = len(before) + len(after)
    return view, melds, after, (_SEATS_HEAD[length] + before, _SEATS_HEAD[length + 2] + before)


_NO_SEAT_PARTS: SeatParts = (SeatView(-1, -1, -1, -1, -1, -1), b"", b"", (b"", b""))
"""Parts of no real seat view: what a codec starts from."""


def _action_message(action: int) -> game_pb2.Action:
    """The wire form of an engine action id."""
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


_LEGAL_PLAYS = suit_tables(tuple(legal_action_field(_action_message(c)) for c in _DECK), 12)
"""``[suit][bits]``: the ``legal_actions`` entries playing those cards of the suit."""
_LEGAL_CLUBS, _LEGAL_DIAMONDS, _LEGAL_HEARTS, _LEGAL_SPADES = _LEGAL_PLAYS
_LEGAL_DECLARE_OUT = legal_action_field(_action_message(DECLARE_OUT))


class PinochleCodec(GameCodec):
    """Codec for ``referee.games.pinochle``.

    ``observation_bytes`` encodes the engine's shared table once per table (the engine makes a
    new one only when something public changes) in ``_table_parts``: the fields up to
    ``phase``, each seat's ``SeatParts`` (a seat view that did not change keeps them), the
    finished tricks and previous hands (both appended to as the match goes). Per decision it
    adds the hand (per suit, from tables), each seat's entry at its hand size, the current
    trick (a table) and any meld options. Legal card plays are written from the view's mask
    (``legal_action_fields``); parts that repeat across matches (finished tricks, offered and
    declared melds, hand headers) are encoded once per process.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._header_key: tuple[int, ...] = ()
        self._header = b""
        self._melds_key: tuple[Meld, ...] | None = None
        self._seat_melds: tuple[bytes, bytes] = (b"", b"")
        self._seats = (_NO_SEAT_PARTS, _NO_SEAT_PARTS)
        self._completed = SequenceCache(_COMPLETED_TRICK_FIELDS)
        self._previous = SequenceCache(Memo(_hand_result_field, 1024))
        self._tail_key: tuple[tuple[Trick, ...], tuple[HandResult, ...]] = ((), ())
        self._tail = (b"", b"", b"")
        """Finished tricks, previous hands and both, encoded, for ``_tail_key`` (the engine's
        tuples: a new one when either changes)."""
        self._parts: tuple[Any, ...] = (None,)
        """``_table_parts`` of the last table (it comes first)."""

    def observation_bytes(self, observation: Any) -> bytes:
        obs: PinochleObservation = observation
        seat, table, hand, (size0, size1), cards, meld_options, _ = obs
        parts = self._parts
        if parts[0] is not table:
            parts = self._parts = self._table_parts(table)
        _, prefix, (_, _, after0, heads0), (_, _, after1, heads1), current, tails = parts
        completed, previous, tail = tails
        if meld_options:
            fields, first = _MELD_OPTION_FIELDS, (2 * table.trump + seat) * len(MELDS)
            offered = b"".join([fields[first + meld] for meld in meld_options])
            tail = completed + offered + previous
        payload = b"".join(
            (
                prefix,
                _HAND_CLUBS[hand & SUIT_BITS],
                _HAND_DIAMONDS[hand >> 12 & SUIT_BITS],
                _HAND_HEARTS[hand >> 24 & SUIT_BITS],
                _HAND_SPADES[hand >> 36],
                heads0[size0 > 0],
                _HAND_SIZE_FIELDS[size0],
                after0,
                heads1[size1 > 0],
                _HAND_SIZE_FIELDS[size1],
                after1,
                current[cards],
                tail,
            )
        )
        size = len(payload)
        if size < HEADS_LIMIT:
            return _OBSERVATION_HEADS[size] + payload
        return length_prefix(_OBSERVATION_TAG, size) + payload

    def _table_parts(self, table: TableView) -> tuple[Any, ...]:
        """What ``table`` adds to every observation that shares it, in the order written:
        (table, fields up to ``phase``, the two seats' ``SeatParts``, ``current_trick``
        fields by cards (``_CURRENT_TRICK_FIELDS``), (finished tricks, previous hands, both))."""
        (_, _, _, _, turn_up, stock_size, phase, seats, melds, leader, completed, previous, _) = (
            table
        )
        header_key = table[:4]  # hand number, dealer, target, trump: fixed for a hand
        if header_key != self._header_key:
            self._header_key, self._header = header_key, _HEADERS[header_key]
        if melds is not self._melds_key:  # the engine makes a new tuple per meld
            self._melds_key = melds
            declared = _SEAT_MELD_FIELDS
            fields = [declared.get(m) or declared.put(m, _seat_meld_field(m)) for m in melds]
            melds0, melds1 = (
                b"".join([field for m, field in zip(melds, fields, strict=True) if m.seat == s])
                for s in (0, 1)
            )
            self._seat_melds = (melds0, melds1)
        seat0, seat1 = self._seats
        if seats[0] is not seat0[0] or self._seat_melds[0] is not seat0[1]:
            seat0 = _seat_parts(seats[0], self._seat_melds[0], seat0)
        if seats[1] is not seat1[0] or self._seat_melds[1] is not seat1[1]:
            seat1 = _seat_parts(seats[1], self._seat_melds[1], seat1)
        self._seats = (seat0, seat1)
        key_completed, key_previous = self._tail_key
        if completed is not key_completed or previous is not key_previous:
            done, before, _ = self._tail
            if completed is not key_completed:
                done = self._completed(completed)
            if previous is not key_previous:
                before = self._previous(previous)
            self._tail_key, self._tail = (completed, previous), (done, before, done + before)
        prefix = b"".join(
            (
                self._header,
                _TURN_UP_FIELD[turn_up],
                _STOCK_SIZE[stock_size],
                _PHASE_FIELD[phase],
            )
        )
        return (
            table,
            prefix,
            seat0,
            seat1,
            _CURRENT_TRICK_FIELDS[leader],
            self._tail,
        )

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: PinochleObservation = observation
        table = obs.table
        seats = [
            pinochle_pb2.PinochleSeat(
                score=view.score,
                hand_points=view.hand_points,
                trick_points=view.trick_points,
                tricks_won=view.tricks_won,
                hand_size=obs.hand_sizes[seat],
                tabled=_cards(cards_of(view.tabled)),
                known=_cards(cards_of(view.known)),
                melds=[_meld(m) for m in table.melds if m.seat == seat],
            )
            for seat, view in enumerate(table.seats)
        ]
        offered = [_meld_option(obs.seat, table.trump, meld) for meld in obs.meld_options]
        message = pinochle_pb2.PinochleObservation(
            hand_number=table.hand_number,
            dealer=table.dealer,
            target=table.target,
            trump=table.trump + 1,  # type: ignore[arg-type]
            stock_size=table.stock_size,
            phase=table.phase,  # type: ignore[arg-type]
            hand=_cards(cards_of(obs.hand)),
            seats=seats,
            current_trick=pinochle_pb2.PinochleTrick(
                leader=table.trick_leader, cards=_cards(obs.current_trick)
            ),
            completed_tricks=[_trick(t) for t in table.completed_tricks],
            meld_options=offered,
            previous_hands=[_hand_result(hand) for hand in table.previous_hands],
        )
        if table.turn_up is not None:
            message.turn_up.CopyFrom(_CARDS[table.turn_up])
        return game_pb2.Observation(pinochle=message)

    def legal_action_fields(self, observation: Any, actions: Sequence[int]) -> bytes:
        """While cards are played, the legal actions are the cards of the observation's
        ``legal_cards`` (then declaring out, if open): written a suit at a time from
        ``_LEGAL_PLAYS``."""
        cards = observation.legal_cards
        if not cards:
            return self.encoded_action_fields(actions)
        return b"".join(
            (
                _LEGAL_CLUBS[cards & SUIT_BITS],
                _LEGAL_DIAMONDS[cards >> 12 & SUIT_BITS],
                _LEGAL_HEARTS[cards >> 24 & SUIT_BITS],
                _LEGAL_SPADES[cards >> 36],
                _LEGAL_DECLARE_OUT if actions[-1] == DECLARE_OUT else b"",
            )
        )

    def _encode_action(self, action: int) -> game_pb2.Action:
        return _action_message(action)

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
