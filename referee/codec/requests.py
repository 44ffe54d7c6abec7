"""The bot-facing request for one decision, built the same way in the runner and in benchmarks.

``choose_action_request`` builds the message (for bots in-process, tests and benchmarks).
``RequestEncoder`` writes the same bytes directly for the runner's hot path: building the
message copies the observation, the settings and every legal action into it and then
serializes the lot, while the encoder splices together the observation's bytes (written directly
by ``GameCodec.observation_bytes``) and bytes it computed once per match (match id, settings)
or once per action. Protobuf's wire format is a
concatenation of fields, so the two give byte-identical requests (a test checks every game).
"""

from __future__ import annotations

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import options_pb2
from referee.codec.base import GameCodec
from referee.codec.wire import (
    HEADS_LIMIT,
    BoundedCache,
    FieldMemo,
    length_delimited,
    length_heads,
    length_prefix,
    tag,
    uint_field,
)
from referee.match import Match

_Request = bot_service_pb2.ChooseActionRequest
_SEAT_FIELDS = FieldMemo(tag(_Request, "seat"))
"""The ``seat`` field by seat (omitted for seat 0, as proto3 does)."""
_OBSERVATION_TAG = tag(_Request, "observation")
_OBSERVATION_HEADS = length_heads(_OBSERVATION_TAG)
"""The ``observation`` field's tag and length, by length (below ``HEADS_LIMIT``)."""
_TIME_CONTROL_TAG = tag(_Request, "time_control")
_MOVE_INDEX_TAG = tag(_Request, "move_index")
_MOVE_INDEX_LIMIT = 4096
_MOVE_INDEX_FIELDS = tuple(uint_field(_MOVE_INDEX_TAG, index) for index in range(_MOVE_INDEX_LIMIT))
"""The ``move_index`` field by index, below ``_MOVE_INDEX_LIMIT`` (omitted at 0)."""
_MOVE_TIME_TAG = tag(bot_service_pb2.TimeControl, "move_time_ms")
_TIME_BANK_TAG = tag(bot_service_pb2.TimeControl, "time_bank_ms")


def choose_action_request(
    match: Match, codec: GameCodec, settings: options_pb2.GameSettings, match_id: str
) -> bot_service_pb2.ChooseActionRequest:
    """What the seat to act is sent: its observation, legal actions and clock."""
    seat = match.to_act()
    return bot_service_pb2.ChooseActionRequest(
        match_id=match_id,
        settings=settings,
        seat=seat,
        observation=codec.observation(match.state.observe(seat)),
        legal_actions=codec.encode_actions(match.legal_actions()),
        time_control=bot_service_pb2.TimeControl(
            move_time_ms=match.move_allowance_ms(seat), time_bank_ms=match.time_banks_ms[seat]
        ),
        move_index=match.seat_moves[seat],
    )


class RequestEncoder:
    """Serialized ``ChooseActionRequest``s of one match, byte-identical to the message's.

    Everything but the observation and the legal actions comes from bytes computed once per
    seat, clock or move index (the seat's own count, ``Match.seat_moves``), so a request costs
    a handful of lookups and one join.
    """

    def __init__(self, codec: GameCodec, settings: options_pb2.GameSettings, match_id: str):
        self.codec = codec
        prefix = bot_service_pb2.ChooseActionRequest(
            match_id=match_id, settings=settings
        ).SerializeToString()
        self._heads = [prefix + _SEAT_FIELDS[seat] for seat in range(codec.game.num_seats)]
        """Match id, settings and seat: fixed per seat for the whole match."""

    def encode(self, match: Match) -> bytes:
        """The serialized request for the seat to act in ``match``."""
        codec = self.codec
        state = match.state
        seat = state.current_seat()
        actions = state.legal_actions()  # first: the view of the seat to act reads them
        view = state.observe(seat)
        observation = codec.observation_bytes(view)
        clock_ms = match.clocks_ms[seat]
        clock = _CLOCK_FIELDS.get(clock_ms) or _CLOCK_FIELDS.put(clock_ms, _clock_field(*clock_ms))
        legal = codec.legal_action_fields(view, actions)
        size, index = len(observation), match.seat_moves[seat]
        return b"".join(
            [
                self._heads[seat],
                _OBSERVATION_HEADS[size]
                if size < HEADS_LIMIT
                else length_prefix(_OBSERVATION_TAG, size),
                observation,
                legal,
                clock,
                _MOVE_INDEX_FIELDS[index]
                if index < _MOVE_INDEX_LIMIT
                else uint_field(_MOVE_INDEX_TAG, index),
            ]
        )


def _clock_field(move_time_ms: int, time_bank_ms: int) -> bytes:
    """The ``time_control`` field (it is always set, even with both values zero)."""
    return length_delimited(
        _TIME_CONTROL_TAG,
        uint_field(_MOVE_TIME_TAG, move_time_ms) + uint_field(_TIME_BANK_TAG, time_bank_ms),
    )


_CLOCK_FIELDS: BoundedCache[tuple[int, int], bytes] = BoundedCache(4096)
"""``time_control`` fields by (move allowance, bank), shared by every match: most matches of a
ladder start from the same clock, and banks only shrink when a bot overruns."""
