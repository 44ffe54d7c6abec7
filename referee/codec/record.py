"""Match records on the wire: built from a finished ``Match``, read back for re-simulation.

The summaries a record carries (per-seat move times, fault names) are in ``summaries``, which
needs no codec: the store reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardarena.game.v1 import record_pb2
from referee.codec.base import GameCodec
from referee.codec.common import game_settings
from referee.codec.summaries import (
    fault_name,
    move_time_percentiles,
    seat_summaries,
    summaries_from_moves,
    summaries_of,
)
from referee.match import Match

__all__ = [
    "fault_name",
    "match_record",
    "move_time_percentiles",
    "seat_summaries",
    "summaries_from_moves",
    "summaries_of",
]


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
    add_move, encode_action = record.moves.add, codec.encode_action
    for index, seat, action, elapsed_us, fault, bank_ms in match.moves.rows():
        seat_times[seat].append(elapsed_us)
        move = add_move(
            index=index,
            seat=seat,
            action=encode_action(action),
            elapsed_us=elapsed_us,
            time_bank_ms=bank_ms,
        )
        if fault is not None:
            seat_faults[seat] += 1
            move.fault, move.fault_detail = fault.kind.value, fault.detail  # type: ignore[assignment]
    record.seat_summaries.extend(seat_summaries(num_seats, seat_times, seat_faults))
    outcome = match.outcome()
    if outcome is not None:
        record.outcome.scores.extend(outcome.scores)
        record.outcome.ranks.extend(outcome.ranks)
    if match.forfeited_seat is not None:
        record.forfeited_seat = match.forfeited_seat
    return record
