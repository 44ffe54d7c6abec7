"""Readable tables for match records and game descriptions (rich)."""

from __future__ import annotations

from rich.table import Table

from cardarena.game.v1 import record_pb2
from referee.codec import codec_for
from referee.codec.common import options_from_wire
from referee.codec.record import fault_name
from referee.games.api import GameType
from referee.games.registry import make_game

STATUS_NAMES = {
    record_pb2.MATCH_STATUS_COMPLETED: "completed",
    record_pb2.MATCH_STATUS_FORFEITED: "forfeited",
    record_pb2.MATCH_STATUS_VOIDED: "voided",
    record_pb2.MATCH_STATUS_ABORTED: "aborted",
}


def result_table(record: record_pb2.MatchRecord) -> Table:
    """One row per seat: bot, score, rank, faults and median move latency."""
    status = STATUS_NAMES.get(record.status, "unknown")
    table = Table(
        title=f"{record.settings.game} match {record.match_id[:12]} (seed {record.seed}): {status}",
        caption=record.status_detail,
    )
    for column in ("seat", "bot", "endpoint", "score", "rank", "moves", "faults", "median ms"):
        table.add_column(column, justify="right" if column not in ("bot", "endpoint") else "left")
    for seat in record.seats:
        moves = [m for m in record.moves if m.seat == seat.seat]
        faults = [m for m in moves if m.fault]
        latencies = sorted(m.elapsed_us for m in moves)
        median = f"{latencies[len(latencies) // 2] / 1000:.1f}" if latencies else "-"
        has_outcome = len(record.outcome.scores) > seat.seat
        table.add_row(
            str(seat.seat),
            f"{seat.bot_name} {seat.bot_version}".strip() or "?",
            seat.endpoint,
            str(record.outcome.scores[seat.seat]) if has_outcome else "-",
            str(record.outcome.ranks[seat.seat]) if has_outcome else "-",
            str(len(moves)),
            str(len(faults)),
            median,
        )
    return table


def moves_table(record: record_pb2.MatchRecord) -> Table:
    """Every move: seat, action in words, time, fault."""
    game = make_game(
        record.settings.game, record.settings.num_seats, options_from_wire(record.settings.options)
    )
    codec = codec_for(game)
    state = game.new_state(record.seed)
    table = Table(title="moves")
    for column in ("#", "seat", "action", "ms", "fault"):
        table.add_column(column)
    for move in record.moves:
        action = codec.decode_action(move.action)
        table.add_row(
            str(move.index),
            str(move.seat),
            state.describe_action(action),
            f"{move.elapsed_us / 1000:.1f}",
            f"{fault_name(move.fault)}: {move.fault_detail}" if move.fault else "",
        )
        state.apply(action)
    return table


def games_table(game_types: list[GameType]) -> Table:
    """Every game with its seats and options."""
    table = Table(title="games")
    for column in ("game", "seats", "option", "default", "accepts"):
        table.add_column(column)
    for game_type in game_types:
        seats = f"{game_type.min_seats}-{game_type.max_seats}"
        if not game_type.options:
            table.add_row(game_type.name, seats, "", "", "")
        for index, spec in enumerate(game_type.options):
            accepts = ", ".join(spec.choices) or (
                f"{spec.minimum}..{spec.maximum}" if spec.minimum is not None else ""
            )
            table.add_row(
                game_type.name if index == 0 else "",
                seats if index == 0 else "",
                spec.name,
                str(spec.default),
                accepts,
            )
    return table
