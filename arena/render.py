"""Readable tables for match records and game descriptions (rich).

Every string that came from outside (a bot's name, version or endpoint, a fault detail, a
record read from a file) is shown through ``literal``: as plain text, never as rich markup or an
emoji code, with control and format characters (escape sequences, bidi overrides, zero-width
characters) shown as escapes instead of reaching the terminal.
"""

from __future__ import annotations

import unicodedata

from rich.table import Table
from rich.text import Text

from cardarena.game.v1 import record_pb2
from referee.codec.summaries import fault_name, summaries_of
from referee.games.api import GameType
from referee.games.registry import codec_for, game_from_settings

_SHOWN_AS_ESCAPES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def literal(value: str, style: str = "") -> Text:
    """``value`` as plain text: no markup, no emoji codes, control and format characters
    escaped (``\\x1b``, ``\\u202e``)."""
    if any(unicodedata.category(char) in _SHOWN_AS_ESCAPES for char in value):
        value = "".join(
            char.encode("unicode_escape").decode("ascii")
            if unicodedata.category(char) in _SHOWN_AS_ESCAPES
            else char
            for char in value
        )
    return Text(value, style=style)


STATUS_NAMES = {
    record_pb2.MATCH_STATUS_COMPLETED: "completed",
    record_pb2.MATCH_STATUS_FORFEITED: "forfeited",
    record_pb2.MATCH_STATUS_VOIDED: "voided",
    record_pb2.MATCH_STATUS_ABORTED: "aborted",
}


def result_table(record: record_pb2.MatchRecord) -> Table:
    """One row per seat: bot, score, rank, moves, faults and median / p95 move time."""
    status = STATUS_NAMES.get(record.status, "unknown")
    table = Table(
        title=literal(
            f"{record.settings.game} match {record.match_id[:12]} (seed {record.seed}): {status}"
        ),
        caption=literal(record.status_detail),
    )
    columns = ("seat", "bot", "endpoint", "score", "rank", "moves", "faults", "median ms", "p95 ms")
    for column in columns:
        table.add_column(
            column,
            justify="right" if column not in ("bot", "endpoint") else "left",
            overflow="fold",  # names and addresses wrap, never cut
        )
    summaries = summaries_of(record, len(record.seats))
    for seat in record.seats:
        summary = summaries[seat.seat] if seat.seat < len(summaries) else None
        timed = summary is not None and summary.moves > 0
        has_outcome = len(record.outcome.scores) > seat.seat
        table.add_row(
            str(seat.seat),
            literal(f"{seat.bot_name} {seat.bot_version}".strip() or "?"),
            literal(seat.endpoint),
            str(record.outcome.scores[seat.seat]) if has_outcome else "-",
            str(record.outcome.ranks[seat.seat]) if has_outcome else "-",
            str(summary.moves if summary else 0),
            str(summary.faults if summary else 0),
            f"{summary.elapsed_p50_us / 1000:.1f}" if summary and timed else "-",
            f"{summary.elapsed_p95_us / 1000:.1f}" if summary and timed else "-",
        )
    return table


def moves_table(record: record_pb2.MatchRecord) -> Table:
    """Every move: seat, action in words, time, fault."""
    game = game_from_settings(record.settings)
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
            literal(state.describe_action(action)),
            f"{move.elapsed_us / 1000:.1f}",
            literal(f"{fault_name(move.fault)}: {move.fault_detail}" if move.fault else ""),
        )
        state.apply(action)
    return table


def games_table(game_types: list[GameType]) -> Table:
    """Every game with its seats and options."""
    table = Table(title="games")
    for column in ("game", "seats", "option", "default", "accepts"):
        table.add_column(column, overflow="fold")
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
