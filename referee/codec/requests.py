"""The bot-facing request for one decision, built the same way in the runner and in benchmarks."""

from __future__ import annotations

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import options_pb2
from referee.codec.base import GameCodec
from referee.match import Match


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
