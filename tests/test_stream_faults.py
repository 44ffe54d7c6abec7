"""Every way a bot can misbehave on its Play stream (issue 20), each a real server process.

Seat 0 is a ``tests.bots.stream_misbehaving`` bot reached at ``stream://``; seats 1 and 2 are
sample random bots over unary calls, so each test also shows a stream bot's faults never touch
the other seats.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import grpc.aio
import pytest

from arena.local_bots import BotProcess, free_port
from cardarena.game.v1 import record_pb2
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool
from referee.bot_stream import (
    CONNECT_METHOD,
    CONNECT_SERVICE,
    MAX_UNSOLICITED,
    StreamBot,
    connect_bot_handler,
)
from referee.codec.untrusted import MAX_DETAIL_CHARS
from referee.games.registry import make_game
from referee.match import TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec, play_match
from tests.helpers import play, random_bots, run_on_bridge, server_process

GAME = make_game("oh-hell", 3, {"deal_style": "short_low"})
FAST = TimeControl(move_time_ms=1000, time_bank_ms=0)
SHORT = TimeControl(move_time_ms=300, time_bank_ms=0)
RESUME = TimeControl(move_time_ms=5000, time_bank_ms=0)
"""For a stream that drops and comes back: time enough on a loaded machine to redial."""


@pytest.fixture(scope="module")
def two_random_bots() -> Iterator[list[BotProcess]]:
    with random_bots(2, seed=41) as bots:
        yield bots


def stream_bot(mode: str, *args: str) -> Iterator[BotProcess]:
    """A stream-misbehaving bot process, yielded once (use as ``for bad in stream_bot(...)``)."""
    with server_process("stream_misbehaving", f"stream-{mode}", mode, *args) as bot:
        yield bot


def faults_of(record: record_pb2.MatchRecord, seat: int) -> list[int]:
    return [move.fault for move in record.moves if move.seat == seat and move.fault]


def spec(bad: BotProcess, others: list[BotProcess], clock: TimeControl = FAST) -> MatchSpec:
    targets = [f"stream://{bad.address}", *(b.address for b in others)]
    return MatchSpec(GAME, targets, seed=3, time_control=clock)


def play_and_inspect(match: MatchSpec) -> tuple[record_pb2.MatchRecord, StreamBot, str]:
    """Play ``match``; also return seat 0's StreamBot and its GetInfo version afterwards."""

    async def main(pool: BotPool) -> tuple[record_pb2.MatchRecord, StreamBot, str]:
        record = await play_match(match, pool)
        bot = pool.get(match.endpoints[0])
        assert isinstance(bot, StreamBot)
        info = await bot.get_info(5)
        return record, bot, info.response.version if info.response else ""

    return run_on_bridge(main)


@pytest.mark.parametrize(
    ("mode", "fault", "detail"),
    [
        ("huge", record_pb2.FAULT_KIND_RESPONSE_TOO_LARGE, "larger than max"),
        ("garbage", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "no BotMessage"),
        ("wrong-kind", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "with info"),
        ("failure", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "the bot failed: x"),
        ("flood", record_pb2.FAULT_KIND_TRANSPORT_ERROR, f"more than {MAX_UNSOLICITED}"),
        ("unknown-id", record_pb2.FAULT_KIND_TIMEOUT, "no answer before the deadline"),
    ],
)
def test_a_bad_message_is_a_typed_fault_of_that_decision_only(
    mode: str, fault: int, detail: str, two_random_bots: list[BotProcess]
) -> None:
    for bad in stream_bot(mode, "--after", "3", "--times", "2"):
        record = play(spec(bad, two_random_bots))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == [fault, fault]
    faulted = [move for move in record.moves if move.fault]
    assert all(detail in move.fault_detail for move in faulted), faulted[0].fault_detail
    assert all(len(m.fault_detail) <= MAX_DETAIL_CHARS for m in faulted)
    assert faults_of(record, 1) == faults_of(record, 2) == []
    assert resimulate(record) == []


def test_a_late_answer_is_a_timeout_the_bot_is_told_and_the_answer_discarded(
    two_random_bots: list[BotProcess],
) -> None:
    for bad in stream_bot("slow", "--after", "2", "--times", "2", "--sleep-ms", "600"):
        record, bot, version = play_and_inspect(spec(bad, two_random_bots, SHORT))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == [record_pb2.FAULT_KIND_TIMEOUT] * 2
    assert "withdrawn=2" in version  # the bot got a withdrawal for each
    assert bot.unsolicited_total == 0  # the late answers were expected and dropped, no flood


def test_duplicate_answers_are_dropped_and_the_match_is_unaffected(
    two_random_bots: list[BotProcess],
) -> None:
    for bad in stream_bot("duplicate", "--after", "1", "--times", "5"):
        record, bot, _ = play_and_inspect(spec(bad, two_random_bots))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == []
    assert bot.unsolicited_total == 5


def test_a_dropped_stream_is_dialled_again_and_the_pending_request_sent_again(
    two_random_bots: list[BotProcess],
) -> None:
    for bad in stream_bot("drop", "--after", "4", "--times", "1"):
        record, bot, version = play_and_inspect(spec(bad, two_random_bots, RESUME))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == []  # resumed before its clock ran out
    assert "streams=2" in version and bot.connections == 2


def test_a_bot_that_does_not_serve_play_is_unreachable(two_random_bots: list[BotProcess]) -> None:
    with server_process("misbehaving", "unary", "garbage") as unary:
        record = play(spec(unary, two_random_bots))
    assert record.status == record_pb2.MATCH_STATUS_VOIDED
    assert "does not serve BotService.Play" in record.status_detail


def test_a_match_over_streams_is_the_same_match_as_over_unary_calls() -> None:
    records = []
    for prefix in ("", "stream://"):
        with random_bots(3, seed=7) as bots:  # fresh bots: the same random choices
            targets = [prefix + bot.address for bot in bots]
            records.append(play(MatchSpec(GAME, targets, seed=5, time_control=FAST)))
    unary, streamed = records
    assert streamed.status == record_pb2.MATCH_STATUS_COMPLETED
    assert [m.action for m in streamed.moves] == [m.action for m in unary.moves]
    assert not any(move.fault for move in streamed.moves)
    assert streamed.seats[0].endpoint.startswith("stream://")


def play_outbound(match: MatchSpec) -> tuple[record_pb2.MatchRecord, StreamBot]:
    """Play ``match`` whose seat 0 is ``outbound://x``, listening for ConnectBot on the port
    ``match`` was made for (``OUTBOUND_PORT``) as the arena does."""

    async def main(pool: BotPool) -> tuple[record_pb2.MatchRecord, StreamBot]:
        async def accept(bot_id: str, context: object) -> StreamBot:
            bot = pool.get(f"outbound://{bot_id}")
            assert isinstance(bot, StreamBot)
            return bot

        async def listen() -> grpc.aio.Server:
            server = grpc.aio.server()
            handler = connect_bot_handler(accept)
            server.add_registered_method_handlers(CONNECT_SERVICE, {CONNECT_METHOD: handler})
            server.add_insecure_port(f"127.0.0.1:{OUTBOUND_PORT}")
            await server.start()
            return server

        server = await await_aio(listen)
        try:
            record = await play_match(match, pool)
        finally:
            await await_aio(lambda: server.stop(0))
        bot = pool.get("outbound://x")
        assert isinstance(bot, StreamBot)
        return record, bot

    return run_on_bridge(main)


OUTBOUND_PORT = free_port()


def test_an_outbound_bot_that_reconnects_in_time_resumes_its_match(
    two_random_bots: list[BotProcess],
) -> None:
    dial = ["--connect", f"127.0.0.1:{OUTBOUND_PORT}", "--bot-id", "x"]
    for bad in stream_bot("drop", "--after", "4", "--times", "1", *dial):
        targets = ["outbound://x", *(b.address for b in two_random_bots)]
        record, bot = play_outbound(MatchSpec(GAME, targets, seed=3, time_control=RESUME))
        assert bad.process.poll() is None
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == []  # the request in flight was sent again on the new stream
    assert bot.connections == 2


def test_an_outbound_bot_that_does_not_come_back_is_unreachable_not_timed_out(
    two_random_bots: list[BotProcess],
) -> None:
    targets = ["outbound://nobody", *(b.address for b in two_random_bots)]
    record = play(MatchSpec(GAME, targets, seed=3, time_control=SHORT))
    assert record.status == record_pb2.MATCH_STATUS_VOIDED  # never connected: void at start
    assert "stream was down" in record.status_detail
