"""Every way a remote bot can fail, each a real misbehaving server process.

Each test checks that the match completes or ends exactly as the fault policy says and that the
record tells what happened. Short games keep real-time waits small.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio

from arena.local_bots import BotProcess
from cardarena.game.v1 import record_pb2
from referee.bot_client import BotPool
from referee.codec.untrusted import MAX_DETAIL_CHARS
from referee.games.registry import make_game
from referee.match import FaultPolicy, TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec, play_match
from tests.helpers import misbehaving_bot, play, random_bots, run_on_bridge

GAME = make_game("oh-hell", 3, {"deal_style": "short_low"})  # 10 hands, 195 decisions
FAST = TimeControl(move_time_ms=2000, time_bank_ms=0)


@pytest.fixture(scope="module")
def two_random_bots() -> Iterator[list[BotProcess]]:
    with random_bots(2, seed=40) as bots:
        yield bots


def faults_of(record: record_pb2.MatchRecord, seat: int) -> list[int]:
    return [move.fault for move in record.moves if move.seat == seat and move.fault]


def spec_with(bad: BotProcess, others: list[BotProcess], **kwargs: object) -> MatchSpec:
    return MatchSpec(GAME, [bad.address, *(b.address for b in others)], seed=2, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "fault", "detail"),
    [
        ("garbage", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "Oh Hell action"),
        ("empty", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "no action"),
        ("illegal", record_pb2.FAULT_KIND_ILLEGAL_ACTION, "not legal"),
        ("huge", record_pb2.FAULT_KIND_RESPONSE_TOO_LARGE, "larger than max"),
        ("error", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "bot bug"),
        ("info-only", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "UNIMPLEMENTED"),
        ("unparseable", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "do not parse"),
        ("other-type", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "ChooseActionResponse"),
        ("unknown-field", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "ChooseActionResponse: field"),
        ("unknown-inner-field", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "(action: field 1000)"),
        ("other-game", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "Oh Hell action"),
        ("rude-status", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "PERMISSION_DENIED: "),
    ],
)
def test_bad_answers_get_a_typed_fault_and_a_default_move(
    mode: str, fault: int, detail: str, two_random_bots: list[BotProcess]
) -> None:
    with misbehaving_bot(mode, "--after", "3", "--times", "2") as bad:
        record = play(spec_with(bad, two_random_bots, time_control=FAST))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert faults_of(record, 0) == [fault, fault]
    faulted = [move for move in record.moves if move.fault]
    assert all(detail in move.fault_detail for move in faulted), faulted[0].fault_detail
    assert faults_of(record, 1) == faults_of(record, 2) == []
    assert resimulate(record) == [], "default moves are recorded like any other"
    for move in faulted:
        assert len(move.fault_detail) <= MAX_DETAIL_CHARS and move.fault_detail.isprintable()


def test_too_many_faults_forfeit_and_the_forfeiting_seat_ranks_last(
    two_random_bots: list[BotProcess],
) -> None:
    with misbehaving_bot("illegal", "--after", "5") as bad:
        record = play(spec_with(bad, two_random_bots, policy=FaultPolicy(max_faults=3)))
    assert record.status == record_pb2.MATCH_STATUS_FORFEITED
    assert record.forfeited_seat == 0
    assert record.outcome.ranks[0] == 3
    assert sorted(record.outcome.ranks[1:]) in ([1, 2], [1, 1])
    assert faults_of(record, 0) == [record_pb2.FAULT_KIND_ILLEGAL_ACTION] * 3
    assert "3 faults" in record.status_detail


def test_a_bot_that_sleeps_past_its_deadline_times_out(two_random_bots: list[BotProcess]) -> None:
    control = TimeControl(move_time_ms=150, time_bank_ms=0)
    with misbehaving_bot("sleep", "--sleep-ms", "2000", "--after", "2", "--times", "1") as bad:
        record = play(spec_with(bad, two_random_bots, time_control=control))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    timed_out = [move for move in record.moves if move.fault]
    assert [move.fault for move in timed_out] == [record_pb2.FAULT_KIND_TIMEOUT]
    assert 140_000 <= timed_out[0].elapsed_us < 1_500_000, "the deadline cut the call short"


def test_a_slow_bot_pays_from_its_bank_until_the_bank_is_gone(
    two_random_bots: list[BotProcess],
) -> None:
    control = TimeControl(move_time_ms=100, time_bank_ms=500)
    with misbehaving_bot("sleep", "--sleep-ms", "300", "--after", "1", "--times", "4") as bad:
        record = play(spec_with(bad, two_random_bots, time_control=control))
    moves = [move for move in record.moves if move.seat == 0]
    assert moves[0].time_bank_ms == 500  # the first answer is quick
    # Each slow answer overruns the move time by 200 ms or more (more on a loaded machine, so
    # where the bank runs out is not fixed): the first is paid from the bank, the bank only
    # shrinks, and four overruns cannot fit in 500 ms, so by the third it is exhausted, once.
    slow = moves[1:5]
    assert slow[0].fault == 0 and 0 < slow[0].time_bank_ms < 500
    banks = [move.time_bank_ms for move in slow]
    assert banks == sorted(banks, reverse=True)
    exhausted = [i for i, move in enumerate(slow) if move.fault]
    assert exhausted[:1] in ([1], [2]), [move.fault for move in slow]
    first = exhausted[0]
    assert slow[first].fault == record_pb2.FAULT_KIND_TIME_BANK_EXHAUSTED
    assert slow[first].time_bank_ms == 0
    assert moves[4].fault == record_pb2.FAULT_KIND_TIMEOUT
    assert all(move.fault == 0 for move in moves[5:])
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED


def test_a_crashed_bot_is_unreachable_and_the_match_still_ends(
    two_random_bots: list[BotProcess],
) -> None:
    with misbehaving_bot("crash", "--after", "4") as bad:
        record = play(spec_with(bad, two_random_bots, policy=FaultPolicy(max_faults=4)))
    assert record.status == record_pb2.MATCH_STATUS_FORFEITED
    kinds = faults_of(record, 0)
    assert len(kinds) == 4
    assert set(kinds) <= {record_pb2.FAULT_KIND_UNREACHABLE, record_pb2.FAULT_KIND_TRANSPORT_ERROR}
    assert kinds[-1] == record_pb2.FAULT_KIND_UNREACHABLE


def test_a_bot_unreachable_at_the_start_voids_the_match(two_random_bots: list[BotProcess]) -> None:
    spec = MatchSpec(GAME, ["127.0.0.1:1", *(b.address for b in two_random_bots)], seed=1)
    record = play(spec)
    assert record.status == record_pb2.MATCH_STATUS_VOIDED
    assert "127.0.0.1:1" in record.status_detail
    assert len(record.moves) == 0 and len(record.outcome.ranks) == 0


def test_unreachable_at_start_can_be_played_through_when_configured(
    two_random_bots: list[BotProcess],
) -> None:
    policy = FaultPolicy(void_if_unreachable_at_start=False, max_faults=2)
    spec = MatchSpec(GAME, ["127.0.0.1:1", *(b.address for b in two_random_bots)], 1, policy=policy)
    record = play(spec)
    assert record.status == record_pb2.MATCH_STATUS_FORFEITED
    assert faults_of(record, 0) == [record_pb2.FAULT_KIND_UNREACHABLE] * 2


def test_cancelling_a_match_cancels_the_rpc_in_flight(two_random_bots: list[BotProcess]) -> None:
    control = TimeControl(move_time_ms=60_000, time_bank_ms=0)
    with misbehaving_bot("hang", "--after", "1") as bad:
        spec = spec_with(bad, two_random_bots, time_control=control)

        async def cancel_midway(pool: BotPool) -> float:
            started = trio.current_time()
            with trio.move_on_after(1.0):
                await play_match(spec, pool)
            return trio.current_time() - started

        elapsed = run_on_bridge(cancel_midway)
        assert elapsed < 5
        assert bad.process.stdout is not None
        assert bad.process.stdout.readline().strip() == "CANCELLED"


def test_a_hanging_bot_does_not_slow_a_match_beside_it(two_random_bots: list[BotProcess]) -> None:
    control = TimeControl(move_time_ms=300, time_bank_ms=0)
    with misbehaving_bot("hang") as bad, random_bots(3, seed=60) as good:
        bad_spec = spec_with(
            bad, two_random_bots, time_control=control, policy=FaultPolicy(max_faults=3)
        )
        good_spec = MatchSpec(GAME, [b.address for b in good], seed=9, time_control=control)

        async def both(pool: BotPool) -> list[record_pb2.MatchRecord]:
            records: list[record_pb2.MatchRecord] = []
            async with trio.open_nursery() as nursery:
                for spec in (bad_spec, good_spec):
                    nursery.start_soon(_append, records, spec, pool)
            return records

        records = run_on_bridge(both)
    by_status = {record.status: record for record in records}
    assert set(by_status) == {record_pb2.MATCH_STATUS_FORFEITED, record_pb2.MATCH_STATUS_COMPLETED}
    good_record = by_status[record_pb2.MATCH_STATUS_COMPLETED]
    assert not any(move.fault for move in good_record.moves)
    assert max(move.elapsed_us for move in good_record.moves) < 300_000


async def _append(records: list[record_pb2.MatchRecord], spec: MatchSpec, pool: BotPool) -> None:
    records.append(await play_match(spec, pool))


def test_fault_kinds_are_defined_once() -> None:
    """``FaultKind`` is the definition: the wire enum, record names and metric labels match it."""
    from referee.codec.summaries import fault_name
    from referee.match import FaultKind
    from referee.metrics import FAULT_KINDS

    wire = {
        name.removeprefix("FAULT_KIND_"): number
        for name, number in record_pb2.FaultKind.items()
        if number != 0
    }
    assert wire == {kind.name: kind.value for kind in FaultKind}
    assert [fault_name(kind.value) for kind in FaultKind] == list(FAULT_KINDS)
