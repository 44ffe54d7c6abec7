"""The Python SDK: a function served as a bot, its deadline visible, its bugs contained."""

from __future__ import annotations

from botkit import Bot, time_left_s
from botkit.server import start_server
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, record_pb2
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool
from referee.games.registry import make_game
from referee.match import FaultPolicy, TimeControl
from referee.runner import MatchSpec, play_match
from tests.helpers import run_on_bridge

GAME = make_game("oh-hell", 3, {"deal_style": "short_low"})


def test_choose_sees_the_time_left_and_a_bug_is_a_fault_not_a_dead_server() -> None:
    seen: list[float | None] = []

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        seen.append(time_left_s())
        if len(seen) in (5, 6):  # the match's moves 4 and 5: this bot plays every seat
            raise ValueError("my bug")
        return request.legal_actions[0]

    async def main(pool: BotPool) -> record_pb2.MatchRecord:
        server, address = await await_aio(lambda: start_server(Bot(choose=choose, name="sdk")))
        try:
            spec = MatchSpec(
                GAME,
                [address] * 3,
                seed=2,
                time_control=TimeControl(move_time_ms=1500, time_bank_ms=0),
                policy=FaultPolicy(max_faults=0),
            )
            return await play_match(spec, pool)
        finally:
            await await_aio(lambda: server.stop(0))

    record = run_on_bridge(main)
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert [m.fault for m in record.moves[4:6]] == [record_pb2.FAULT_KIND_TRANSPORT_ERROR] * 2
    assert "my bug" in record.moves[4].fault_detail
    assert not any(m.fault for m in record.moves[6:]), "the server kept serving after the bug"
    assert len(seen) == len(record.moves)
    # The deadline travels with the call (gRPC rounds it up by a few ms).
    assert all(value is not None and 0 < value <= 1.6 for value in seen), seen[:5]
    assert time_left_s() is None, "outside a call there is no deadline"
