"""The writes of finished matches, and what they read first, in one round trip per batch.

A finished match writes its status, its record, a row per seat and its bots' entries. On SQLite
(in-process) these are plain statements; on PostgreSQL one call of ``arena_finish`` (schema 17)
writes them all, so the client and the server pay for one statement, not ten (its rows as
JSON: one parameter for psycopg to turn into bytes instead of nineteen arrays). Several
finished matches are recorded in one transaction (group commit: one disk flush for them all).
Before their writes, the rows of their sets, their bots' entries, the other rotations' ranks
and their ladders' configs are read for the whole batch (``ResultBatch.read``): on PostgreSQL
sent together, one round trip, and every set's rows are locked before any entry, sets in set
order and entries in (ladder, bot) order, one order everywhere. The writes go with the commit:
two round trips per batch, whatever its size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    """What rating one finished match reads: its set's rows, its bots' entries, the seats of
    its set's other rated matches and its ladder's config, each waited for when first asked."""

    set_rows: Pending
    entries: Pending
    rated_seats: Pending
    config: Pending


SET_COLUMNS = "match_id, status, ladder_id, kind, seats, result_status, claimed_by, set_id"
"""A set row as ``ResultBatch`` reads it: ``SET_ROWS_SQL``'s columns and the set's id."""
RATED_IN = f"({', '.join(str(int(s)) for s in RATED_STATUSES)})"


@dataclass
class ResultBatch:
    """What a batch of finished matches reads before writing, read once for the batch under
    its locks, and kept up to date as each match of the batch is applied in turn: a second
    rotation of a set sees the first one finished and its ratings, as it would in a
    transaction of its own after the first one's.

    ``sets``: each set's rows (``SET_COLUMNS`` less the set id), by set id; ``entries``: μ, σ
    and when rated, by (ladder, bot); ``seats``: each rated match's (bot, rank, score) in seat
    order; ``configs``: each ladder's config."""

    sets: dict[str, list[tuple[Any, ...]]]
    set_of: dict[str, str]
    entries: dict[tuple[str, str], tuple[float, float, int | None]]
    seats: dict[str, list[tuple[str, int, float]]]
    configs: dict[str, bytes]

    @classmethod
    def read(cls, tx: Tx, match_ids: Sequence[str]) -> ResultBatch:
        """Read (and on PostgreSQL lock) what ``match_ids`` need: every row of their sets, in
        (set, match) order, then their bots' entries in (ladder, bot) order, one global order
        whatever the batch, so batches and single results never deadlock. On PostgreSQL the
        four reads are sent together: one round trip whatever the batch's size."""
        ids = sorted(set(match_ids))
        marks = ", ".join("?" for _ in ids)
        sets = f"SELECT set_id FROM matches WHERE match_id IN ({marks})"
        if tx.dialect == "postgres":
            set_rows = tx.send(
                f"SELECT {SET_COLUMNS} FROM matches WHERE set_id = ANY (ARRAY({sets})) "
                "ORDER BY set_id, match_id FOR UPDATE",
                ids,
            )
            entries = tx.send(  # by key: IN (SELECT …) let the planner scan the ladder
                "SELECT ladder_id, bot_id, mu, sigma, rated_us FROM entries WHERE ladder_id = "
                f"ANY (ARRAY(SELECT ladder_id FROM matches WHERE match_id IN ({marks}))) "
                "AND bot_id = ANY (ARRAY(SELECT unnest(string_to_array(seats, ',')) FROM "
                f"matches WHERE set_id = ANY (ARRAY({sets})))) "
                "ORDER BY ladder_id, bot_id FOR UPDATE",
                [*ids, *ids],
            )
            rated = tx.send(
                "SELECT match_id, bot_id, rank, score FROM match_seats WHERE match_id = ANY "
                f"(ARRAY(SELECT match_id FROM matches WHERE set_id = ANY (ARRAY({sets})) "
                f"AND result_status IN {RATED_IN})) ORDER BY match_id, seat",
                ids,
            )
            configs = tx.send(
                "SELECT ladder_id, config FROM ladders WHERE ladder_id IN "
                f"(SELECT ladder_id FROM matches WHERE match_id IN ({marks}))",
                ids,
            )
            return cls.of(set_rows.rows(), entries.rows(), rated.rows(), configs.rows())
        rows = tx.all(
            f"SELECT {SET_COLUMNS} FROM matches WHERE set_id IN ({sets}) ORDER BY set_id, match_id",
            ids,
        )
        ladders = sorted({row[2] for row in rows if row[2] is not None})
        bots = sorted({bot for row in rows for bot in row[4].split(",")})
        rated_ids = [row[0] for row in rows if row[5] in RATED_STATUSES]
        in_ladders, in_bots = ", ".join("?" for _ in ladders), ", ".join("?" for _ in bots)
        in_rated = ", ".join("?" for _ in rated_ids)
        return cls.of(
            rows,
            tx.all(
                "SELECT ladder_id, bot_id, mu, sigma, rated_us FROM entries WHERE ladder_id IN "
                f"({in_ladders}) AND bot_id IN ({in_bots})",
                [*ladders, *bots],
            )
            if ladders
            else [],
            tx.all(
                "SELECT match_id, bot_id, rank, score FROM match_seats WHERE match_id IN "
                f"({in_rated}) ORDER BY match_id, seat",
                rated_ids,
            )
            if rated_ids
            else [],
            tx.all(
                f"SELECT ladder_id, config FROM ladders WHERE ladder_id IN ({in_ladders})",
                ladders,
            )
            if ladders
            else [],
        )

    @classmethod
    def of(
        cls,
        set_rows: Sequence[Any],
        entries: Sequence[Any],
        rated_seats: Sequence[Any],
        configs: Sequence[Any],
    ) -> ResultBatch:
        """A batch from the rows its reads returned."""
        batch = cls({}, {}, {}, {}, {ladder: bytes(config) for ladder, config in configs})
        for *row, set_id in set_rows:
            batch.sets.setdefault(set_id, []).append(tuple(row))
            batch.set_of[row[0]] = set_id
        for ladder_id, bot_id, mu, sigma, rated_us in entries:
            batch.entries[(ladder_id, bot_id)] = (mu, sigma, rated_us)
        for match_id, bot_id, rank, score in rated_seats:
            batch.seats.setdefault(match_id, []).append((bot_id, rank, float(score)))
        return batch

    def set_rows(self, match_id: str) -> list[tuple[Any, ...]]:
        """The rows of ``match_id``'s set as they stand in the batch (none: no such match)."""
        set_id = self.set_of.get(match_id)
        return list(self.sets[set_id]) if set_id is not None else []

    def reads_for(self, match_id: str) -> SetReads:
        """``match_id``'s reads, as ``_finish`` takes them (after the batch's earlier
        matches)."""
        rows = self.set_rows(match_id)
        ladder_id = next(row[2] for row in rows if row[0] == match_id)
        bots = sorted({bot for row in rows for bot in row[4].split(",")})
        entries = [
            (bot, *self.entries[(ladder_id, bot)])
            for bot in bots
            if (ladder_id, bot) in self.entries
        ]
        rated = [
            (row[0], bot, rank, score)
            for row in rows
            if row[0] != match_id and row[5] in RATED_STATUSES
            for bot, rank, score in self.seats.get(row[0], [])
        ]
        config = self.configs.get(ladder_id) if ladder_id is not None else None
        return SetReads(
            Pending(lambda: list(rows)),
            Pending(lambda: entries),
            Pending(lambda: rated),
            Pending(lambda: [(config,)] if config is not None else []),
        )

    def finished(
        self,
        match_id: str,
        result_status: int,
        seated: Sequence[tuple[str, int, float]],
        ratings: dict[str, tuple[float, float]],
        rated_us: int,
    ) -> None:
        """Apply a match just written: finished with ``result_status``, its seats' (bot,
        rank, score) if it is rated, and the new (μ, σ) it set, for the batch's later matches
        to read."""
        set_id = self.set_of[match_id]
        self.sets[set_id] = [
            (row[0], "finished", *row[2:5], result_status, row[6]) if row[0] == match_id else row
            for row in self.sets[set_id]
        ]
        if result_status in RATED_STATUSES:
            self.seats[match_id] = list(seated)
        ladder_id = next(row[2] for row in self.sets[set_id] if row[0] == match_id)
        for bot, (mu, sigma) in ratings.items():
            self.entries[(ladder_id, bot)] = (mu, sigma, rated_us)


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
