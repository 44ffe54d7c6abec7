"""Listing matches (ListMatches): those being played, then the finished ones, newest first.

Pages follow each other by keyset, not by offset: a page token holds the sort key of the last
match given, so every page reads only its own rows however long the history. Matches being
played are few (at most every process's workers, and the tournaments' matches at once) and
read by status (``matches_by_status``, ``matches_by_ladder_finished``), the latest scheduled
first; finished matches the latest finished first, through ``matches_finished`` and
``matches_by_ladder_finished`` (schema 13) or, for one bot, ``match_seats_by_bot``. A
tournament's match is listed while it is played, with its tournament's id (schema 21): it
keeps no record once over, its tournament's crosstable does. A rotation of a duplicate deal
lists no rank or score until its whole set has finished, under the store's one statement of
that rule (``unfinished_rotations_sql``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.store.claims import HOUSE_RANDOM
from arena.store.db import Database, Tx
from arena.store.repository import StoreError, unfinished_rotations_sql
from cardarena.arena.v1 import arena_service_pb2 as pb

DEFAULT_PAGE = 20
MAX_PAGE = 100
TOKEN_CHARS = 256
"""The longest page token this arena gives (a sort key, a match id and a digest, encoded)."""

PHASES = ("playing", "finished")
"""The phases a listing goes through, in its order."""

PHASE_WIRE = {"playing": pb.MATCH_PHASE_PLAYING, "finished": pb.MATCH_PHASE_FINISHED}
_TOKEN_VERSION = 1


@dataclass(frozen=True)
class MatchQuery:
    """What to list: filters (a ladder's id or name, a bot's id, the phases) and the page."""

    ladder: str = ""
    bot_id: str = ""
    phases: tuple[str, ...] = PHASES
    page_size: int = DEFAULT_PAGE
    page_token: str = ""

    def filters(self) -> str:
        """A digest of the filters, carried by the page tokens: a token is for one listing."""
        text = "\x00".join((self.ladder, self.bot_id, *self.phases))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class PagePosition:
    """Where a page ends: in ``phase``, after the match ``match_id`` whose sort key is
    ``at_us`` (None: before the phase's first match)."""

    phase: str
    at_us: int | None
    match_id: str
    filters: str

    def token(self) -> str:
        """The opaque page token for this position."""
        raw = json.dumps([_TOKEN_VERSION, self.phase, self.at_us, self.match_id, self.filters])
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def parse(cls, token: str, filters: str) -> PagePosition:
        """The position of a token this arena gave for the listing with ``filters``;
        INVALID_ARGUMENT for anything else."""
        try:
            if len(token) > TOKEN_CHARS:
                raise ValueError("too long")
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            version, phase, at_us, match_id, digest = json.loads(raw)
            valid = (
                version == _TOKEN_VERSION
                and phase in PHASES
                and (at_us is None or (type(at_us) is int and 0 <= at_us < 2**63))
                and isinstance(match_id, str)
                and len(match_id) <= 64
                and isinstance(digest, str)
            )
        except (ValueError, TypeError, binascii.Error):
            valid = False
        if not valid:
            raise StoreError(
                "INVALID_ARGUMENT",
                "page_token is not one this arena gave: give the next_page_token of the "
                "previous page, or none for the first page",
            )
        if digest != filters:
            raise StoreError(
                "INVALID_ARGUMENT",
                "page_token belongs to a listing with other filters: give the same ladder, "
                "bot_id and phase as for the first page",
            )
        return cls(phase, at_us, match_id, digest)


@dataclass(frozen=True)
class _Row:
    match_id: str
    ladder_id: str
    kind: str
    seats: list[str]
    phase: str
    at_us: int
    """The sort key: when it was scheduled (playing) or when it finished."""
    started_at_us: int
    finished_at_us: int
    status: int
    unfinished_rotations: int
    tournament_id: str


def _page(rows: Sequence[Any], phase: str) -> list[_Row]:
    return [
        _Row(
            match_id=row[0],
            ladder_id=row[1],
            kind=row[2],
            seats=row[3].split(","),
            phase=phase,
            at_us=int(row[4]),
            started_at_us=int(row[5] or 0),
            finished_at_us=int(row[6] or 0),
            status=int(row[7] or 0),
            unfinished_rotations=int(row[8]),
            tournament_id=row[9],
        )
        for row in rows
    ]


def _like_seat(bot_id: str) -> str:
    """A LIKE pattern (escape ``\\``) for ``bot_id`` as one of a comma-joined seat list."""
    escaped = bot_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%,{escaped},%"


class Listings:
    """Read-only listings of matches on the arena's database."""

    def __init__(self, database: Database) -> None:
        self.db = database

    def matches(self, query: MatchQuery) -> tuple[list[pb.ListedMatch], str]:
        """A page of matches, newest first, and the token of the next page ('' if none).
        NOT_FOUND for a ladder or bot that does not exist."""
        filters = query.filters()
        position = PagePosition.parse(query.page_token, filters) if query.page_token else None
        size = max(1, min(query.page_size or DEFAULT_PAGE, MAX_PAGE))
        phases = [phase for phase in PHASES if phase in query.phases]
        if position is not None:
            phases = phases[phases.index(position.phase) :] if position.phase in phases else []
        with self.db.transaction() as tx:
            ladder_id = self._ladder_id(tx, query.ladder) if query.ladder else None
            if query.bot_id:
                self._require_bot(tx, query.bot_id)
            rows: list[_Row] = []
            after: PagePosition | None = None
            for phase in phases:
                start = position if position is not None and position.phase == phase else None
                wanted = size - len(rows)
                found = self._rows(tx, phase, ladder_id, query.bot_id, start, wanted + 1)
                rows.extend(found[:wanted])
                if len(found) > wanted:  # more to come: the next page starts after the last
                    last = rows[-1] if wanted else None
                    after = PagePosition(
                        phase,
                        last.at_us if last else None,
                        last.match_id if last else "",
                        filters,
                    )
                    break
            listed = self._listed(tx, rows)
        return listed, after.token() if after else ""

    def match(self, match_id: str) -> pb.ListedMatch:
        """One match as a listing shows it (being played or finished: its ladder, its seats'
        bots and, unless withheld, their ranks and scores); NOT_FOUND for any other."""
        with self.db.transaction() as tx:
            row = tx.one(
                "SELECT m.match_id, COALESCE(m.ladder_id, ''), m.kind, m.seats, "
                "COALESCE(m.finished_at_us, m.created_at_us), m.started_at_us, "
                f"m.finished_at_us, m.result_status, {unfinished_rotations_sql('m')}, "
                "COALESCE(m.tournament_id, ''), m.status "
                "FROM matches m WHERE m.match_id = ? AND m.status IN ('playing', 'finished')",
                (match_id,),
            )
            if row is None:
                raise StoreError("NOT_FOUND", f"no match {match_id!r} finished or in play")
            return self._listed(tx, _page([row[:10]], str(row[10])))[0]

    @staticmethod
    def _ladder_id(tx: Tx, key: str) -> str:
        row = tx.one(
            "SELECT ladder_id FROM ladders WHERE ladder_id = ? OR name = ? "
            "ORDER BY created_at_us LIMIT 1",
            (key, key),
        )
        if row is None:
            raise StoreError("NOT_FOUND", f"no ladder {key!r}")
        return str(row[0])

    @staticmethod
    def _require_bot(tx: Tx, bot_id: str) -> None:
        if tx.one("SELECT 1 FROM bots WHERE bot_id = ?", (bot_id,)) is None:
            raise StoreError("NOT_FOUND", f"no bot {bot_id!r}")

    @staticmethod
    def _rows(
        tx: Tx,
        phase: str,
        ladder_id: str | None,
        bot_id: str,
        after: PagePosition | None,
        limit: int,
    ) -> list[_Row]:
        """Up to ``limit`` matches of ``phase`` after the position, newest first."""
        conditions: list[str] = []
        params: list[Any] = []
        if ladder_id is not None:
            conditions.append("m.ladder_id = ?")
            params.append(ladder_id)
        if phase == "playing":
            key, source = "m.created_at_us", "matches m"
            conditions.insert(0, "m.status = 'playing'")
            if bot_id:  # few matches are being played: their seats are read, not indexed
                conditions.append("(',' || m.seats || ',') LIKE ? ESCAPE '\\'")
                params.append(_like_seat(bot_id))
        elif bot_id:
            key = "s.finished_at_us"
            source = "match_seats s JOIN matches m ON m.match_id = s.match_id"
            conditions[:0] = ["s.bot_id = ?", "m.status = 'finished'"]
            params.insert(0, bot_id)
        else:
            key, source = "m.finished_at_us", "matches m"
            conditions.insert(0, "m.status = 'finished'")
        if after is not None and after.at_us is not None:
            # The sort key's column bounds the index range; the match id breaks ties.
            conditions.append(f"{key} <= ? AND ({key} < ? OR m.match_id < ?)")
            params.extend((after.at_us, after.at_us, after.match_id))
        columns = (
            f"m.match_id, COALESCE(m.ladder_id, ''), m.kind, m.seats, {key}, m.started_at_us, "
            f"m.finished_at_us, m.result_status, {unfinished_rotations_sql('m')}, "
            "COALESCE(m.tournament_id, '')"
        )
        found = tx.all(
            f"SELECT {columns} FROM {source} "
            f"WHERE {' AND '.join(conditions)} ORDER BY {key} DESC, m.match_id DESC LIMIT ?",
            (*params, limit),
        )
        # A bot has one seat per match (matchmaking picks distinct bots): no seat row repeats
        # a match, so no DISTINCT, which would keep the index from giving the order.
        return _page(found, phase)

    @staticmethod
    def _listed(tx: Tx, rows: Sequence[_Row]) -> list[pb.ListedMatch]:
        """The wire form of a page: seats named, finished ones with ranks and scores unless
        withheld; a rotation in play whose deal other rotations still play is marked withheld
        too (``WatchMatch`` refuses its moves, so pages do not link to them)."""
        bots = sorted({bot for row in rows for bot in row.seats} - {HOUSE_RANDOM})
        names: dict[str, tuple[str, str]] = {}
        if bots:
            among, params = tx.one_of("b.bot_id", bots)
            for bot_id, name, owner in tx.all(
                "SELECT b.bot_id, b.name, o.name FROM bots b JOIN owners o "
                f"ON o.owner_id = b.owner_id WHERE {among}",
                params,
            ):
                names[bot_id] = (name, owner)
        shown = [r.match_id for r in rows if r.phase == "finished" and not r.unfinished_rotations]
        results: dict[tuple[str, int], tuple[int, int]] = {}
        if shown:
            among, params = tx.one_of("match_id", shown)
            for match_id, seat, rank, score in tx.all(
                f"SELECT match_id, seat, rank, score FROM match_seats WHERE {among}", params
            ):
                results[(match_id, seat)] = (int(rank), int(score))
        listed = []
        for row in rows:
            match = pb.ListedMatch(
                match_id=row.match_id,
                ladder_id=row.ladder_id,
                kind=row.kind,
                phase=PHASE_WIRE[row.phase],
                status=row.status,  # type: ignore[arg-type]
                started_at_us=row.started_at_us,
                finished_at_us=row.finished_at_us,
                # Finished: its ranks and scores; in play: its live moves (WatchMatch).
                withheld=row.unfinished_rotations > 0,
                tournament_id=row.tournament_id,
            )
            for seat, bot_id in enumerate(row.seats):
                name, owner = names.get(bot_id, ("", ""))
                rank, score = results.get((row.match_id, seat), (0, 0))
                match.seats.append(
                    pb.ListedSeat(
                        seat=seat, bot_id=bot_id, bot_name=name, owner=owner, rank=rank, score=score
                    )
                )
            listed.append(match)
        return listed
