"""The writes of finished matches, and what they read first, in one round trip per batch.

A finished match writes its status, its record, a row per seat and its bots' entries. Several
finished matches are recorded in one transaction (group commit: one disk flush for them all),
and their writes are gathered and sent together (``FinishedWrites``): on PostgreSQL one
statement for the whole batch, whatever its size (the rows as JSON: one parameter for
psycopg to turn into bytes instead of a dozen typed arrays; the records as one binary array;
schemas 17-22 called a PL/pgSQL ``arena_finish`` per match, five statements and a function
call each); on SQLite (in-process) plain statements. On PostgreSQL every statement's text is
the same whatever the batch's size (its keys one array: ``Tx.one_of``), so that psycopg
prepares it and the server does not parse and plan it again at every batch (planning was a
quarter of the server's time for a batch of 8).
Before their writes, the rows of their sets, their bots' entries, the other rotations' ranks
and their ladders' configs are read for the whole batch (``ResultBatch.read``): on PostgreSQL
sent together, one round trip, and every set's rows are locked before any entry, sets in set
order and entries in (ladder, bot) order, one order everywhere. The writes go with the commit:
two round trips per batch, whatever its size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.store.db import BINARY_PARAM, Pending, Tx
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

    def then(self, later: EntryChange) -> EntryChange:
        """This change and a later one to the same entry as one: the later rating, if it set
        one, and the sums of the counts."""
        rated = later.mu is not None
        return EntryChange(
            self.bot_id,
            later.mu if rated else self.mu,
            later.sigma if rated else self.sigma,
            self.matches + later.matches,
            self.first_places + later.first_places,
            self.played + later.played,
            self.moves + later.moves,
            self.faults + later.faults,
        )

    def row(self) -> tuple[str, float | None, float | None, int, int, int, int, int]:
        """Its fields in order (a row of ``FinishedWrites``' JSON of entry changes, after its
        ladder)."""
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
        wanted, params = tx.one_of("match_id", ids)  # on PostgreSQL the same text every time
        sets = f"SELECT set_id FROM matches WHERE {wanted}"
        if tx.dialect == "postgres":
            set_rows = tx.send(
                f"SELECT {SET_COLUMNS} FROM matches WHERE set_id = ANY (ARRAY({sets})) "
                "ORDER BY set_id, match_id FOR UPDATE",
                params,
            )
            entries = tx.send(  # by key: IN (SELECT …) let the planner scan the ladder
                "SELECT ladder_id, bot_id, mu, sigma, rated_us FROM entries WHERE ladder_id = "
                f"ANY (ARRAY(SELECT ladder_id FROM matches WHERE {wanted})) "
                "AND bot_id = ANY (ARRAY(SELECT unnest(string_to_array(seats, ',')) FROM "
                f"matches WHERE set_id = ANY (ARRAY({sets})))) "
                "ORDER BY ladder_id, bot_id FOR UPDATE",
                [*params, *params],
            )
            rated = tx.send(
                "SELECT match_id, bot_id, rank, score FROM match_seats WHERE match_id = ANY "
                f"(ARRAY(SELECT match_id FROM matches WHERE set_id = ANY (ARRAY({sets})) "
                f"AND result_status IN {RATED_IN})) ORDER BY match_id, seat",
                params,
            )
            configs = tx.send(
                "SELECT ladder_id, config FROM ladders WHERE ladder_id IN "
                f"(SELECT ladder_id FROM matches WHERE {wanted})",
                params,
            )
            return cls.of(set_rows.rows(), entries.rows(), rated.rows(), configs.rows())
        rows = tx.all(
            f"SELECT {SET_COLUMNS} FROM matches WHERE set_id IN ({sets}) ORDER BY set_id, match_id",
            params,
        )
        ladders = sorted({row[2] for row in rows if row[2] is not None})
        bots = sorted({bot for row in rows for bot in row[4].split(",")})
        rated_ids = [row[0] for row in rows if row[5] in RATED_STATUSES]
        entry_rows: list[Any] = []
        config_rows: list[Any] = []
        if ladders:
            in_ladders, ladder_params = tx.one_of("ladder_id", ladders)
            in_bots, bot_params = tx.one_of("bot_id", bots)
            entry_rows = tx.all(
                "SELECT ladder_id, bot_id, mu, sigma, rated_us FROM entries "
                f"WHERE {in_ladders} AND {in_bots}",
                [*ladder_params, *bot_params],
            )
            config_rows = tx.all(
                f"SELECT ladder_id, config FROM ladders WHERE {in_ladders}", ladder_params
            )
        return cls.of(rows, entry_rows, _rated_seats(tx, rated_ids), config_rows)

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


def _rated_seats(tx: Tx, rated_ids: Sequence[str]) -> list[Any]:
    """SQLite: each of ``rated_ids``' seats (match, bot, rank, score), in (match, seat) order."""
    if not rated_ids:
        return []
    among, params = tx.one_of("match_id", rated_ids)
    return tx.all(
        "SELECT match_id, bot_id, rank, score FROM match_seats "
        f"WHERE {among} ORDER BY match_id, seat",
        params,
    )


@dataclass
class FinishedWrites:
    """The writes of a batch's finished matches, gathered as each is applied and sent together
    (``flush``): each match's status, record and seat rows, and its bots' entries, a bot's
    changes over the batch's matches added into one (the ladder's last rating, the sums of its
    counts). On PostgreSQL one statement for the whole batch, sent with the commit; on SQLite
    (in-process) a statement a row."""

    matches: list[tuple[str, int, int]] = field(default_factory=list)
    """Each match's id, result status and when it finished."""
    records: list[bytes] = field(default_factory=list)
    seats: list[tuple[Any, ...]] = field(default_factory=list)
    """Each seat row with its match's id first and its finishing time after the latency sum."""
    entries: dict[tuple[str, str], EntryChange] = field(default_factory=dict)
    changed_us: int = 0

    def add(
        self,
        match_id: str,
        result_status: int,
        finished_us: int,
        record: bytes,
        seat_rows: Sequence[SeatRow],
        ladder_id: str | None,
        entries: Sequence[EntryChange],
        changed_us: int,
    ) -> None:
        """A finished match's writes: marked finished (``claimed_by`` stays: it tells which
        worker played it), its record and seat rows stored, ``entries`` added to the ladder's
        entries."""
        self.matches.append((match_id, result_status, finished_us))
        self.records.append(record)
        self.seats.extend((match_id, *row[:7], finished_us, *row[7:]) for row in seat_rows)
        for change in entries:
            key = (str(ladder_id), change.bot_id)
            before = self.entries.get(key)
            self.entries[key] = change if before is None else before.then(change)
        self.changed_us = max(self.changed_us, changed_us)

    def flush(self, tx: Tx) -> None:
        """Send the writes gathered (in a pipelined transaction they go with what is sent
        next, the commit at the latest), and start again empty."""
        if self.matches:
            (_flush_postgres if tx.dialect == "postgres" else _flush_sqlite)(tx, self)
        self.matches, self.records, self.seats, self.entries = [], [], [], {}


_MATCHES_FINISHED = """UPDATE matches m SET status = 'finished',
    result_status = (u.r->>1)::INTEGER, finished_at_us = (u.r->>2)::BIGINT, lease_until_us = NULL
    FROM jsonb_array_elements(?::jsonb) AS u (r)
    WHERE m.match_id = u.r->>0 AND m.match_id = ANY (?)"""
"""PostgreSQL: the batch's matches marked finished (found by key: the planner cannot tell how
many rows the JSON array has, and would scan every match to join them)."""

_ENTRIES_ADDED = """UPDATE entries e
    SET mu = COALESCE(u.mu, e.mu), sigma = COALESCE(u.sigma, e.sigma),
    matches = e.matches + u.matches, first_places = e.first_places + u.firsts,
    scheduled = e.scheduled + u.played, moves_played = e.moves_played + u.moves,
    faults = e.faults + u.faults, changed_us = ?,
    rated_us = CASE WHEN u.mu IS NULL THEN e.rated_us ELSE ? END
    FROM (SELECT c->>0 AS ladder_id, c->>1 AS bot_id, (c->>2)::DOUBLE PRECISION AS mu,
        (c->>3)::DOUBLE PRECISION AS sigma, (c->>4)::INTEGER AS matches,
        (c->>5)::INTEGER AS firsts, (c->>6)::INTEGER AS played, (c->>7)::BIGINT AS moves,
        (c->>8)::BIGINT AS faults FROM jsonb_array_elements(?::jsonb) AS c) AS u
    WHERE e.ladder_id = u.ladder_id AND e.bot_id = u.bot_id
    AND e.ladder_id = ANY (?) AND e.bot_id = ANY (?)"""
"""PostgreSQL: the batch's entry changes added, the entries found by key."""

_SEATS_INSERT = """INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults,
    latency_sum_us, finished_at_us, p50_us, p95_us, mu, sigma)
    SELECT r->>0, (r->>1)::INTEGER, r->>2, (r->>3)::INTEGER, (r->>4)::BIGINT,
        (r->>5)::INTEGER, (r->>6)::INTEGER, (r->>7)::BIGINT, (r->>8)::BIGINT, (r->>9)::BIGINT,
        (r->>10)::BIGINT, (r->>11)::DOUBLE PRECISION, (r->>12)::DOUBLE PRECISION
    FROM jsonb_array_elements(?::jsonb) AS r"""
"""PostgreSQL: the batch's seat rows (as JSON: psycopg turns one text into bytes faster than
thirteen typed arrays)."""


def _flush_postgres(tx: Tx, writes: FinishedWrites) -> None:
    """``FinishedWrites.flush`` on PostgreSQL: one statement whatever the batch's size, its
    writes as data-modifying CTEs (each runs once, whether the statement reads it or not). The
    records and seat rows are of matches the batch read and locked: since schema 24 no foreign
    key checks that again, row by row."""
    match_ids = [match_id for match_id, _, _ in writes.matches]
    parts: list[tuple[str, tuple[Any, ...]]] = [
        (_MATCHES_FINISHED, (json.dumps(writes.matches), match_ids))
    ]
    # The records as one array sent in binary: the statement's text stays the same whatever
    # the batch's size (prepared once, not parsed and planned at every batch).
    parts.append(
        (
            "INSERT INTO records (match_id, record) "
            f"SELECT * FROM unnest(?::TEXT[], {BINARY_PARAM}::BYTEA[])",
            (match_ids, writes.records),
        )
    )
    if writes.entries:
        rows = [(ladder, *change.row()) for (ladder, _), change in sorted(writes.entries.items())]
        ladders = sorted({ladder for ladder, _ in writes.entries})
        bots = sorted({bot for _, bot in writes.entries})
        changed = writes.changed_us
        parts.append((_ENTRIES_ADDED, (changed, changed, json.dumps(rows), ladders, bots)))
    if writes.seats:
        parts.append((_SEATS_INSERT, (json.dumps(writes.seats),)))
    ctes = ", ".join(f"w{n} AS ({sql})" for n, (sql, _) in enumerate(parts))
    tx.execute(f"WITH {ctes} SELECT 1", [param for _, params in parts for param in params])


def _flush_sqlite(tx: Tx, writes: FinishedWrites) -> None:
    """``FinishedWrites.flush`` on SQLite: a statement a row (in-process, nothing to save)."""
    tx.many(
        "UPDATE matches SET status = 'finished', result_status = ?, finished_at_us = ?, "
        "lease_until_us = NULL WHERE match_id = ?",
        [(status, finished, match_id) for match_id, status, finished in writes.matches],
    )
    tx.many(
        "INSERT INTO records (match_id, record) VALUES (?, ?)",
        [
            (match_id, record)
            for (match_id, _, _), record in zip(writes.matches, writes.records, strict=True)
        ],
    )
    changed = writes.changed_us
    tx.many(
        "UPDATE entries SET mu = COALESCE(?, mu), sigma = COALESCE(?, sigma), "
        "matches = matches + ?, first_places = first_places + ?, scheduled = scheduled + ?, "
        "moves_played = moves_played + ?, faults = faults + ?, changed_us = ?, "
        "rated_us = CASE WHEN ? IS NULL THEN rated_us ELSE ? END "
        "WHERE ladder_id = ? AND bot_id = ?",
        [
            (*e.row()[1:], changed, e.mu, changed, ladder_id, bot_id)
            for (ladder_id, bot_id), e in sorted(writes.entries.items())
        ],
    )
    tx.many(
        "INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults, "
        "latency_sum_us, finished_at_us, p50_us, p95_us, mu, sigma) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        writes.seats,
    )
