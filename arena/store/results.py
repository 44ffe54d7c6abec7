"""The writes of a finished match, and what PostgreSQL reads for them in one round trip.

A finished match writes its status, its record, a row per seat and its bots' entries. On SQLite
(in-process) these are plain statements; on PostgreSQL one call of ``arena_finish`` (schema 17)
writes them all, so the client and the server pay for one statement, not ten (its rows as
JSON: one parameter for psycopg to turn into bytes instead of nineteen arrays). Before it, on
PostgreSQL, the set's rows, its bots' entries, the other rotations' ranks and the ladder's
config are sent together (``send_set_reads``): one round trip, and the set's rows are locked
before its entries, in bot order, as everywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from arena.store.db import Pending, Tx
from cardarena.game.v1 import record_pb2

RATED_STATUSES = (record_pb2.MATCH_STATUS_COMPLETED, record_pb2.MATCH_STATUS_FORFEITED)
"""The statuses of a match that rate it."""

SET_ROWS_SQL = (
    "SELECT match_id, status, ladder_id, kind, seats, result_status, claimed_by "
    "FROM matches WHERE set_id = (SELECT set_id FROM matches WHERE match_id = ?) "
    "ORDER BY match_id"
)
"""Every match of a match's set (id, status, ladder, kind, seats, result status, claimed by)."""


@dataclass(frozen=True)
class EntryChange:
    """What a finished match adds to one bot's entry: its new rating (None: unchanged), rated
    matches and first places (of a set it completed), matches, moves and faults played."""

    bot_id: str
    mu: float | None
    sigma: float | None
    matches: int
    first_places: int
    played: int
    moves: int
    faults: int

    def row(self) -> tuple[str, float | None, float | None, int, int, int, int, int]:
        """Its fields in order (``arena_finish``'s JSON row)."""
        return (
            self.bot_id,
            self.mu,
            self.sigma,
            self.matches,
            self.first_places,
            self.played,
            self.moves,
            self.faults,
        )


SeatRow = tuple[
    int, str, int, int, int, int, int, int | None, int | None, float | None, float | None
]
"""A seat's row: seat, bot, rank, score, moves, faults, latency sum, p50, p95, μ and σ after."""


@dataclass(frozen=True)
class SetReads:
    """The reads of ``send_set_reads``, each waited for when first asked."""

    set_rows: Pending
    entries: Pending
    rated_seats: Pending
    config: Pending


def send_set_reads(tx: Tx, match_id: str) -> SetReads:
    """Send, in one round trip (a pipelined PostgreSQL transaction): the set's rows, locked;
    the entries of every bot of the set in its ladder, locked in bot order (the writes lock
    them anyway; found by key: ``IN (SELECT …)`` let the planner scan every entry of the
    ladder); the seats of the set's other rated matches; the ladder's config."""
    of_set = "(SELECT set_id FROM matches WHERE match_id = ?)"
    of_ladder = "(SELECT ladder_id FROM matches WHERE match_id = ?)"
    return SetReads(
        tx.send(SET_ROWS_SQL + " FOR UPDATE", (match_id,)),
        tx.send(
            f"SELECT bot_id, mu, sigma, rated_us FROM entries WHERE ladder_id = {of_ladder} "
            "AND bot_id = ANY (ARRAY(SELECT unnest(string_to_array(seats, ',')) FROM matches "
            f"WHERE set_id = {of_set})) ORDER BY bot_id FOR UPDATE",
            (match_id, match_id),
        ),
        tx.send(
            "SELECT s.match_id, s.bot_id, s.rank, s.score FROM match_seats s WHERE s.match_id "
            f"IN (SELECT match_id FROM matches WHERE set_id = {of_set} AND match_id <> ? "
            f"AND result_status IN ({', '.join(str(int(s)) for s in RATED_STATUSES)})) "
            "ORDER BY s.match_id, s.seat",
            (match_id, match_id),
        ),
        tx.send(f"SELECT config FROM ladders WHERE ladder_id = {of_ladder}", (match_id,)),
    )


FINISH_CALL = "SELECT arena_finish(?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb)"
"""The call of ``arena_finish`` (schema 17): the seat rows and entry changes as JSON."""


def write_finished(
    tx: Tx,
    match_id: str,
    result_status: int,
    finished_us: int,
    record: bytes,
    seat_rows: Sequence[SeatRow],
    ladder_id: str | None,
    entries: Sequence[EntryChange],
    changed_us: int,
) -> None:
    """Mark the match finished (``claimed_by`` stays: it tells which worker played it), store
    its record and seat rows, and add ``entries`` to the ladder's entries."""
    if tx.dialect == "postgres":
        seats_json, entries_json = json.dumps(seat_rows), json.dumps([e.row() for e in entries])
        tx.execute(
            FINISH_CALL,
            (
                match_id,
                result_status,
                finished_us,
                record,
                seats_json,
                ladder_id,
                changed_us,
                entries_json,
            ),
        )
        return
    tx.execute(
        "UPDATE matches SET status = 'finished', result_status = ?, finished_at_us = ?, "
        "lease_until_us = NULL WHERE match_id = ?",
        (result_status, finished_us, match_id),
    )
    tx.execute("INSERT INTO records (match_id, record) VALUES (?, ?)", (match_id, record))
    if entries:
        tx.many(
            "UPDATE entries SET mu = COALESCE(?, mu), sigma = COALESCE(?, sigma), "
            "matches = matches + ?, first_places = first_places + ?, scheduled = scheduled + ?, "
            "moves_played = moves_played + ?, faults = faults + ?, changed_us = ?, "
            "rated_us = CASE WHEN ? IS NULL THEN rated_us ELSE ? END "
            "WHERE ladder_id = ? AND bot_id = ?",
            [
                (
                    e.mu,
                    e.sigma,
                    e.matches,
                    e.first_places,
                    e.played,
                    e.moves,
                    e.faults,
                    changed_us,
                    e.mu,
                    changed_us,
                    ladder_id,
                    e.bot_id,
                )
                for e in entries
            ],
        )
    tx.many(
        "INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults, "
        "latency_sum_us, finished_at_us, p50_us, p95_us, mu, sigma) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(match_id, *row[:7], finished_us, *row[7:]) for row in seat_rows],
    )
