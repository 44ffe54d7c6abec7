"""Match records on the wire: built from a finished ``Match``, read back for re-simulation."""

from __future__ import annotations

from collections.abc import Sequence

from cardarena.game.v1 import record_pb2
from referee.codec.base import GameCodec
from referee.codec.common import game_settings
from referee.match import Match


def fault_name(kind: int) -> str:
    """``timeout`` for ``FAULT_KIND_TIMEOUT``: the name used in tables, metrics and the API."""
    return record_pb2.FaultKind.Name(kind).removeprefix("FAULT_KIND_").lower()  # type: ignore[arg-type]


def move_time_percentiles(times: Sequence[int]) -> tuple[int, int]:
    """(median, 95th percentile) of move times, as ``SeatSummary`` states them; (0, 0) if none."""
    if not times:
        return 0, 0
    ordered = sorted(times)
    count = len(ordered)
    half = count // 2
    p50 = ordered[half] if count % 2 else (ordered[half - 1] + ordered[half]) // 2
    return p50, ordered[min(count - 1, int(0.95 * count))]


def seat_summaries(
    num_seats: int, seat_times: Sequence[Sequence[int]], seat_faults: Sequence[int]
) -> list[record_pb2.SeatSummary]:
    """``SeatSummary`` per seat from each seat's move times and fault count."""
    summaries = []
    for seat in range(num_seats):
        times = seat_times[seat]
        p50, p95 = move_time_percentiles(times)
        summaries.append(
            record_pb2.SeatSummary(
                seat=seat,
                moves=len(times),
                faults=seat_faults[seat],
                elapsed_sum_us=sum(times),
                elapsed_p50_us=p50,
                elapsed_p95_us=p95,
            )
        )
    return summaries


def summaries_from_moves(
    record: record_pb2.MatchRecord, num_seats: int
) -> list[record_pb2.SeatSummary]:
    """The ``seat_summaries`` that ``record``'s moves give (for records without them, and to
    check the ones a record carries)."""
    times: list[list[int]] = [[] for _ in range(num_seats)]
    faults = [0] * num_seats
    for move in record.moves:
        if move.seat < num_seats:
            times[move.seat].append(move.elapsed_us)
            faults[move.seat] += move.fault != 0
    return seat_summaries(num_seats, times, faults)


def summaries_of(record: record_pb2.MatchRecord, num_seats: int) -> list[record_pb2.SeatSummary]:
    """The record's ``seat_summaries``, or the same summed up from its moves (records written
    before the referee added them)."""
    if len(record.seat_summaries) == num_seats:
        return list(record.seat_summaries)
    return summaries_from_moves(record, num_seats)


def match_record(
    match: Match,
    codec: GameCodec,
    *,
    match_id: str,
    seats: Sequence[record_pb2.SeatAssignment],
    started_at_us: int,
    finished_at_us: int,
    referee_version: str,
) -> record_pb2.MatchRecord:
    """Everything about ``match`` that a replay or an audit needs."""
    record = record_pb2.MatchRecord(
        match_id=match_id,
        settings=game_settings(match.game),
        seed=match.seed,
        seats=seats,
        status=match.status.value,  # type: ignore[arg-type]
        status_detail=match.status_detail,
        started_at_us=started_at_us,
        finished_at_us=finished_at_us,
        referee_version=referee_version,
        move_time_ms=match.time_control.move_time_ms,
        time_bank_ms=match.time_control.time_bank_ms,
    )
    num_seats = match.game.num_seats
    seat_times: list[list[int]] = [[] for _ in range(num_seats)]
    seat_faults = [0] * num_seats
    for move in match.moves:
        seat_times[move.seat].append(move.elapsed_us)
        if move.fault:
            seat_faults[move.seat] += 1
        record.moves.append(
            record_pb2.MoveRecord(
                index=move.index,
                seat=move.seat,
                action=codec.encode_action(move.action),
                elapsed_us=move.elapsed_us,
                fault=move.fault.kind.value if move.fault else 0,  # type: ignore[arg-type]
                fault_detail=move.fault.detail if move.fault else "",
                time_bank_ms=move.time_bank_ms,
            )
        )
    record.seat_summaries.extend(seat_summaries(num_seats, seat_times, seat_faults))
    outcome = match.outcome()
    if outcome is not None:
        record.outcome.scores.extend(outcome.scores)
        record.outcome.ranks.extend(outcome.ranks)
    if match.forfeited_seat is not None:
        record.forfeited_seat = match.forfeited_seat
    return record
