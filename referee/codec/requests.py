"""The bot-facing request for one decision, built the same way in the runner and in benchmarks.

``choose_action_request`` builds the message (for bots in-process, tests and benchmarks).
``RequestEncoder`` writes the same bytes directly for the runner's hot path: building the
message copies the observation, the settings and every legal action into it and then
serializes the lot, while the encoder serializes only the observation and splices in bytes it
computed once per match (match id, settings) or once per action. Protobuf's wire format is a
concatenation of fields, so the two give byte-identical requests (a test checks every game).
"""

from __future__ import annotations

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import options_pb2
from referee.codec.base import GameCodec, length_delimited, varint
from referee.match import Match

# Field numbers of ChooseActionRequest and TimeControl (cardarena/bot/v1/bot_service.proto).
_SEAT_TAG = b"\x18"  # field 3, varint
_OBSERVATION_TAG = b"\x22"  # field 4, length-delimited
_TIME_CONTROL_TAG = b"\x32"  # field 6, length-delimited
_MOVE_INDEX_TAG = b"\x38"  # field 7, varint
_MOVE_TIME_TAG = b"\x08"  # TimeControl field 1, varint
_TIME_BANK_TAG = b"\x10"  # TimeControl field 2, varint


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
        move_index=len(match.moves),
    )


class RequestEncoder:
    """Serialized ``ChooseActionRequest``s of one match, byte-identical to the message's."""

    def __init__(self, codec: GameCodec, settings: options_pb2.GameSettings, match_id: str):
        self.codec = codec
        self._prefix = bot_service_pb2.ChooseActionRequest(
            match_id=match_id, settings=settings
        ).SerializeToString()

    def encode(self, match: Match) -> bytes:
        """The serialized request for the seat to act in ``match``."""
        codec = self.codec
        seat = match.to_act()
        parts = [self._prefix]
        if seat:
            parts += (_SEAT_TAG, varint(seat))
        observation = codec.observation(match.state.observe(seat)).SerializeToString()
        parts += (_OBSERVATION_TAG, varint(len(observation)), observation)
        action_field = codec.encoded_action_field
        parts += [action_field(action) for action in match.legal_actions()]
        move_time, bank = match.move_allowance_ms(seat), match.time_banks_ms[seat]
        clock = (_MOVE_TIME_TAG + varint(move_time) if move_time else b"") + (
            _TIME_BANK_TAG + varint(bank) if bank else b""
        )
        parts.append(length_delimited(_TIME_CONTROL_TAG, clock))
        move_index = len(match.moves)
        if move_index:
            parts += (_MOVE_INDEX_TAG, varint(move_index))
        return b"".join(parts)
