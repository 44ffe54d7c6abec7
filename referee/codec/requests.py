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
from referee.codec.wire import FieldMemo, length_delimited, tag, varint
from referee.match import Match

_Request = bot_service_pb2.ChooseActionRequest
_SEAT_FIELDS = FieldMemo(tag(_Request, "seat"))
"""The ``seat`` field by seat (omitted for seat 0, as proto3 does)."""
_OBSERVATION_TAG = tag(_Request, "observation")
_TIME_CONTROL_TAG = tag(_Request, "time_control")
_MOVE_INDEX_TAG = tag(_Request, "move_index")
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
        move_index=len(match.moves),
    )


class RequestEncoder:
    """Serialized ``ChooseActionRequest``s of one match, byte-identical to the message's."""

    def __init__(self, codec: GameCodec, settings: options_pb2.GameSettings, match_id: str):
        self.codec = codec
        self._prefix = bot_service_pb2.ChooseActionRequest(
            match_id=match_id, settings=settings
        ).SerializeToString()
        self._clocks: dict[tuple[int, int], bytes] = {}

    def encode(self, match: Match) -> bytes:
        """The serialized request for the seat to act in ``match``."""
        codec = self.codec
        state = match.state
        seat = state.current_seat()
        observation = codec.observation_bytes(state.observe(seat))
        move_time, bank = match.move_allowance_ms(seat), match.time_banks_ms[seat]
        clock = self._clocks.get((move_time, bank))
        if clock is None:
            if len(self._clocks) >= 256:
                self._clocks.clear()
            clock = self._clocks[move_time, bank] = length_delimited(
                _TIME_CONTROL_TAG,
                (_MOVE_TIME_TAG + varint(move_time) if move_time else b"")
                + (_TIME_BANK_TAG + varint(bank) if bank else b""),
            )
        move_index = len(match.moves)
        return b"".join(
            [
                self._prefix,
                _SEAT_FIELDS[seat],
                _OBSERVATION_TAG,
                varint(len(observation)),
                observation,
                codec.encoded_action_fields(state.legal_actions()),
                clock,
                _MOVE_INDEX_TAG + varint(move_index) if move_index else b"",
            ]
        )
