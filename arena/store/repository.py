"""Everything the arena keeps: owners, bots, ladders, the match queue, results, ratings.

Every method is one transaction, so a rejected request leaves nothing behind. Results are
idempotent by match id (a result delivered twice counts once), and recording a result, updating
ratings and the bots' statistics happen in the same transaction. Matches are claimed with
leases, so several worker processes can share a PostgreSQL database and a worker that dies
leaves its matches to be played again, never half-applied.
"""

from __future__ import annotations

import functools
import hashlib
import random
import secrets
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from arena.matchmaking import Entrant, PlannedMatch
from arena.ratings import INITIAL_MU, INITIAL_SIGMA, Rating, rate, set_ranks
from arena.store.db import Database, Tx
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import record_pb2
from referee.codec.record import fault_name, summaries_of

HOUSE_RANDOM = "house:random"
"""Seat value for the arena's own random bot (validation matches)."""

RATED_STATUSES = (record_pb2.MATCH_STATUS_COMPLETED, record_pb2.MATCH_STATUS_FORFEITED)
BOT_STATES = {
    "validating": arena_service_pb2.BOT_STATE_VALIDATING,
    "active": arena_service_pb2.BOT_STATE_ACTIVE,
    "paused": arena_service_pb2.BOT_STATE_PAUSED,
    "retired": arena_service_pb2.BOT_STATE_RETIRED,
    "rejected": arena_service_pb2.BOT_STATE_REJECTED,
    "unhealthy": arena_service_pb2.BOT_STATE_UNHEALTHY,
}


class StoreError(Exception):
    """A request the store refuses; ``code`` names the gRPC status to answer with."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


T = TypeVar("T")
RETRIES = 5


def retry_transient(method: Callable[..., T]) -> Callable[..., T]:
    """Run a one-transaction store method again after a transient failure (a deadlock between
    two arena processes, a busy SQLite file). Safe because each method is one transaction and
    the writes are idempotent or conditional."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        for attempt in range(RETRIES):
            try:
                return method(self, *args, **kwargs)
            except Exception as error:
                if attempt == RETRIES - 1 or not self.db.is_transient(error):
                    raise
                time.sleep(0.01 * 2**attempt * (1 + random.random()))
        raise AssertionError("unreachable")

    return wrapper


def now_us() -> int:
    """Microseconds since the Unix epoch."""
    return time.time_ns() // 1000


def hash_token(token: str) -> str:
    """Tokens are stored only as SHA-256 hashes."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class BotRow:
    """A bot as stored."""

    bot_id: str
    owner: str
    name: str
    game: str
    endpoint: str
    version: str
    state: str
    state_detail: str
    health_failures: int

    def to_proto(self) -> arena_service_pb2.Bot:
        """The wire form."""
        return arena_service_pb2.Bot(
            bot_id=self.bot_id,
            owner=self.owner,
            name=self.name,
            game=self.game,
            endpoint=self.endpoint,
            version=self.version,
            state=BOT_STATES[self.state],
            state_detail=self.state_detail,
        )


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
class EntrantChanges:
    """What changed in a ladder's field since a time: see ``Store.entrant_changes``."""

    active: list[Entrant]
    gone: list[str]
    next_since_us: int
    """Where the next read starts (a grace period before this one)."""


CHANGE_GRACE_US = 10_000_000
"""How far before its previous read a pool reads changes again (``entrant_changes``, and
``entrants`` with ``changed_since_us``): covers the time between a change's stamp and its
commit, and clock skew between arena machines (10 s)."""

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


def match_limit(announced: int | None, ladder_cap: int) -> int:
    """How many matches a bot may be playing at once for one more to start: what it announced
    (None: not heard yet; 0: no preference) within the ladder's cap (0: the default)."""
    cap = min(ladder_cap or DEFAULT_MAX_MATCHES_PER_BOT, MAX_MATCHES_PER_BOT_LIMIT)
    if announced is None:
        return min(cap, UNANNOUNCED_MAX_MATCHES)
    return min(announced, cap) if announced > 0 else cap


def _fits(
    bots: Sequence[str], cap: int, playing: Counter[str], announced: dict[str, int | None]
) -> bool:
    """Whether each of ``bots`` may start one more match of a ladder with cap ``cap``."""
    return all(playing[bot] < match_limit(announced.get(bot), cap) for bot in bots)


CLAIM_PAGE = 64
"""Waiting matches a claim reads at a time while looking for one whose bots are all free."""

_BOT_COLUMNS = (
    "b.bot_id, o.name, b.name, b.game, b.endpoint, b.version, b.state, b.state_detail, "
    "b.health_failures"
)


class Store:
    """The arena's persistent state on a ``Database`` (SQLite or PostgreSQL)."""

    def __init__(self, database: Database) -> None:
        self.db = database

    # -- owners and bots ------------------------------------------------------------------------

    @retry_transient
    def register_bot(
        self,
        owner: str,
        token: str | None,
        name: str,
        game: str,
        endpoint: str,
        version: str,
        address: str | None = None,
    ) -> tuple[BotRow, str | None]:
        """Register a bot; create the owner if new. Returns the bot and a new owner token.

        ``address`` is where the endpoint resolved (the guard's address key; the endpoint's
        own text if not given): an address another owner's bot (not retired) uses is refused.
        """
        new_token = None
        address_key = address or endpoint.lower()
        with self.db.transaction() as tx:
            self._lock_address(tx, address_key)
            row = tx.one("SELECT owner_id, token_hash FROM owners WHERE name = ?", (owner,))
            if row is None:
                new_token = secrets.token_urlsafe(24)
                owner_id = uuid.uuid4().hex
                tx.execute(
                    "INSERT INTO owners (owner_id, name, token_hash, created_at_us) "
                    "VALUES (?, ?, ?, ?)",
                    (owner_id, owner, hash_token(new_token), now_us()),
                )
            else:
                owner_id = row[0]
                if token is None or not secrets.compare_digest(row[1], hash_token(token)):
                    raise StoreError(
                        "PERMISSION_DENIED",
                        f"owner {owner!r} exists: send its token as 'authorization: Bearer …'",
                    )
            if tx.one("SELECT 1 FROM bots WHERE owner_id = ? AND name = ?", (owner_id, name)):
                raise StoreError("ALREADY_EXISTS", f"{owner!r} already has a bot named {name!r}")
            self._refuse_shared_address(tx, address_key, owner_id)
            bot_id = uuid.uuid4().hex[:12]
            created = now_us()
            tx.execute(
                "INSERT INTO bots (bot_id, owner_id, name, game, endpoint, version, state, "
                "created_at_us, state_changed_us, address_key) "
                "VALUES (?, ?, ?, ?, ?, ?, 'validating', ?, ?, ?)",
                (bot_id, owner_id, name, game, endpoint, version, created, created, address_key),
            )
            return self._bot(tx, bot_id), new_token

    @staticmethod
    def _lock_address(tx: Tx, address_key: str) -> None:
        """Serialise registrations and updates to one address until the transaction ends
        (SQLite: every write transaction already is), so two owners racing for one address
        cannot both pass ``_refuse_shared_address``."""
        if tx.dialect == "postgres":
            tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 17))", (address_key,))

    @staticmethod
    def _refuse_shared_address(tx: Tx, address_key: str, owner_id: str) -> None:
        """ALREADY_EXISTS if a bot of another owner, not retired, answers at ``address_key``:
        one process must not sit in two owners' seats of a match."""
        taken = tx.one(
            "SELECT 1 FROM bots WHERE address_key = ? AND owner_id <> ? AND state <> 'retired' "
            "LIMIT 1",
            (address_key, owner_id),
        )
        if taken:
            raise StoreError(
                "ALREADY_EXISTS",
                "another owner's bot is registered at this endpoint's address: "
                "each owner's bots need their own",
            )

    def _bot(self, tx: Tx, bot_id: str) -> BotRow:
        row = tx.one(
            f"SELECT {_BOT_COLUMNS} FROM bots b JOIN owners o ON o.owner_id = b.owner_id "
            "WHERE b.bot_id = ?",
            (bot_id,),
        )
        if row is None:
            raise StoreError("NOT_FOUND", f"no bot {bot_id!r}")
        return BotRow(*row)

    def bot(self, bot_id: str) -> BotRow:
        """One bot."""
        with self.db.transaction() as tx:
            return self._bot(tx, bot_id)

    def bots(self, states: Sequence[str] = ()) -> list[BotRow]:
        """Every bot, or those in ``states``."""
        sql = f"SELECT {_BOT_COLUMNS} FROM bots b JOIN owners o ON o.owner_id = b.owner_id"
        with self.db.transaction() as tx:
            if states:
                marks = ", ".join("?" for _ in states)
                return [BotRow(*r) for r in tx.all(f"{sql} WHERE b.state IN ({marks})", states)]
            return [BotRow(*r) for r in tx.all(sql)]

    def _authorize(self, tx: Tx, bot_id: str, token: str | None) -> BotRow:
        bot = self._bot(tx, bot_id)
        row = tx.one(
            "SELECT o.token_hash FROM owners o JOIN bots b ON b.owner_id = o.owner_id "
            "WHERE b.bot_id = ?",
            (bot_id,),
        )
        if token is None or not secrets.compare_digest(row[0], hash_token(token)):
            raise StoreError("PERMISSION_DENIED", f"only {bot.owner!r}'s token changes this bot")
        return bot

    @retry_transient
    def update_bot(
        self,
        bot_id: str,
        token: str | None,
        endpoint: str,
        version: str,
        address: str | None = None,
    ) -> BotRow:
        """Change endpoint and/or version; either change sends the bot back to validation.

        A new endpoint is refused, like at registration, if its address (``address``, or the
        endpoint's text) is another owner's."""
        with self.db.transaction() as tx:
            bot = self._authorize(tx, bot_id, token)
            if bot.state == "retired":
                raise StoreError("FAILED_PRECONDITION", "a retired bot cannot be changed")
            moved = bool(endpoint) and endpoint != bot.endpoint
            current = tx.one("SELECT owner_id, address_key FROM bots WHERE bot_id = ?", (bot_id,))
            owner_id, address_key = current
            if moved:
                address_key = address or endpoint.lower()
                self._lock_address(tx, address_key)
                self._refuse_shared_address(tx, address_key, owner_id)
            revalidate = moved or (bool(version) and version != bot.version)
            tx.execute(
                "UPDATE bots SET endpoint = ?, version = ?, state = ?, state_detail = ?, "
                "state_changed_us = ?, address_key = ? WHERE bot_id = ?",
                (
                    endpoint or bot.endpoint,
                    version or bot.version,
                    "validating" if revalidate else bot.state,
                    "" if revalidate else bot.state_detail,
                    now_us(),
                    address_key,
                    bot_id,
                ),
            )
            return self._bot(tx, bot_id)

    @retry_transient
    def set_bot_state(self, bot_id: str, token: str | None, state: str) -> BotRow:
        """Pause, resume (back to active) or retire a bot."""
        with self.db.transaction() as tx:
            bot = self._authorize(tx, bot_id, token)
            if bot.state == "retired":
                raise StoreError("FAILED_PRECONDITION", "a retired bot stays retired")
            if state == "active" and bot.state != "paused":
                raise StoreError("FAILED_PRECONDITION", f"only a paused bot resumes ({bot.state})")
            if state not in ("paused", "active", "retired"):
                raise StoreError("INVALID_ARGUMENT", "state must be PAUSED, ACTIVE or RETIRED")
            tx.execute(
                "UPDATE bots SET state = ?, state_detail = '', state_changed_us = ? "
                "WHERE bot_id = ?",
                (state, now_us(), bot_id),
            )
            return self._bot(tx, bot_id)

    @retry_transient
    def set_state_by_arena(
        self, bot_id: str, state: str, detail: str, failures: int, next_probe_us: int = 0
    ) -> None:
        """The arena's own state changes (validation, health sweep); ``next_probe_us``: when a
        pulled bot is to be probed again (0: at the next sweep)."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE bots SET state = ?, state_detail = ?, health_failures = ?, "
                "state_changed_us = ?, next_probe_us = ? WHERE bot_id = ?",
                (state, detail, failures, now_us(), next_probe_us, bot_id),
            )

    def probe_schedule(self) -> dict[str, int]:
        """When each pulled (unhealthy) bot is due for its next health probe, bot id → µs."""
        with self.db.transaction() as tx:
            return dict(tx.all("SELECT bot_id, next_probe_us FROM bots WHERE state = 'unhealthy'"))

    # -- ladders --------------------------------------------------------------------------------

    @retry_transient
    def create_ladder(self, config: arena_service_pb2.LadderConfig) -> str:
        """Store a ladder (its config already validated by the caller)."""
        ladder_id = uuid.uuid4().hex[:10]
        with self.db.transaction() as tx:
            if tx.one("SELECT 1 FROM ladders WHERE name = ?", (config.name,)):
                raise StoreError("ALREADY_EXISTS", f"a ladder named {config.name!r} exists")
            tx.execute(
                "INSERT INTO ladders (ladder_id, name, game, config, created_at_us, "
                "max_matches_per_bot) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    ladder_id,
                    config.name,
                    config.settings.game,
                    config.SerializeToString(),
                    now_us(),
                    min(config.max_matches_per_bot, MAX_MATCHES_PER_BOT_LIMIT),
                ),
            )
        return ladder_id

    def ladders(self) -> list[arena_service_pb2.Ladder]:
        """Every ladder with its counts."""
        with self.db.transaction() as tx:
            rows = tx.all("SELECT ladder_id, config FROM ladders ORDER BY created_at_us")
            return [self._counted(tx, ladder_id, config) for ladder_id, config in rows]

    def ladder(self, key: str) -> arena_service_pb2.Ladder:
        """A ladder by id or name (counting only its own matches)."""
        with self.db.transaction() as tx:
            row = tx.one(
                "SELECT ladder_id, config FROM ladders WHERE ladder_id = ? OR name = ? "
                "ORDER BY created_at_us LIMIT 1",
                (key, key),
            )
            if row is None:
                raise StoreError("NOT_FOUND", f"no ladder {key!r}")
            return self._counted(tx, *row)

    @staticmethod
    def _counted(tx: Tx, ladder_id: str, config: bytes) -> arena_service_pb2.Ladder:
        """A ladder's wire form with its bots and finished matches counted."""
        bots = tx.one("SELECT COUNT(*) FROM entries WHERE ladder_id = ?", (ladder_id,))
        done = tx.one(
            "SELECT COUNT(*) FROM matches WHERE ladder_id = ? AND status = 'finished'",
            (ladder_id,),
        )
        return arena_service_pb2.Ladder(
            ladder_id=ladder_id,
            config=arena_service_pb2.LadderConfig.FromString(bytes(config)),
            bots=bots[0],
            matches_finished=done[0],
        )

    def ladder_configs(self) -> dict[str, arena_service_pb2.LadderConfig]:
        """Every ladder's config by id, without the counts ``ladders`` adds (for the scheduler:
        those counts grow with the match history). A config never changes once stored."""
        with self.db.transaction() as tx:
            rows = tx.all("SELECT ladder_id, config FROM ladders ORDER BY created_at_us")
        return {
            ladder_id: arena_service_pb2.LadderConfig.FromString(bytes(config))
            for ladder_id, config in rows
        }

    @retry_transient
    def enter_active_bots(self, ladder_id: str, game: str) -> None:
        """Give every active bot of the ladder's game an entry (a fresh rating) if it has none."""
        with self.db.transaction() as tx:
            self._enter_active_bots(tx, ladder_id, game, 0)

    @staticmethod
    def _enter_active_bots(tx: Tx, ladder_id: str, game: str, changed_since_us: int) -> None:
        tx.execute(  # ON CONFLICT: two arena processes may enter the same bot at once
            "INSERT INTO entries (ladder_id, bot_id, mu, sigma, changed_us) "
            "SELECT ?, b.bot_id, ?, ?, ? FROM bots b WHERE b.game = ? AND b.state = 'active' "
            "AND b.state_changed_us >= ? AND NOT EXISTS (SELECT 1 FROM entries e "
            "WHERE e.ladder_id = ? AND e.bot_id = b.bot_id) "
            "ON CONFLICT (ladder_id, bot_id) DO NOTHING",
            (ladder_id, INITIAL_MU, INITIAL_SIGMA, now_us(), game, changed_since_us, ladder_id),
        )

    def entrants(self, ladder_id: str, changed_since_us: int = 0) -> list[Entrant]:
        """Active bots of a ladder with their owner and address, for matchmaking; with
        ``changed_since_us``, only those whose
        rating or matches scheduled changed since then (the database filters every entry, only
        those come back: what a pool catching up reads)."""
        with self.db.transaction() as tx:
            rows = tx.all(
                "SELECT e.bot_id, e.mu - 3 * e.sigma, e.sigma, e.scheduled, b.owner_id, "
                "b.address_key FROM entries e "
                "JOIN bots b ON b.bot_id = e.bot_id WHERE e.ladder_id = ? AND b.state = 'active'"
                + (" AND e.changed_us >= ?" if changed_since_us else ""),
                (ladder_id, changed_since_us) if changed_since_us else (ladder_id,),
            )
            in_flight = self._in_flight(tx, ladder_id)
        entrants = list(map(Entrant._make, rows))
        if in_flight:
            entrants = [
                e._replace(scheduled=e.scheduled + in_flight[e.bot_id])
                if e.bot_id in in_flight
                else e
                for e in entrants
            ]
        return entrants

    @staticmethod
    def _in_flight(tx: Tx, ladder_id: str) -> Counter[str]:
        """Each bot's matches of the ladder queued or being played: with the finished ones
        its entry counts, the matches scheduled for it."""
        rows = tx.all(
            "SELECT seats FROM matches WHERE ladder_id = ? AND status IN ('waiting', 'playing')",
            (ladder_id,),
        )
        return Counter(bot for (seats,) in rows for bot in seats.split(","))

    @retry_transient
    def entrant_changes(self, ladder_id: str, game: str, since_us: int) -> EntrantChanges:
        """Bots of the ladder's game whose state changed at or after ``since_us``: those now
        active (entered with a fresh rating if new) and those no longer active.

        What a scheduling tick reads instead of every entrant. The stamps are the writers'
        clocks, so read from a little before the last read (``CHANGE_GRACE_US``): a
        change committed later than that after its stamp is seen only by the next full read.
        """
        next_since = now_us() - CHANGE_GRACE_US
        with self.db.transaction() as tx:
            self._enter_active_bots(tx, ladder_id, game, since_us)
            rows = tx.all(
                "SELECT b.bot_id, b.state, e.mu, e.sigma, e.scheduled, b.owner_id, b.address_key "
                "FROM bots b "
                "LEFT JOIN entries e ON e.ladder_id = ? AND e.bot_id = b.bot_id "
                "WHERE b.game = ? AND b.state_changed_us >= ?",
                (ladder_id, game, since_us),
            )
            in_flight = self._in_flight(tx, ladder_id) if rows else Counter()
        active = [
            Entrant(bot, mu - 3 * sigma, sigma, scheduled + in_flight[bot], owner, address)
            for bot, state, mu, sigma, scheduled, owner, address in rows
            if state == "active" and mu is not None
        ]
        gone = [bot for bot, state, *_ in rows if state != "active"]
        return EntrantChanges(active, gone, next_since)

    def count_entrants(self, ladder_id: str) -> int:
        """How many bots a ladder has (the length of its whole standings)."""
        with self.db.transaction() as tx:
            return int(tx.one("SELECT COUNT(*) FROM entries WHERE ladder_id = ?", (ladder_id,))[0])

    def standings(
        self, ladder_id: str, limit: int = 0, offset: int = 0
    ) -> list[arena_service_pb2.Standing]:
        """Entrants best first by μ − 3σ (ties by bot id): ``limit`` of them (0: all) after the
        best ``offset``. Reads one row per entrant shown: moves and faults are counted in the
        entries as results come in, not summed over the ladder's history."""
        page = f" LIMIT {int(limit) or 2**62} OFFSET {int(offset)}" if limit or offset else ""
        with self.db.transaction() as tx:
            rows = tx.all(
                f"SELECT e.mu, e.sigma, e.matches, e.first_places, e.moves_played, e.faults, "
                f"{_BOT_COLUMNS} FROM entries e JOIN bots b ON b.bot_id = e.bot_id "
                "JOIN owners o ON o.owner_id = b.owner_id WHERE e.ladder_id = ? "
                f"ORDER BY e.mu - 3 * e.sigma DESC, e.bot_id{page}",
                (ladder_id,),
            )
        return [
            arena_service_pb2.Standing(
                position=position,
                bot=BotRow(*r[6:15]).to_proto(),
                rating=r[0] - 3 * r[1],
                mu=r[0],
                sigma=r[1],
                matches=r[2],
                first_places=r[3],
                fault_rate=100.0 * r[5] / r[4] if r[4] else 0.0,
            )
            for position, r in enumerate(rows, start=offset + 1)
        ]

    # -- the match queue ------------------------------------------------------------------------

    @retry_transient
    def enqueue(self, ladder_id: str | None, kind: str, planned: Sequence[PlannedMatch]) -> bool:
        """Add a set of matches (one, or a duplicate set sharing a deal).

        A ladder set is refused (False, nothing written) unless every bot in it is still
        active: matchmaking works from a cached pool, and a bot paused, retired or pulled since
        must not be scheduled.

        Not waited onto disk (``durable=False``): a queued set lost in a database crash is
        only a set never queued. It writes no entry: a bot's matches in flight are counted from
        the queue when entrants are read (``_in_flight``), and the entry counts a match when its
        result is recorded.
        """
        set_id = uuid.uuid4().hex
        created = now_us()
        with self.db.transaction(durable=False) as tx:
            if ladder_id is not None:
                bots = sorted({bot for match in planned for bot in match.seats})
                marks = ", ".join("?" for _ in bots)
                active = tx.one(
                    f"SELECT COUNT(*) FROM bots WHERE state = 'active' AND bot_id IN ({marks})",
                    bots,
                )[0]
                if active != len(bots):
                    return False
            tx.many(
                "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
                "created_at_us) VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?)",
                [
                    (
                        uuid.uuid4().hex,
                        ladder_id,
                        set_id,
                        kind,
                        match.seed,
                        ",".join(match.seats),
                        created + index,
                    )
                    for index, match in enumerate(planned)
                ],
            )
        return True

    def waiting(self, ladder_id: str | None = None) -> int:
        """Matches waiting to be played (in one ladder, or all)."""
        with self.db.transaction() as tx:
            if ladder_id is None:
                return int(tx.one("SELECT COUNT(*) FROM matches WHERE status = 'waiting'")[0])
            return int(
                tx.one(
                    "SELECT COUNT(*) FROM matches WHERE status IN ('waiting', 'playing') "
                    "AND ladder_id = ?",
                    (ladder_id,),
                )[0]
            )

    def has_validation(self, bot_id: str) -> bool:
        """Whether validation matches for this bot are queued or running."""
        with self.db.transaction() as tx:
            row = tx.one(  # status IN (...), not != 'finished': the status index, not a scan
                "SELECT 1 FROM matches WHERE status IN ('waiting', 'playing') "
                "AND kind = 'validation' AND seats LIKE ?",
                (f"%{bot_id}%",),
            )
        return row is not None

    @retry_transient
    def claim(self, worker: str, lease_s: float) -> Claim | None:
        """Take the oldest waiting match none of whose bots is at its limit of matches at
        once (``match_limit``) for ``worker`` until the lease ends.

        Not waited onto disk (``durable=False``): a claim lost in a database crash only lets
        the match be played again, and its result still counts once (by match id).
        """
        with self.db.transaction(durable=False) as tx:
            match_id = self._claimable(tx)
            if match_id is None:
                return None
            row = tx.one(
                "UPDATE matches SET status = 'playing', claimed_by = ?, lease_until_us = ?, "
                "attempts = attempts + 1 WHERE match_id = ? "
                "RETURNING match_id, ladder_id, kind, seed, seats",
                (worker, now_us() + int(lease_s * 1e6), match_id),
            )
            if row is None:
                return None
            seats = tuple(row[4].split(","))
            bots = sorted(set(seats) - {HOUSE_RANDOM})
            marks = ", ".join("?" for _ in bots)
            sql = f"SELECT bot_id, endpoint FROM bots WHERE bot_id IN ({marks})"
            found = dict(tx.all(sql, bots)) if bots else {}
        endpoints = tuple(found.get(bot_id, "") for bot_id in seats)
        return Claim(row[0], row[1], row[2], int(row[3]), seats, endpoints)

    def _claimable(self, tx: Tx) -> str | None:
        """The oldest waiting match whose bots may all start one more (``match_limit``).

        A bot's matches at once are counted from the queue (its matches being played, in any
        ladder), so whatever puts a match back (release, an expired lease's recovery) frees its
        slots with no count to keep right. On PostgreSQL the match found is locked (SKIP
        LOCKED: a match another claim holds is passed over) and then its bots' rows, in bot
        order, and their matches are counted again: two claims that share a bot take turns
        there, and the second sees the first's match playing. A match that no longer fits is
        let go (its locks rolled back to a savepoint) and the next one tried. SQLite: the
        transaction already holds the only write lock.
        """
        postgres = tx.dialect == "postgres"
        playing = self._playing(tx)
        announced = self._announced(tx, sorted(playing))
        offset = 0
        while True:
            page = tx.all(
                "SELECT m.match_id, m.seats, COALESCE(l.max_matches_per_bot, 0) FROM matches m "
                "LEFT JOIN ladders l ON l.ladder_id = m.ladder_id WHERE m.status = 'waiting' "
                "ORDER BY m.created_at_us, m.match_id LIMIT ? OFFSET ?",
                (CLAIM_PAGE, offset),
            )
            for match_id, seats, cap in page:
                bots = sorted(set(seats.split(",")) - {HOUSE_RANDOM})
                if not _fits(bots, cap, playing, announced):
                    continue
                if not postgres:
                    return str(match_id)
                tx.execute("SAVEPOINT claim_candidate")
                if tx.one(
                    "SELECT 1 FROM matches WHERE match_id = ? AND status = 'waiting' "
                    "FOR UPDATE SKIP LOCKED",
                    (match_id,),
                ):
                    announced.update(self._announced(tx, bots, lock=True))
                    playing = self._playing(tx)
                    if _fits(bots, cap, playing, announced):
                        tx.execute("RELEASE SAVEPOINT claim_candidate")
                        return str(match_id)
                tx.execute("ROLLBACK TO SAVEPOINT claim_candidate")
            if len(page) < CLAIM_PAGE:
                return None
            offset += CLAIM_PAGE

    @staticmethod
    def _playing(tx: Tx) -> Counter[str]:
        """Each bot's matches being played now (every ladder and validation)."""
        rows = tx.all("SELECT seats FROM matches WHERE status = 'playing'")
        return Counter(bot for (seats,) in rows for bot in set(seats.split(",")) - {HOUSE_RANDOM})

    @staticmethod
    def _announced(tx: Tx, bots: Sequence[str], lock: bool = False) -> dict[str, int | None]:
        """What each of ``bots`` announced (``bots.max_matches``); ``lock``: their rows locked
        in bot order (PostgreSQL)."""
        if not bots:
            return {}
        marks = ", ".join("?" for _ in bots)
        suffix = " ORDER BY bot_id FOR UPDATE" if lock and tx.dialect == "postgres" else ""
        sql = f"SELECT bot_id, max_matches FROM bots WHERE bot_id IN ({marks}){suffix}"
        return {bot: limit for bot, limit in tx.all(sql, bots)}

    @retry_transient
    def set_announced_limits(self, limits: dict[str, int]) -> None:
        """Store what bots announced in GetInfo (``max_concurrent_matches``), bot id → value;
        writes only the rows that change."""
        stored = {
            bot: max(0, min(value, MAX_MATCHES_PER_BOT_LIMIT)) for bot, value in limits.items()
        }
        rows = [(value, bot, value) for bot, value in sorted(stored.items())]
        if not rows:
            return
        with self.db.transaction() as tx:
            tx.many(
                "UPDATE bots SET max_matches = ? WHERE bot_id = ? "
                "AND (max_matches IS NULL OR max_matches <> ?)",
                rows,
            )

    @retry_transient
    def renew(self, match_id: str, worker: str, lease_s: float) -> bool:
        """Extend a claim's lease; False if the match is no longer this worker's."""
        with self.db.transaction(durable=False) as tx:
            tx.execute(
                "UPDATE matches SET lease_until_us = ? WHERE match_id = ? AND claimed_by = ? "
                "AND status = 'playing'",
                (now_us() + int(lease_s * 1e6), match_id, worker),
            )
            return tx.rowcount == 1

    @retry_transient
    def release(self, match_id: str, worker: str) -> None:
        """Give a claimed match back to the queue (it will be played again from the start)."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE matches SET status = 'waiting', claimed_by = NULL, lease_until_us = NULL "
                "WHERE match_id = ? AND claimed_by = ? AND status = 'playing'",
                (match_id, worker),
            )

    @retry_transient
    def recover(self, worker: str) -> int:
        """Requeue matches whose lease ran out, and every match ``worker`` held before a restart."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE matches SET status = 'waiting', claimed_by = NULL, lease_until_us = NULL "
                "WHERE status = 'playing' AND (lease_until_us < ? OR claimed_by = ?)",
                (now_us(), worker),
            )
            return tx.rowcount

    # -- results --------------------------------------------------------------------------------

    @retry_transient
    def record_result(self, record: record_pb2.MatchRecord) -> dict[str, Rating] | None:
        """Store a finished match and apply it: the new ratings it set (empty if it rated
        nothing), or None if it was already recorded (no change)."""
        with self.db.transaction() as tx:
            # Every match of the set, locked in one order: of two rotations finishing at once,
            # the second waits for the first and sees it finished, so the set is rated once.
            rows = tx.all(
                "SELECT match_id, status, ladder_id, kind, seats, result_status FROM matches "
                "WHERE set_id = (SELECT set_id FROM matches WHERE match_id = ?) ORDER BY match_id"
                + (" FOR UPDATE" if tx.dialect == "postgres" else ""),
                (record.match_id,),
            )
            this = next((row for row in rows if row[0] == record.match_id), None)
            if this is None:
                raise StoreError("NOT_FOUND", f"no match {record.match_id!r}")
            _, status, ladder_id, kind, seats_text, _ = this
            if status == "finished":
                return None
            seats = seats_text.split(",")
            finished = record.finished_at_us or now_us()
            tx.execute(  # claimed_by stays: it tells which worker played the match
                "UPDATE matches SET status = 'finished', result_status = ?, finished_at_us = ?, "
                "lease_until_us = NULL WHERE match_id = ?",
                (int(record.status), finished, record.match_id),
            )
            tx.execute(
                "INSERT INTO records (match_id, record) VALUES (?, ?)",
                (record.match_id, record.SerializeToString()),
            )
            ratings: dict[str, Rating] = {}
            others = [row for row in rows if row[0] != record.match_id]
            summaries = summaries_of(record, len(seats))
            if kind == "validation":
                self._apply_validation(tx, record, seats)
            elif ladder_id is not None:
                played = Counter(seats)
                moves: Counter[str] = Counter()
                faults: Counter[str] = Counter()
                for bot, summary in zip(seats, summaries, strict=True):
                    moves[bot] += summary.moves
                    faults[bot] += summary.faults
                per_match = []  # the ranks of each rated match of the set, once it is complete
                if all(row[1] == "finished" for row in others):
                    ranks_of = "SELECT bot_id, rank FROM match_seats WHERE match_id = ?"
                    per_match = [
                        dict(tx.all(ranks_of, (other,)))
                        for other, *_, result in others
                        if result in RATED_STATUSES
                    ]
                    if record.status in RATED_STATUSES:
                        per_match.append(dict(zip(seats, record.outcome.ranks, strict=False)))
                if per_match:
                    ratings = self._rate_set(tx, ladder_id, per_match, played, moves, faults)
                else:  # the set is not complete, or nothing in it is rated: count the match
                    tx.many(
                        "UPDATE entries SET scheduled = scheduled + ?, moves_played = "
                        "moves_played + ?, faults = faults + ?, changed_us = ? "
                        "WHERE ladder_id = ? AND bot_id = ?",
                        [
                            (played[bot], moves[bot], faults[bot], now_us(), ladder_id, bot)
                            for bot in sorted(played)
                        ],
                    )
            self._record_seats(tx, record, seats, finished, ratings, summaries)
            return ratings

    def _record_seats(
        self,
        tx: Tx,
        record: record_pb2.MatchRecord,
        seats: Sequence[str],
        finished: int,
        ratings: dict[str, Rating],
        summaries: Sequence[record_pb2.SeatSummary],
    ) -> None:
        """A row per seat: result, moves, faults, latency summary and, if this match completed
        a rated set, the bot's rating after it (its rating history)."""
        rated = record.status in RATED_STATUSES
        rows = []
        for seat, bot_id in enumerate(seats):
            summary = summaries[seat]
            timed = summary.moves > 0 and bot_id != HOUSE_RANDOM
            after = ratings.get(bot_id)
            rows.append(
                (
                    record.match_id,
                    seat,
                    bot_id,
                    record.outcome.ranks[seat] if rated else 0,
                    record.outcome.scores[seat] if rated else 0,
                    summary.moves,
                    summary.faults,
                    summary.elapsed_sum_us,
                    finished,
                    summary.elapsed_p50_us if timed else None,
                    summary.elapsed_p95_us if timed else None,
                    after.mu if after else None,
                    after.sigma if after else None,
                )
            )
        tx.many(
            "INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults, "
            "latency_sum_us, finished_at_us, p50_us, p95_us, mu, sigma) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        if not any(summary.faults for summary in summaries):
            return  # the usual case: no need to look at the moves
        counts: Counter[tuple[str, str]] = Counter(
            (seats[move.seat], fault_name(move.fault))
            for move in record.moves
            if move.fault and move.seat < len(seats) and seats[move.seat] != HOUSE_RANDOM
        )
        tx.many(
            "INSERT INTO bot_faults (bot_id, kind, count) VALUES (?, ?, ?) "
            "ON CONFLICT (bot_id, kind) DO UPDATE SET count = bot_faults.count + "
            "excluded.count",
            sorted((bot_id, kind, count) for (bot_id, kind), count in counts.items()),
        )

    def _apply_validation(
        self, tx: Tx, record: record_pb2.MatchRecord, seats: Sequence[str]
    ) -> None:
        for seat, bot_id in enumerate(seats):
            if bot_id == HOUSE_RANDOM:
                continue
            bot = self._bot(tx, bot_id)
            if bot.state != "validating":
                continue
            faults = [m for m in record.moves if m.seat == seat and m.fault]
            if record.status != record_pb2.MATCH_STATUS_COMPLETED or faults:
                reason = record.status_detail
                if faults:
                    first = faults[0]
                    name = fault_name(first.fault)
                    reason = f"{len(faults)} fault(s); first: {name}: {first.fault_detail}"
                tx.execute(
                    "UPDATE bots SET state = 'rejected', state_detail = ?, state_changed_us = ? "
                    "WHERE bot_id = ?",
                    (f"validation match {record.match_id[:12]} failed: {reason}", now_us(), bot_id),
                )
                continue
            pending = tx.one(
                "SELECT COUNT(*) FROM matches WHERE status IN ('waiting', 'playing') "
                "AND kind = 'validation' AND seats LIKE ?",
                (f"%{bot_id}%",),
            )[0]
            if pending == 0:
                tx.execute(
                    "UPDATE bots SET state = 'active', state_detail = 'passed validation', "
                    "state_changed_us = ? WHERE bot_id = ?",
                    (now_us(), bot_id),
                )

    def _rate_set(
        self,
        tx: Tx,
        ladder_id: str,
        per_match: Sequence[dict[str, int]],
        played: Counter[str],
        moves: Counter[str],
        faults: Counter[str],
    ) -> dict[str, Rating]:
        """Rate a finished set from each rated match's ranks (and count the match that
        completed it: ``played``, its ``moves`` and ``faults`` per bot)."""
        ranks = set_ranks(per_match)
        # Lock the entries in bot order before reading them: no lost update when two processes
        # rate sets sharing a bot, and no deadlock (same order everywhere).
        lock = " FOR UPDATE" if tx.dialect == "postgres" else ""
        bots = sorted(ranks)
        marks = ", ".join("?" for _ in bots)
        current = {
            bot: Rating(mu, sigma)
            for bot, mu, sigma in tx.all(
                f"SELECT bot_id, mu, sigma FROM entries WHERE ladder_id = ? AND bot_id IN ({marks})"
                f" ORDER BY bot_id{lock}",
                (ladder_id, *bots),
            )
        }
        new_ratings = rate(current, ranks)
        order = sorted(new_ratings)
        changed = now_us()
        tx.many(
            "UPDATE entries SET mu = ?, sigma = ?, matches = matches + ?, "
            "first_places = first_places + ?, scheduled = scheduled + ?, "
            "moves_played = moves_played + ?, faults = faults + ?, changed_us = ? "
            "WHERE ladder_id = ? AND bot_id = ?",
            [
                (
                    new_ratings[bot].mu,
                    new_ratings[bot].sigma,
                    len(per_match),
                    1 if ranks[bot] == 1 else 0,
                    played[bot],
                    moves[bot],
                    faults[bot],
                    changed,
                    ladder_id,
                    bot,
                )
                for bot in order
            ],
        )
        return new_ratings

    # -- reading results ------------------------------------------------------------------------

    def match_record(self, match_id: str) -> record_pb2.MatchRecord:
        """A finished match's record."""
        with self.db.transaction() as tx:
            row = tx.one("SELECT record FROM records WHERE match_id = ?", (match_id,))
        if row is None:
            raise StoreError("NOT_FOUND", f"no finished match {match_id!r}")
        return record_pb2.MatchRecord.FromString(bytes(row[0]))

    def profile(self, bot_id: str, recent: int) -> arena_service_pb2.GetBotProfileResponse:
        """Ratings history, recent matches and fault and latency figures of a bot."""
        with self.db.transaction() as tx:
            bot = self._bot(tx, bot_id)
            response = arena_service_pb2.GetBotProfileResponse(bot=bot.to_proto())
            for ladder_id, match_id, mu, sigma, at in tx.all(
                "SELECT m.ladder_id, s.match_id, s.mu, s.sigma, s.finished_at_us "
                "FROM match_seats s JOIN matches m ON m.match_id = s.match_id "
                "WHERE s.bot_id = ? AND s.mu IS NOT NULL ORDER BY s.finished_at_us",
                (bot_id,),
            ):
                response.rating_history.append(
                    arena_service_pb2.RatingPoint(
                        ladder_id=ladder_id,
                        match_id=match_id,
                        rating=mu - 3 * sigma,
                        mu=mu,
                        sigma=sigma,
                        at_us=at,
                    )
                )
            for row in tx.all(
                "SELECT s.match_id, COALESCE(m.ladder_id, ''), m.result_status, s.seat, s.rank, "
                "s.score, s.faults, s.finished_at_us FROM match_seats s "
                "JOIN matches m ON m.match_id = s.match_id WHERE s.bot_id = ? "
                "ORDER BY s.finished_at_us DESC LIMIT ?",
                (bot_id, recent),
            ):
                response.recent_matches.append(
                    arena_service_pb2.MatchSummary(
                        match_id=row[0],
                        ladder_id=row[1],
                        status=row[2],
                        seat=row[3],
                        rank=row[4],
                        score=row[5],
                        faults=row[6],
                        finished_at_us=row[7],
                    )
                )
            for kind, count in tx.all(
                "SELECT kind, count FROM bot_faults WHERE bot_id = ?", (bot_id,)
            ):
                response.faults[kind] = count
            moves = tx.one(
                "SELECT COALESCE(SUM(moves), 0) FROM match_seats WHERE bot_id = ?", (bot_id,)
            )
            response.moves = int(moves[0])
            latency = tx.all(
                "SELECT p50_us, p95_us FROM match_seats WHERE bot_id = ? "
                "AND p50_us IS NOT NULL ORDER BY finished_at_us DESC LIMIT ?",
                (bot_id, recent),
            )
            if latency:
                response.latency_p50_ms = statistics.median(r[0] for r in latency) / 1000
                response.latency_p95_ms = max(r[1] for r in latency) / 1000
            return response
