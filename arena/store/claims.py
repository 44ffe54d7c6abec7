"""Claims: which waiting matches a worker may start, and taking them, several in one transaction.

A match may start when its ladder is below its concurrency and each of its bots below its
limit of matches at once (``match_limit``), counted from the queue: every match being played
(ladder, validation, tournament) and every reserved tournament rotation, so whatever puts a
match back frees its slots with no count to keep right. One copy of these rules, in Python,
for both databases (``claim_in``, ``bots_may_start``).

A batch of claims reads the matches being played once, and the waiting matches a page at a
time in queue order; each claim in turn takes the oldest match it accepts that fits the counts
so far. On SQLite the transaction holds the only write lock, so that is all. On PostgreSQL
other processes claim at the same time, so the matches picked (and as many spares) are locked
with SKIP LOCKED (never waits: two claimers take different matches), then their ladders' rows
and their bots' rows, each in key order (the one order every writer of those rows keeps), and
the matches being played are counted again; the claims are then made again from the locked
matches only, with those counts. Three round trips per batch, whatever its size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.store.db import Pending, Tx

HOUSE_RANDOM = "house:random"
"""Seat value for the arena's own random bot (validation matches)."""

DEFAULT_MAX_MATCHES_PER_BOT = 4
"""Matches one bot plays at once when its ladder sets no cap (``max_matches_per_bot`` 0), and
for validation matches: the number a ladder plays at once by default, so one bot can fill a
default ladder but not a whole arena's workers."""

MAX_MATCHES_PER_BOT_LIMIT = 1000
"""The largest cap a ladder may set, and the largest announcement stored (a bot may announce
any uint32)."""

UNANNOUNCED_MAX_MATCHES = 1
"""Matches at once for a bot the arena has not heard announce a limit yet (a new bot's first
validation match, a bot stored before announcements existed): the one that asks it."""

CLAIM_PAGE = 64
"""Waiting matches a claim reads at a time while looking for ones whose bots are all free."""


def match_limit(announced: int | None, ladder_cap: int) -> int:
    """How many matches a bot may be playing at once for one more to start: what it announced
    (None: not heard yet; 0: no preference) within the ladder's cap (0: the default)."""
    cap = min(ladder_cap or DEFAULT_MAX_MATCHES_PER_BOT, MAX_MATCHES_PER_BOT_LIMIT)
    if announced is None:
        return min(cap, UNANNOUNCED_MAX_MATCHES)
    return min(announced, cap) if announced > 0 else cap


Reservation = tuple[int, str]
"""A reserved tournament rotation's place in line (``reserved_at_us``, match id): older
reservations come first, ties by match id, so any two are ordered the same way everywhere."""


@dataclass(frozen=True)
class Playing:
    """The matches being played now: how many each bot is in (every ladder, validation and
    tournament match, and the reserved tournament rotations counted), and how many each
    ladder has."""

    by_bot: Counter[str]
    by_ladder: Counter[str]


@dataclass(frozen=True)
class Claim:
    """A match a worker has claimed: what to play and where the bots are."""

    match_id: str
    ladder_id: str | None
    kind: str
    seed: int
    seats: tuple[str, ...]
    endpoints: tuple[str, ...]


@dataclass(frozen=True)
class Candidate:
    """A waiting match as a claim weighs it and takes it."""

    match_id: str
    ladder_id: str | None
    kind: str
    seed: int
    seats: tuple[str, ...]
    cap: int
    """Its ladder's cap of matches per bot (0: the default)."""
    concurrency: int
    """Its ladder's limit of matches at once (0: none)."""
    place: tuple[int, str]
    """Its place in the queue (created at, match id): where the next page starts."""

    @property
    def bots(self) -> tuple[str, ...]:
        """Its bots, each once, the house's seat left out, in key order."""
        return tuple(sorted(set(self.seats) - {HOUSE_RANDOM}))

    @property
    def ladder(self) -> tuple[str, int] | None:
        """Its ladder and that ladder's concurrency, if it has one."""
        return (self.ladder_id, self.concurrency) if self.ladder_id is not None else None


def fits(
    bots: Sequence[str],
    cap: int,
    ladder: tuple[str, int] | None,
    playing: Playing,
    announced: dict[str, int | None],
) -> bool:
    """Whether each of ``bots`` may start one more match of a ladder with cap ``cap``, and the
    ladder (id, concurrency; 0: no limit) one more match."""
    if ladder is not None and 0 < ladder[1] <= playing.by_ladder[ladder[0]]:
        return False
    return all(playing.by_bot[bot] < match_limit(announced.get(bot), cap) for bot in bots)


PLAYING_SQL = (
    "SELECT ladder_id, seats, status, reserved_at_us, match_id FROM matches "
    "WHERE status IN ('playing', 'reserved')"
)
"""The matches being played and the reserved rotations (``playing_of``'s rows)."""


def playing_of(rows: Sequence[Sequence[Any]], behind: Reservation | None = None) -> Playing:
    """The matches being played now (``PLAYING_SQL``'s rows), by bot and by ladder; a bot's
    count includes its reserved tournament rotations (all of them, or with ``behind`` only
    those ahead of that reservation). A reservation takes no slot of a ladder's concurrency."""
    counted = [
        row for row in rows if row[2] == "playing" or behind is None or (row[3], row[4]) < behind
    ]
    return Playing(
        Counter(bot for row in counted for bot in set(row[1].split(",")) - {HOUSE_RANDOM}),
        Counter(row[0] for row in counted if row[0] is not None and row[2] == "playing"),
    )


def send_announced(tx: Tx, bots: Iterable[str]) -> Pending | None:
    """Ask what each of ``bots`` announced (``bots.max_matches``; ``announced_of`` reads the
    answer); None when there are none to ask about."""
    wanted = sorted(set(bots))
    if not wanted:
        return None
    among, params = tx.one_of("bot_id", wanted)
    return tx.send(f"SELECT bot_id, max_matches FROM bots WHERE {among}", params)


def announced_of(sent: Pending | None) -> dict[str, int | None]:
    """What ``send_announced`` asked, bot id → what it announced."""
    return {} if sent is None else {bot: limit for bot, limit in sent.rows()}


def bots_may_start(
    tx: Tx, bots: Sequence[str], ladder_cap: int, reservation: Reservation | None = None
) -> bool:
    """Whether each of ``bots`` may start one more match under ``ladder_cap`` (``match_limit``),
    counted as a claim counts (every match being played: ladder, validation, tournament, and
    the reserved tournament rotations), except that a rotation holding ``reservation`` counts
    only the reservations ahead of its own (``Reservation``): never itself, never a younger
    one, so reservations of the same bots cannot wait for each other in a circle. On
    PostgreSQL the bots' rows are locked first, in bot order as a claim locks them, so this
    check and a claim take turns; SQLite's write lock does that already."""
    seated = sorted(set(bots) - {HOUSE_RANDOM})
    if tx.dialect == "postgres" and seated:
        _lock_in_order(tx, "bots", "bot_id", seated)
    playing = playing_of(tx.all(PLAYING_SQL), reservation)
    return fits(seated, ladder_cap, None, playing, announced_of(send_announced(tx, seated)))


def assign(
    candidates: Sequence[Candidate],
    ladder_only: Sequence[bool],
    playing: Playing,
    announced: dict[str, int | None],
) -> list[Candidate | None]:
    """Each claim in turn (``ladder_only``: it takes ladder matches only) given the oldest of
    ``candidates`` (in queue order) it accepts that no claim before it took and that fits the
    counts so far, ``playing`` counting the ones taken before it. Pure: ``playing`` is not
    changed."""
    by_bot, by_ladder = Counter(playing.by_bot), Counter(playing.by_ladder)
    counts = Playing(by_bot, by_ladder)
    taken: set[str] = set()
    given: list[Candidate | None] = []
    for only in ladder_only:
        found = next(
            (
                candidate
                for candidate in candidates
                if candidate.match_id not in taken
                and (not only or candidate.kind == "ladder")
                and fits(candidate.bots, candidate.cap, candidate.ladder, counts, announced)
            ),
            None,
        )
        given.append(found)
        if found is not None:
            taken.add(found.match_id)
            by_bot.update(found.bots)
            if found.ladder is not None:
                by_ladder[found.ladder[0]] += 1
    return given


def claim_in(
    tx: Tx, worker: str, now_us: int, lease_until_us: int, ladder_only: Sequence[bool]
) -> list[Claim | None]:
    """The claims of ``ladder_only`` (see ``assign``) made in ``tx`` for ``worker``, its lease
    until ``lease_until_us``: what each got, in order (None: nothing it may start)."""
    postgres = tx.dialect == "postgres"
    # On PostgreSQL the picks run twice as long: the second half are spares, for the matches
    # another claimer locked first.
    picks = list(ladder_only) * 2 if postgres else list(ladder_only)
    candidates, playing, announced = _pick(tx, picks, tx.send(PLAYING_SQL))
    endpoints: dict[str, str] | None = None
    if postgres and candidates:
        candidates, playing, announced, endpoints = _lock(tx, candidates)
    given = assign(candidates, ladder_only, playing, announced)
    if endpoints is None:
        endpoints = _endpoints(tx, (bot for c in given if c is not None for bot in c.bots))
    taken = [c.match_id for c in given if c is not None]
    if taken:
        among, params = tx.one_of("match_id", taken)
        tx.execute(
            "UPDATE matches SET status = 'playing', claimed_by = ?, lease_until_us = ?, "
            f"started_at_us = ?, attempts = attempts + 1 WHERE {among}",
            (worker, lease_until_us, now_us, *params),
        )
    return [None if c is None else _claim_of(c, endpoints) for c in given]


_PAGE_SQL = (
    "SELECT m.match_id, m.ladder_id, m.kind, m.seed, m.seats, "
    "COALESCE(l.max_matches_per_bot, 0), COALESCE(l.concurrency, 0), m.created_at_us "
    "FROM matches m LEFT JOIN ladders l ON l.ladder_id = m.ladder_id "
    "WHERE m.status = 'waiting' {kind}AND (m.created_at_us > ? OR (m.created_at_us = ? AND "
    "m.match_id > ?)) ORDER BY m.created_at_us, m.match_id LIMIT ?"
)
"""A page of the waiting matches in queue order after a place (``Candidate.place``): a
``Candidate`` a row."""

_PAGE_BOTS_SQL = (
    "SELECT bot_id, max_matches FROM bots WHERE bot_id = ANY (ARRAY(SELECT unnest("
    "string_to_array(p.seats, ',')) FROM ({page}) AS p (match_id, ladder_id, kind, seed, seats)))"
)
"""PostgreSQL: what the bots of a ``_PAGE_SQL`` page announced, sent with the page (an array
of keys, looked up one by one: a join to the page, whose size the planner cannot know, may be
planned as a scan of every bot)."""


def _pick(
    tx: Tx, picks: Sequence[bool], playing_sent: Pending
) -> tuple[list[Candidate], Playing, dict[str, int | None]]:
    """The waiting matches ``picks`` would be given (``assign``), read a page at a time in
    queue order until every pick has one or the queue ends, in queue order; the matches being
    played (``playing_sent``: ``PLAYING_SQL``, sent); and what the pages' bots announced (on
    PostgreSQL read with each page, one round trip for all three)."""
    page_sql = _PAGE_SQL.format(kind="AND m.kind = 'ladder' " if all(picks) else "")
    seen: list[Candidate] = []
    announced: dict[str, int | None] = {}
    after: tuple[int, str] = (-1, "")
    playing: Playing | None = None
    while True:
        params = (after[0], after[0], after[1], CLAIM_PAGE)
        page_sent = tx.send(page_sql, params)
        bots_sent = (
            tx.send(_PAGE_BOTS_SQL.format(page=page_sql), params)
            if tx.dialect == "postgres"
            else None
        )
        playing = playing or playing_of(playing_sent.rows())
        page = [_candidate(row) for row in page_sent.rows()]
        if bots_sent is None:
            bots_sent = send_announced(tx, {bot for c in page for bot in c.bots} - announced.keys())
        announced.update(announced_of(bots_sent))
        seen.extend(page)
        given = assign(seen, picks, playing, announced)
        if all(given) or len(page) < CLAIM_PAGE:
            chosen = {c.match_id for c in given if c is not None}
            return [c for c in seen if c.match_id in chosen], playing, announced
        after = page[-1].place


def _candidate(row: Sequence[Any]) -> Candidate:
    """A ``_PAGE_SQL`` row as a ``Candidate``."""
    match_id, ladder_id, kind, seed, seats, cap, concurrency, created_at_us = row
    return Candidate(
        match_id,
        ladder_id,
        kind,
        int(seed),
        tuple(seats.split(",")),
        int(cap),
        int(concurrency),
        (int(created_at_us), match_id),
    )


def _lock(
    tx: Tx, candidates: Sequence[Candidate]
) -> tuple[list[Candidate], Playing, dict[str, int | None], dict[str, str]]:
    """PostgreSQL: lock those of ``candidates`` still waiting that no other transaction holds
    (SKIP LOCKED), and the rows of their ladders that limit concurrency and of their bots, in
    key order (the bots' read again as they are locked: their announcements and endpoints);
    then count the matches being played. All sent together: the ones locked (in queue order),
    the counts, the announcements, the endpoints."""
    among, params = tx.one_of("match_id", [c.match_id for c in candidates])
    locked_sent = tx.send(
        f"SELECT match_id FROM matches WHERE {among} AND status = 'waiting' FOR UPDATE SKIP LOCKED",
        params,
    )
    ladders = sorted({c.ladder_id for c in candidates if c.ladder_id and c.concurrency > 0})
    _lock_in_order(tx, "ladders", "ladder_id", ladders)
    bots = sorted({bot for c in candidates for bot in c.bots})
    bots_sent = _lock_in_order(tx, "bots", "bot_id", bots, "bot_id, max_matches, endpoint")
    playing = playing_of(tx.send(PLAYING_SQL).rows())
    locked = {row[0] for row in locked_sent.rows()}
    kept = [c for c in candidates if c.match_id in locked]
    rows = bots_sent.rows() if bots_sent is not None else []
    announced = {bot: limit for bot, limit, _ in rows}
    return kept, playing, announced, {bot: endpoint for bot, _, endpoint in rows}


def _lock_in_order(
    tx: Tx, table: str, key: str, keys: Sequence[str], columns: str = "1"
) -> Pending | None:
    """Lock the rows of ``table`` whose ``key`` is one of ``keys``, in key order, reading
    ``columns`` of them (sent: in a pipelined transaction it goes with what is sent next);
    None when there are no keys."""
    if not keys:
        return None
    among, params = tx.one_of(key, keys)
    return tx.send(f"SELECT {columns} FROM {table} WHERE {among} ORDER BY {key} FOR UPDATE", params)


def _endpoints(tx: Tx, bots: Iterable[str]) -> dict[str, str]:
    """Where each of ``bots`` is served, bot id → endpoint."""
    wanted = sorted(set(bots))
    if not wanted:
        return {}
    among, params = tx.one_of("bot_id", wanted)
    return dict(tx.all(f"SELECT bot_id, endpoint FROM bots WHERE {among}", params))


def _claim_of(candidate: Candidate, endpoints: dict[str, str]) -> Claim:
    """The claim of a match taken, its bots' endpoints from ``endpoints``."""
    at = tuple(endpoints.get(bot, "") for bot in candidate.seats)
    return Claim(
        candidate.match_id, candidate.ladder_id, candidate.kind, candidate.seed, candidate.seats, at
    )
