"""What a match record sums up per seat (move times, faults) and how faults are named.

Reads records only: no codec, no game. The store and the renderers use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardarena.game.v1 import record_pb2


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
