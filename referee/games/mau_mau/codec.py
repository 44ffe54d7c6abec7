"""Mau-Mau observations and actions on the wire."""

from __future__ import annotations

from typing import Any

from cardarena.game.v1 import cards_pb2, game_pb2, mau_mau_pb2
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
    suit_tables,
    tag,
    uint_field,
    varint,
)
from referee.games.bits import set_bits
from referee.games.mau_mau.view import (
    ANNOUNCE_SHIFT,
    DIAMONDS_SHIFT,
    DRAW,
    HEARTS_SHIFT,
    LAST_CARD,
    PASS,
    SUIT_BITS,
    SUIT_SIZE,
    DealResult,
    MauMauObservation,
    MauMauTable,
    action_cards,
    discard_action,
)

_CARDS = tuple(standard_card(card) for card in range(52))
_PHASE_DISCARD = mau_mau_pb2.MAU_MAU_PHASE_DISCARD
_PHASE_PLAY_DRAWN = mau_mau_pb2.MAU_MAU_PHASE_PLAY_DRAWN
_JACK_INDEX = 9


_Obs = mau_mau_pb2.MauMauObservation
_Seat = mau_mau_pb2.MauMauSeat
_OBSERVATION_PREFIX = FieldMemo(tag(game_pb2.Observation, "mau_mau"), length_prefix)
"""``[len(payload)]``: the ``Observation.mau_mau`` tag and length before a payload."""
_SCORING_TAG = tag(_Obs, "scoring")
_TARGET_TAG = tag(_Obs, "target")
_CANNOT_DISCARD_TAG = tag(_Obs, "cannot_discard")
_JACK_WILD_TAG = tag(_Obs, "jack_wild")
_DEAL_NUMBER_TAG = tag(_Obs, "deal_number")
_DEALER_TAG = tag(_Obs, "dealer")
_CLOCKWISE_TAG = tag(_Obs, "clockwise")
_PHASE_TAG = tag(_Obs, "phase")
_HAND_FIELD = message_fields(tag(_Obs, "hand"), _CARDS)
_CLUBS_AND_DIAMONDS = (1 << HEARTS_SHIFT) - 1
"""The clubs and diamonds of a hand mask (one 30-bit digit of a Python int)."""
_HAND_CLUBS, _HAND_DIAMONDS, _HAND_HEARTS, _HAND_SPADES = suit_tables(_HAND_FIELD, SUIT_SIZE)
_SEATS_TAG = tag(_Obs, "seats")
_START_SUIT_FIELD = FieldMemo(tag(_Obs, "start_suit"))
_TOP_CARD_FIELD = message_fields(tag(_Obs, "top_card"), _CARDS)
_PILE_FIELD = message_fields(tag(_Obs, "discard_pile"), _CARDS)
_PILE_FIELD_OF = dict(enumerate(_PILE_FIELD)).__getitem__
"""A card's ``discard_pile`` field: a dict's bound ``__getitem__``, which ``map`` calls
faster than a tuple's (a slot wrapper)."""
_STOCK_SIZE = FieldMemo(tag(_Obs, "stock_size"))
_ANNOUNCED_SUIT_FIELD = FieldMemo(tag(_Obs, "announced_suit"))
_ANY_CARD_FIELD = FieldMemo(tag(_Obs, "any_card"))
_DRAWN_CARD_FIELD = message_fields(tag(_Obs, "drawn_card"), _CARDS)
_PREVIOUS_DEALS_TAG = tag(_Obs, "previous_deals")
_SEAT_HAND_SIZE_TAG = tag(_Seat, "hand_size")
_SEAT_TALLY = FieldMemo(tag(_Seat, "tally"), int_field)
_SEAT_FINES = FieldMemo(tag(_Seat, "fines"))
_SEAT_BARRED = uint_field(tag(_Seat, "barred"), True)


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


def _header(table: MauMauTable) -> bytes:
    """The fields from ``scoring`` to ``phase``."""
    return b"".join(
        [
            length_delimited(_SCORING_TAG, table.scoring.encode()) if table.scoring else b"",
            uint_field(_TARGET_TAG, table.target),
            length_delimited(_CANNOT_DISCARD_TAG, table.cannot_discard.encode())
            if table.cannot_discard
            else b"",
            uint_field(_JACK_WILD_TAG, table.jack_wild),
            uint_field(_DEAL_NUMBER_TAG, table.deal_number),
            uint_field(_DEALER_TAG, table.dealer),
            uint_field(_CLOCKWISE_TAG, table.clockwise),
            uint_field(
                _PHASE_TAG, _PHASE_PLAY_DRAWN if table.playing_drawn_card else _PHASE_DISCARD
            ),
        ]
    )


_SEAT_FORMAT_HEADS = tuple(
    (_SEATS_TAG + varint(2 + length) + _SEAT_HAND_SIZE_TAG).replace(b"%", b"%%")
    for length in range(64)
)
"""A ``seats`` entry's tag, length and ``hand_size`` tag, escaped for a ``bytes %`` format,
by the length of the fields after ``hand_size`` (at most 16 bytes)."""


class _SeatMemo(dict[int, bytes]):
    """One seat's ``seats`` entry as a ``bytes % (hand_size,)`` format, by its fines, for a
    fixed tally and bar: ``memo[fines]``, computed on first use.

    A hand size from 1 to 127 is one varint byte, written by ``%c``, so the entry's length
    does not depend on it. (A size of 0 is omitted from the entry instead: see ``_seats``.)
    """

    __slots__ = ("_bar", "_length", "_tally")

    def __init__(self, tally: int, barred: bool) -> None:
        super().__init__()
        tally_field = _SEAT_TALLY[tally]
        self._bar = _SEAT_BARRED if barred else b""
        self._length = len(tally_field) + len(self._bar)
        self._tally = b"%c" + tally_field.replace(b"%", b"%%")

    def __missing__(self, fines: int) -> bytes:
        fines_field = _SEAT_FINES[fines]
        encoded = self[fines] = (
            _SEAT_FORMAT_HEADS[self._length + len(fines_field)]
            + self._tally
            + fines_field.replace(b"%", b"%%")
            + self._bar
        )
        return encoded


_SEAT_MEMOS: Memo[tuple[int, bool], _SeatMemo] = Memo(lambda key: _SeatMemo(*key))
"""``_SeatMemo`` by (tally, bar), shared by every codec (a tally lasts a deal, fines change
within it)."""
_SEAT_MEMO_OF = _SEAT_MEMOS.__getitem__
_SEAT_FORMAT_OF = _SeatMemo.__getitem__


def _seats(
    sizes: tuple[int, ...],
    tallies: tuple[int, ...],
    fines: tuple[int, ...],
    barred: tuple[bool, ...],
) -> bytes:
    """The ``seats`` entries written field by field (a hand size may be 0 when the game ends)."""
    return b"".join(
        [
            length_delimited(
                _SEATS_TAG,
                uint_field(_SEAT_HAND_SIZE_TAG, size)
                + _SEAT_TALLY[tally]
                + _SEAT_FINES[fine]
                + (_SEAT_BARRED if bar else b""),
            )
            for size, tally, fine, bar in zip(sizes, tallies, fines, barred, strict=True)
        ]
    )


def _tail(key: tuple[int, int, bool, int | None]) -> bytes:
    """The fields from ``stock_size`` to ``drawn_card`` (an observation's last four fields)."""
    stock_size, announced_suit, any_card, drawn_card = key
    return (
        _STOCK_SIZE[stock_size]
        + _ANNOUNCED_SUIT_FIELD[announced_suit]
        + _ANY_CARD_FIELD[any_card]
        + (b"" if drawn_card is None else _DRAWN_CARD_FIELD[drawn_card])
    )


_TAILS = Memo(_tail)
"""``_TAILS[observation[7:]]``: ``_tail`` by those fields' values."""


class MauMauCodec(GameCodec):
    """Codec for ``referee.games.mau_mau``.

    ``observation_bytes`` runs at every decision, so it joins a few parts, each cached until
    the engine's objects it comes from change (checked with ``is``: the engine shares them
    until then). When the shared ``table`` changes: the header fields (by their values) and
    the previous deals. When the tallies, fines or bars change: the seats as a ``bytes %``
    format of the hand sizes (a memo per seat's tally and bar by its fines). When the discard
    pile changes: the start suit, the top card and the pile (the last pile's bytes plus the
    card just discarded). At every decision: the hand by suit from tables of each suit's 13
    bits, the seats' format applied to the hand sizes, and the fields from ``stock_size`` to
    ``drawn_card`` from a memo by their values.
    """

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self._table: MauMauTable | None = None
        self._headers: BoundedCache[tuple[object, ...], bytes] = BoundedCache(256)
        self._head = b""
        self._tallies: tuple[int, ...] = ()
        self._barred: tuple[bool, ...] = ()
        self._seat_memos: list[_SeatMemo] = []
        self._fines: tuple[int, ...] = ()
        self._seats_format = b""
        self._start_suit = b""
        self._pile: tuple[int, ...] = ()
        self._pile_field = b""
        self._pile_part = b""
        self._previous = SequenceCache(Memo(_deal_result_field, 1024))
        self._previous_deals: tuple[DealResult, ...] = ()
        self._previous_field = b""

    def observation_bytes(self, observation: Any) -> bytes:
        obs: MauMauObservation = observation
        _, table, hand, hand_sizes, fines, barred, pile, _, _, _, _ = obs
        if table is not self._table:
            self._use_table(table)
        if barred is not self._barred:  # at each fine; new bars, tallies, deals more rarely
            if barred != self._barred:
                self._seat_memos = [*map(_SEAT_MEMO_OF, zip(self._tallies, barred))]  # noqa: B905
                self._fines = ()
            self._barred = barred
        if fines is not self._fines:
            self._fines = fines
            self._seats_format = b"".join(map(_SEAT_FORMAT_OF, self._seat_memos, fines))
        if pile is not self._pile:
            # The pile only grows between reshuffles, mostly by one card: then its field is
            # the last one plus that card's.
            if pile[:-1] == self._pile:
                field = self._pile_field + _PILE_FIELD[pile[-1]]
            else:  # a new deal, a reshuffle, two Jacks
                field = b"".join(map(_PILE_FIELD_OF, pile))
            self._pile, self._pile_field = pile, field
            self._pile_part = self._start_suit + _TOP_CARD_FIELD[pile[-1]] + field
        low = hand & _CLUBS_AND_DIAMONDS  # shifts of a one-digit int are cheaper
        high = hand >> HEARTS_SHIFT
        payload = b"".join(
            [
                self._head,
                _HAND_CLUBS[low & SUIT_BITS],
                _HAND_DIAMONDS[low >> DIAMONDS_SHIFT],
                _HAND_HEARTS[high & SUIT_BITS],
                _HAND_SPADES[high >> SUIT_SIZE],
                self._seats_format % hand_sizes
                if 0 not in hand_sizes
                else _seats(hand_sizes, table.tallies, fines, barred),
                self._pile_part,
                _TAILS[obs[7:]],
                self._previous_field,
            ]
        )
        return _OBSERVATION_PREFIX[len(payload)] + payload

    def _use_table(self, table: MauMauTable) -> None:
        """Encode the parts that come from ``table``; drop the seat and pile parts that
        depend on it when it changes them."""
        self._table = table
        header_key = table[1:9]  # scoring .. playing_drawn_card
        self._head = self._headers.get(header_key) or self._headers.put(header_key, _header(table))
        if table.tallies != self._tallies:
            self._tallies = table.tallies
            self._barred = ()
        previous = table.previous_deals
        if previous != self._previous_deals:
            self._previous_deals = previous
            self._previous_field = self._previous(previous)
        start_suit = _START_SUIT_FIELD[table.start_card // SUIT_SIZE + 1]
        if start_suit != self._start_suit:  # the pile part starts with it
            self._start_suit = start_suit
            self._pile, self._pile_field = (), b""

    def card(self, card: int) -> cards_pb2.Card:
        return _CARDS[card]

    def observation(self, observation: Any) -> game_pb2.Observation:
        obs: MauMauObservation = observation
        table = obs.table
        message = mau_mau_pb2.MauMauObservation(
            scoring=table.scoring,
            target=table.target,
            cannot_discard=table.cannot_discard,
            jack_wild=table.jack_wild,
            deal_number=table.deal_number,
            dealer=table.dealer,
            clockwise=table.clockwise,
            phase=_PHASE_PLAY_DRAWN if table.playing_drawn_card else _PHASE_DISCARD,
            hand=[_CARDS[c] for c in set_bits(obs.hand)],
            seats=[
                mau_mau_pb2.MauMauSeat(hand_size=size, tally=tally, fines=fines, barred=barred)
                for size, tally, fines, barred in zip(
                    obs.hand_sizes, table.tallies, obs.fines, obs.barred, strict=True
                )
            ],
            start_suit=table.start_card // SUIT_SIZE + 1,  # type: ignore[arg-type]
            top_card=_CARDS[obs.discard_pile[-1]],
            discard_pile=[_CARDS[c] for c in obs.discard_pile],
            stock_size=obs.stock_size,
            announced_suit=obs.announced_suit,  # type: ignore[arg-type]
            any_card=obs.any_card,
            previous_deals=[_deal_result(deal) for deal in table.previous_deals],
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
            cards[0] == cards[1] or any(card % SUIT_SIZE != _JACK_INDEX for card in cards)
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
