"""Tournaments the arena runs (``arena.tournament_play``): their configuration, progress and
every duplicate set played (schema 19).

A set is stored once, under its place in the plan (round, table, set index): the plan comes
from the tournament's seed, so a process that resumes a tournament after a restart plans the
same sets, skips those stored and plays the rest; a set delivered twice (two processes, a
retry) counts once. A set stores its rated rotations (seats as the crosstable names the
entrants, ranks, scores), all the crosstable needs.

While a set is played its rotations are rows of the match queue (``matches``, kind
'tournament', schema 21), under one set id and the deal's seed: 'pending' until a rotation
starts, 'playing' while it is played by the process named in ``claimed_by``, deleted once it
ends or its set is dropped. So ListMatches lists them, WatchMatch finds who plays them and
withholds a rotation while another of its deal is unfinished (``unfinished_rotations_sql``),
and a bot's limit of matches at once counts them with its ladder matches (``bots_may_start``,
the claim's count). No queue worker claims them: claims take only 'waiting' rows, and
``Store.recover`` leaves them to the tournament player (``drop_stale_matches``).

A rotation that finds a bot at its limit takes a reservation (schema 22: status 'reserved',
``reserved_at_us``), which claims count as a match of each of its bots: the ladder stops
filling those bots, so a busy ladder cannot starve the rotation, which needs all its bots free
at once. Reservations are served oldest first (``Reservation``): a rotation waits only for the
matches being played and the older reservations of its bots, so two reserving the same bots
never wait for each other. A reservation is its row's state: it ends with the rotation (started,
ended, dropped), and the rows of a gone process are dropped by the next lease holder.
"""

from __future__ import annotations

import enum
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.duplicate_scoring import Rotation
from arena.store.claims import bots_may_start
from arena.store.db import Database, Tx
from arena.store.repository import StoreError, now_us
from arena.tournament import SetResult
from cardarena.arena.v1 import arena_service_pb2 as pb

MAX_LISTED = 500
"""The most tournaments one listing gives (newest first)."""
TOURNAMENT_KIND = "tournament"
"""The ``matches.kind`` of a tournament's rotations."""
RESERVED = "reserved"
"""The status of a rotation waiting with a reservation of its bots' slots (schema 22)."""


class TournamentState(enum.StrEnum):
    """Where a tournament stands, as ``tournaments.state`` stores it."""

    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"


WIRE_STATES = {
    TournamentState.RUNNING: pb.TOURNAMENT_STATE_RUNNING,
    TournamentState.FINISHED: pb.TOURNAMENT_STATE_FINISHED,
    TournamentState.STOPPED: pb.TOURNAMENT_STATE_STOPPED,
}


@dataclass(frozen=True)
class TournamentRow:
    """A stored tournament (without its sets)."""

    tournament_id: str
    config: pb.TournamentConfig
    state: TournamentState
    sets_planned: int
    created_at_us: int
    finished_at_us: int


_COLUMNS = "tournament_id, config, state, sets_planned, created_at_us, finished_at_us"


def _row(row: Any) -> TournamentRow:
    tournament_id, config, state, planned, created, finished = row
    return TournamentRow(
        tournament_id,
        pb.TournamentConfig.FromString(bytes(config)),
        TournamentState(state),
        int(planned),
        int(created),
        int(finished),
    )


def rotations_json(rotations: tuple[Rotation, ...]) -> str:
    """A set's rotations as stored."""
    return json.dumps(
        [
            {"seats": r.seats, "ranks": r.ranks, "scores": r.scores, "lower": r.lower_score_wins}
            for r in rotations
        ],
        separators=(",", ":"),
    )


def rotations_from_json(text: str) -> tuple[Rotation, ...]:
    """A set's rotations back from ``rotations_json``."""
    return tuple(
        Rotation(
            tuple(str(seat) for seat in r["seats"]),
            tuple(int(rank) for rank in r["ranks"]),
            tuple(float(score) for score in r["scores"]),
            bool(r.get("lower", False)),
        )
        for r in json.loads(text)
    )


class Tournaments:
    """The tournaments on one ``Database`` (every method one transaction)."""

    def __init__(self, database: Database, clock: Callable[[], int] = now_us) -> None:
        self.db = database
        self.clock = clock

    def create(self, config: pb.TournamentConfig) -> TournamentRow:
        """Store a tournament (its config validated and completed by the caller), RUNNING."""
        tournament_id = "t" + uuid.uuid4().hex[:10]
        created = self.clock()
        with self.db.transaction() as tx:
            if tx.one("SELECT 1 FROM tournaments WHERE name = ?", (config.name,)):
                raise StoreError("ALREADY_EXISTS", f"a tournament named {config.name!r} exists")
            tx.execute(
                f"INSERT INTO tournaments (name, {_COLUMNS}) VALUES (?, ?, ?, ?, 0, ?, 0)",
                (
                    config.name,
                    tournament_id,
                    config.SerializeToString(),
                    TournamentState.RUNNING,
                    created,
                ),
            )
        return TournamentRow(tournament_id, config, TournamentState.RUNNING, 0, created, 0)

    def get(self, key: str) -> TournamentRow:
        """A tournament by id or name; NOT_FOUND if there is none."""
        with self.db.transaction() as tx:
            row = tx.one(
                f"SELECT {_COLUMNS} FROM tournaments WHERE tournament_id = ? OR name = ? "
                "ORDER BY created_at_us LIMIT 1",
                (key, key),
            )
        if row is None:
            raise StoreError("NOT_FOUND", f"no tournament {key!r}")
        return _row(row)

    def listed(self, state: TournamentState | None = None) -> list[TournamentRow]:
        """The tournaments (in ``state``, or all), newest first, at most ``MAX_LISTED``."""
        where, params = ("WHERE state = ? ", (state,)) if state is not None else ("", ())
        with self.db.transaction() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM tournaments {where}"
                f"ORDER BY created_at_us DESC, tournament_id LIMIT {MAX_LISTED}",
                params,
            )
        return [_row(row) for row in rows]

    def played_sets(self, tournament_id: str) -> list[SetResult]:
        """Every set stored for the tournament, in plan order."""
        with self.db.transaction() as tx:
            rows = tx.all(
                "SELECT round, table_index, set_index, rotations FROM tournament_sets "
                "WHERE tournament_id = ? ORDER BY round, table_index, set_index",
                (tournament_id,),
            )
        return [SetResult(r[0], r[1], r[2], rotations_from_json(r[3])) for r in rows]

    def record_set(self, tournament_id: str, result: SetResult) -> bool:
        """Store a played set of a running tournament; False (and nothing changes) if that set
        was stored already or the tournament is no longer running."""
        with self.db.transaction() as tx:
            if not self._running(tx, tournament_id):
                return False
            tx.execute(
                "INSERT INTO tournament_sets (tournament_id, round, table_index, set_index, "
                "rotations, matches, played_at_us) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tournament_id, round, table_index, set_index) DO NOTHING",
                (
                    tournament_id,
                    result.round,
                    result.table,
                    result.index,
                    rotations_json(result.rotations),
                    len(result.rotations),
                    self.clock(),
                ),
            )
            return tx.rowcount == 1

    def planned(self, tournament_id: str, sets_planned: int) -> None:
        """How many sets the tournament has planned so far (never lowered)."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE tournaments SET sets_planned = ? WHERE tournament_id = ? "
                "AND sets_planned < ?",
                (sets_planned, tournament_id, sets_planned),
            )

    def end(self, tournament_id: str, state: TournamentState) -> bool:
        """Mark a running tournament FINISHED or STOPPED; False if it was not running."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE tournaments SET state = ?, finished_at_us = ? WHERE tournament_id = ? "
                "AND state = ?",
                (state, self.clock(), tournament_id, TournamentState.RUNNING),
            )
            return tx.rowcount == 1

    # -- the rotations being played, in the match queue --------------------------------------

    def add_set(
        self, tournament_id: str, worker: str, rotations: list[tuple[str, list[str], int]]
    ) -> None:
        """Queue a set's rotations (match id, the bot in each seat, the deal's seed) for
        ``worker`` to play, 'pending', under one set id: each is withheld while another
        rotation of its deal is unfinished."""
        set_id = uuid.uuid4().hex
        created = self.clock()
        rows = [
            (match_id, tournament_id, set_id, TOURNAMENT_KIND, seed, ",".join(seats), worker, at)
            for at, (match_id, seats, seed) in enumerate(rotations, start=created)
        ]
        with self.db.transaction(durable=False) as tx:
            tx.many(
                "INSERT INTO matches (match_id, ladder_id, tournament_id, set_id, kind, seed, "
                "seats, status, claimed_by, created_at_us) "
                "VALUES (?, NULL, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                rows,
            )

    def start_match(self, match_id: str, worker: str, ladder_cap: int) -> bool | None:
        """Start a rotation of ``worker``'s if each of its bots is below its limit of matches
        at once (``bots_may_start``): True if started, False if a bot is at its limit (try
        again later), None if the row is gone (its set was dropped).

        The first time a bot is at its limit the rotation takes a reservation (status
        'reserved', ``reserved_at_us``): from then on every claim counts it against each of
        its bots' limits, so the ladder gives them no new match, while the rotation itself
        waits only for the matches being played and the reservations older than its own."""
        with self.db.transaction(durable=False) as tx:
            row = tx.one(
                "SELECT seats, status, reserved_at_us FROM matches WHERE match_id = ? "
                "AND status IN ('pending', 'reserved') AND claimed_by = ?",
                (match_id, worker),
            )
            if row is None:
                return None
            seats, status, reserved_at = row
            reservation = (int(reserved_at), match_id) if status == RESERVED else None
            if bots_may_start(tx, seats.split(","), ladder_cap, reservation):
                tx.execute(
                    "UPDATE matches SET status = 'playing', started_at_us = ?, "
                    "attempts = attempts + 1 WHERE match_id = ?",
                    (self.clock(), match_id),
                )
                return True
            if reservation is None:
                tx.execute(
                    "UPDATE matches SET status = ?, reserved_at_us = ? WHERE match_id = ?",
                    (RESERVED, self.clock(), match_id),
                )
            return False

    def end_matches(self, match_ids: list[str]) -> None:
        """Take rotations out of the queue: played (the set stores the result) or dropped."""
        if not match_ids:
            return
        with self.db.transaction(durable=False) as tx:
            among, params = tx.one_of("match_id", match_ids)
            sql = f"DELETE FROM matches WHERE kind = ? AND {among}"
            tx.execute(sql, (TOURNAMENT_KIND, *params))

    def drop_stale_matches(self, worker: str, playing: list[str]) -> int:
        """Delete the tournament rotations in the queue that are not ``worker``'s rows of a
        tournament it plays now (``playing``): what a process that stopped, died or lost the
        ``tournaments`` lease left (its sets are played again under new ids). For the lease
        holder only. How many were deleted."""
        keep = ", ".join("?" for _ in playing) or "''"  # no tournament id is empty
        with self.db.transaction(durable=False) as tx:
            tx.execute(
                "DELETE FROM matches WHERE kind = ? "
                "AND status IN ('pending', 'reserved', 'playing') "
                f"AND NOT (claimed_by = ? AND tournament_id IN ({keep}))",
                (TOURNAMENT_KIND, worker, *playing),
            )
            return max(0, tx.rowcount)

    @staticmethod
    def _running(tx: Tx, tournament_id: str) -> bool:
        row = tx.one("SELECT state FROM tournaments WHERE tournament_id = ?", (tournament_id,))
        return row is not None and row[0] == TournamentState.RUNNING
