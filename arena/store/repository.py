"""Everything the arena keeps: owners, bots, ladders, the match queue, results, ratings.

Every method is one transaction, so a rejected request leaves nothing behind. Results are
idempotent by match id (a result delivered twice counts once), and recording a result, updating
ratings and the bots' statistics happen in the same transaction. Matches are claimed with
leases, so several worker processes can share a PostgreSQL database and a worker that dies
leaves its matches to be played again, never half-applied.

A match that goes back to the queue unfinished (released, interrupted, failed) gets a new id:
its bots may have been told it started, never how it ended, so no id ever has two outcomes. One
that fails too often for a reason that is not a bot's fault is parked for an operator. The
records of a duplicate deal are withheld until every rotation of the deal has finished.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import logging
import random
import secrets
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from arena.bot_transport import OUTBOUND, OUTBOUND_UNNAMED, shown_endpoint, transport_of
from arena.duplicate_scoring import Rotation, first_places
from arena.matchmaking import Entrant, PlannedMatch
from arena.ratings import (
    DISPLAY_SIGMAS,
    DISPLAY_SQL,
    INITIAL_MU,
    INITIAL_SIGMA,
    Rating,
    RatingPolicy,
    displayed_rating,
    idle_since,
    rate_set,
    rating_as_of,
)
from arena.store.bot_keys import new_bot_key, revoke_owner_keys, set_key_hash
from arena.store.claims import (
    HOUSE_RANDOM,
    MAX_MATCHES_PER_BOT_LIMIT,
    Claim,
    claim_in,
)
from arena.store.coordination import holds_lease, send_lease_check
from arena.store.db import Database, Pending, Tx
from arena.store.results import (
    RATED_STATUSES,
    SET_ROWS_SQL,
    EntryChange,
    FinishedWrites,
    ResultBatch,
    SeatRow,
    SetReads,
)
from arena.store.versions import start_new_version, version_at, version_figures
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import options_pb2, record_pb2
from referee.codec.summaries import fault_name, summaries_of
from referee.games.registry import lower_score_wins

log = logging.getLogger(__name__)


class BotState(enum.StrEnum):
    """A registered bot's state, as the ``bots.state`` column stores it (a str: it compares
    equal to the column's text and binds as it)."""

    VALIDATING = "validating"
    ACTIVE = "active"
    PAUSED = "paused"
    RETIRED = "retired"
    REJECTED = "rejected"
    UNHEALTHY = "unhealthy"


BOT_STATES: dict[str, arena_service_pb2.BotState.ValueType] = {
    state: arena_service_pb2.BotState.Value(f"BOT_STATE_{state.name}") for state in BotState
}
"""The wire enum of each state (one per state: ``tests/test_store.py`` checks both ways)."""


QueuedRow = tuple[str, str | None, str, str, int, str, int]
"""A queued match's row: its id, ladder (None: a validation match), set, kind, seed, seats
(comma-separated) and when it was queued."""

_QUEUE_ROWS_INSERT = """INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status,
    created_at_us)
    SELECT r->>0, r->>1, r->>2, r->>3, (r->>4)::BIGINT, r->>5, 'waiting', (r->>6)::BIGINT
    FROM jsonb_array_elements(?::jsonb) AS r"""
"""PostgreSQL: queued rows (``QueuedRow``) as one JSON array."""


class StoreError(Exception):
    """A request the store refuses; ``code`` names the gRPC status to answer with."""

    def __init__(self, code: str, message: str, retry_after_s: float = 0.0) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after_s = retry_after_s
        """With RESOURCE_EXHAUSTED: how long until the same request may succeed."""


@dataclass(frozen=True)
class OwnerLimits:
    """What a registration may do (``Store.register_bot``); the defaults limit nothing."""

    new_owner: Callable[[], None] | None = None
    """Called before a registration creates an owner; raises ``StoreError`` to refuse it
    (registration closed, or too many new owners from the caller's address)."""
    max_bots: int = 0
    """Bots an owner may have that are not retired (0: no limit)."""
    per_hour: int = 0
    """Bots an owner may register in any hour (0: no limit)."""


NO_LIMITS = OwnerLimits()
HOUR_US = 3_600_000_000


class ClaimLost(StoreError):
    """A worker's result for a match it no longer holds (its lease ran out and the match went
    back to the queue under a new id): not recorded, and its bots must not be told it."""

    def __init__(self, match_id: str, worker: str) -> None:
        super().__init__(
            "FAILED_PRECONDITION",
            f"match {match_id!r} is no longer claimed by worker {worker!r}: not recorded",
        )


RecordOutcome = dict[str, Rating] | None | Exception
"""What recording one finished match of a batch came to: the ratings it set (empty: none),
None if it was already recorded, or the error ``record_result`` would have raised for it
(``ClaimLost``, ``StoreError``)."""


MAX_FAILURES = 3
"""Failed attempts in a row (not a bot's fault) after which a match is parked."""
FAILURE_KINDS = {
    "setup": arena_service_pb2.MATCH_FAILURE_KIND_SETUP,
    "play": arena_service_pb2.MATCH_FAILURE_KIND_PLAY,
    "record": arena_service_pb2.MATCH_FAILURE_KIND_RECORD,
    "interrupted": arena_service_pb2.MATCH_FAILURE_KIND_INTERRUPTED,
}
"""Where a match failed (``matches.failure_kind``), with its wire value."""
DETAIL_LIMIT = 1000
"""Characters of a failure's detail (or a void's reason) kept."""


def bounded(text: str, limit: int = DETAIL_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


OWNER_TOKEN_PREFIX = "cao_"
"""What every owner token starts with: never '-' (a command line would read ``--token -x…`` as
an option; 1 token in 64 did), and a fixed mark secret scanners can look for."""


def new_owner_token() -> str:
    """A new owner token: the prefix and 192 random bits, URL-safe."""
    return OWNER_TOKEN_PREFIX + secrets.token_urlsafe(24)


def now_us() -> int:
    """Microseconds since the Unix epoch."""
    return time.time_ns() // 1000


def hash_token(token: str) -> str:
    """Tokens are stored only as SHA-256 hashes."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token_hash: str, token: str | None) -> bool:
    """Whether ``token`` is the one stored as ``token_hash`` (constant-time; a revoked owner's
    empty hash matches no token)."""
    return token is not None and secrets.compare_digest(token_hash, hash_token(token))


def _refuse_banned(owner: str, banned_reason: str) -> None:
    """PERMISSION_DENIED, with the operator's reason, for a banned owner's token."""
    if banned_reason:
        raise StoreError(
            "PERMISSION_DENIED", f"owner {owner!r} is banned by the operator: {banned_reason}"
        )


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
            endpoint=shown_endpoint(self.endpoint),
            version=self.version,
            state=BOT_STATES[self.state],
            state_detail=self.state_detail,
            transport=transport_of(self.endpoint),  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class Requeued:
    """Where a match given back to the queue went: its new id and status ('waiting', or
    'parked' after too many failures)."""

    match_id: str
    status: str


def unfinished_rotations_sql(match: str) -> str:
    """SQL for how many other rotations of the deal (same set, same seed) of the ``matches`` row
    aliased ``match`` have not finished: while any has not, that match's record, its live moves
    and its ranks and scores are withheld (the one statement of that rule)."""
    return (
        f"(SELECT COUNT(*) FROM matches o WHERE o.set_id = {match}.set_id AND o.seed = "
        f"{match}.seed AND o.match_id <> {match}.match_id AND o.status <> 'finished')"
    )


_UNFINISHED_ROTATIONS = (
    f"SELECT COALESCE((SELECT {unfinished_rotations_sql('m')} FROM matches m "
    "WHERE m.match_id = ?), 0)"
)
"""How many other rotations of a match's deal have not finished (0: no such match)."""


def withheld_message(match_id: str, unfinished: int) -> str:
    """Why a rotation's record or moves are not shown yet."""
    return (
        f"match {match_id!r} is one rotation of a duplicate deal and {unfinished} other "
        "rotation(s) of that deal have not finished: its record and moves show their cards, so "
        "they are withheld until the whole set has finished"
    )


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

_BOT_COLUMNS = (
    "b.bot_id, o.name, b.name, b.game, b.endpoint, b.version, b.state, b.state_detail, "
    "b.health_failures"
)


_STANDING_COLUMNS = (
    f"e.mu, e.sigma, e.matches, e.first_places, e.moves_played, e.faults, {_BOT_COLUMNS}"
)
_STANDING_JOINS = "JOIN bots b ON b.bot_id = e.bot_id JOIN owners o ON o.owner_id = b.owner_id"
SEARCH_CHARS = 64
"""The longest standings search (``GetStandingsRequest.search``)."""
TREND_MATCHES = 10
"""A standing's trend is the change of its displayed rating over this many rated matches."""


_RATING_BEFORE_TREND = (
    f"(SELECT s.mu - {DISPLAY_SIGMAS} * s.sigma FROM match_seats s WHERE s.bot_id = e.bot_id "
    "AND s.mu IS NOT NULL AND (SELECT m.ladder_id FROM matches m WHERE m.match_id = s.match_id) "
    f"= e.ladder_id ORDER BY s.finished_at_us DESC LIMIT 1 OFFSET {TREND_MATCHES})"
)
"""SQL for the displayed rating of entry ``e``'s bot after the rated match just before its
last ``TREND_MATCHES`` in the ladder (NULL when it has played fewer), in the standings' own
statement rather than a round trip a standing. It walks the bot's seats newest first
(``match_seats_by_bot``) and looks each one's ladder up by key: a join to ``matches`` was
planned as a scan of every match, again for every standing, without fresh statistics
(50 s for the standings of 10,000 bots with 80,000 seats)."""


def _trend(rating: float, rating_before: float | None) -> float:
    """How far ``rating`` (a bot's displayed rating now) moved over its last ``TREND_MATCHES``
    rated matches: against its rating after the match before them (``_RATING_BEFORE_TREND``),
    or the initial one when it has played fewer."""
    if rating_before is None:
        rating_before = displayed_rating(INITIAL_MU, INITIAL_SIGMA)
    return float(rating - rating_before)


def _search_filter(
    search: str, bot: str = "LOWER(b.name)", owner: str = "LOWER(o.name)"
) -> tuple[str, tuple[str, ...]]:
    """The SQL condition (`` AND …``, on the lower-cased bot and owner names ``bot`` and
    ``owner``) and its parameters for the bots whose name or owner contains ``search`` (any
    case, no wildcards)."""
    if not search:
        return "", ()
    escaped = search.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    return (
        f" AND ({bot} LIKE ? ESCAPE '\\' OR {owner} LIKE ? ESCAPE '\\')",
        (pattern, pattern),
    )


Authority = tuple[str, str, int]
"""A leadership lease a write is made on: (lease name, holder, epoch)."""


def rating_policy(config: arena_service_pb2.LadderConfig) -> RatingPolicy:
    """A ladder's rating options out of its config."""
    return RatingPolicy(config.min_sigma, config.sigma_growth_per_day)


def _rotation(
    seats: Sequence[str], outcome: record_pb2.MatchOutcome, lower_score_wins: bool
) -> Rotation:
    """A rated match's seats as duplicate scoring reads them."""
    scores = tuple(float(s) for s in outcome.scores)
    return Rotation(tuple(seats), tuple(outcome.ranks), scores, lower_score_wins)


@dataclass
class _RatingInputs:
    """What rating a complete set needs (``Store._rating_inputs``)."""

    current: dict[str, Rating] = field(default_factory=dict)
    idle_us: dict[str, int] = field(default_factory=dict)
    rotations: dict[str, Rotation] = field(default_factory=dict)
    policy: RatingPolicy = field(default_factory=RatingPolicy)
    duplicate: bool = False
    lower_score_wins: bool = False


class Store:
    """The arena's persistent state on a ``Database`` (SQLite or PostgreSQL)."""

    def __init__(self, database: Database, clock: Callable[[], int] = now_us) -> None:
        self.db = database
        self.clock = clock
        """Microseconds since the epoch, for what is shown as of now (idle σ growth)."""
        self._fill_in_concurrency()

    def _fill_in_concurrency(self) -> None:
        """Copy each ladder's concurrency out of its config where the column is still unset
        (ladders stored before schema 12)."""
        with self.db.transaction() as tx:
            rows = tx.all("SELECT ladder_id, config FROM ladders WHERE concurrency = 0")
            updates = [
                (arena_service_pb2.LadderConfig.FromString(bytes(config)).concurrency, ladder_id)
                for ladder_id, config in rows
            ]
            filled = [(value, ladder_id) for value, ladder_id in updates if value > 0]
            if filled:
                tx.many("UPDATE ladders SET concurrency = ? WHERE ladder_id = ?", filled)

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
        limits: OwnerLimits = NO_LIMITS,
    ) -> tuple[BotRow, str | None]:
        """Register a bot; create the owner if new (as ``limits`` allow). Returns the bot and a
        new owner token.

        ``address`` is where the endpoint resolved (the guard's address key; the endpoint's
        own text if not given): an address another owner's bot (not retired) uses is refused.
        """
        new_token = None
        address_key = address or endpoint.lower()
        if endpoint == OUTBOUND_UNNAMED:
            address_key = f"{OUTBOUND}{owner}"  # no address: nothing another owner can share
        with self.db.transaction() as tx:
            self._lock_address(tx, address_key)
            row = tx.one(
                "SELECT owner_id, token_hash, banned_reason FROM owners WHERE name = ?", (owner,)
            )
            if row is None and limits.new_owner is not None:
                limits.new_owner()
            if row is None:
                new_token = new_owner_token()
                owner_id = uuid.uuid4().hex
                tx.execute(
                    "INSERT INTO owners (owner_id, name, token_hash, created_at_us) "
                    "VALUES (?, ?, ?, ?)",
                    (owner_id, owner, hash_token(new_token), now_us()),
                )
            else:
                owner_id = row[0]
                if not token_matches(row[1], token):
                    raise StoreError(
                        "PERMISSION_DENIED",
                        f"owner {owner!r} exists: send its token as 'authorization: Bearer …'",
                    )
                _refuse_banned(owner, row[2])
                self._check_owner_limits(tx, owner_id, limits)
            if tx.one("SELECT 1 FROM bots WHERE owner_id = ? AND name = ?", (owner_id, name)):
                raise StoreError("ALREADY_EXISTS", f"{owner!r} already has a bot named {name!r}")
            self._refuse_shared_address(tx, address_key, owner_id)
            bot_id = uuid.uuid4().hex[:12]
            if endpoint == OUTBOUND_UNNAMED:  # a bot that dials out is reached by its id
                endpoint = OUTBOUND + bot_id
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

    def bot_id_of(self, reference: str) -> str:
        """The id of the bot ``reference`` names: an id, or ``OWNER/NAME`` (names are unique
        per owner); ``StoreError`` NOT_FOUND if no bot has that name."""
        owner, slash, name = reference.partition("/")
        if not slash:
            return reference
        with self.db.transaction() as tx:
            row = tx.one(
                "SELECT b.bot_id FROM bots b JOIN owners o ON o.owner_id = b.owner_id "
                "WHERE o.name = ? AND b.name = ?",
                (owner, name),
            )
        if row is None:
            raise StoreError("NOT_FOUND", f"no bot {reference!r}")
        return str(row[0])

    def bot(self, bot_id: str) -> BotRow:
        """One bot."""
        with self.db.transaction() as tx:
            return self._bot(tx, bot_id)

    def bots(self, states: Sequence[str] = ()) -> list[BotRow]:
        """Every bot, or those in ``states``."""
        sql = f"SELECT {_BOT_COLUMNS} FROM bots b JOIN owners o ON o.owner_id = b.owner_id"
        with self.db.transaction() as tx:
            if states:
                among, params = tx.one_of("b.state", states)
                return [BotRow(*r) for r in tx.all(f"{sql} WHERE {among}", params)]
            return [BotRow(*r) for r in tx.all(sql)]

    def _authorize(self, tx: Tx, bot_id: str, token: str | None) -> BotRow:
        """The bot, if ``token`` is its owner's, the owner is not banned and the operator does
        not hold the bot."""
        bot = self._bot(tx, bot_id)
        row = tx.one(
            "SELECT o.token_hash, o.banned_reason, b.hold, b.hold_reason FROM owners o "
            "JOIN bots b ON b.owner_id = o.owner_id WHERE b.bot_id = ?",
            (bot_id,),
        )
        if not token_matches(row[0], token):
            raise StoreError("PERMISSION_DENIED", f"only {bot.owner!r}'s token changes this bot")
        _refuse_banned(bot.owner, row[1])
        if row[2]:
            raise StoreError(
                "FAILED_PRECONDITION",
                f"bot {bot.name!r} is held by the operator ({row[3]}): only the operator "
                "releases it",
            )
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
        ``OUTBOUND_UNNAMED`` makes the bot one that dials out (reached by its id).

        A new endpoint is refused, like at registration, if its address (``address``, or the
        endpoint's text) is another owner's."""
        with self.db.transaction() as tx:
            bot = self._authorize(tx, bot_id, token)
            if bot.state == BotState.RETIRED:
                raise StoreError("FAILED_PRECONDITION", "a retired bot cannot be changed")
            if endpoint == OUTBOUND_UNNAMED:  # a bot that dials out is reached by its id
                endpoint, address = OUTBOUND + bot_id, f"{OUTBOUND}{bot.owner}"
            moved = bool(endpoint) and endpoint != bot.endpoint
            current = tx.one("SELECT owner_id, address_key FROM bots WHERE bot_id = ?", (bot_id,))
            owner_id, address_key = current
            if moved:
                address_key = address or endpoint.lower()
                self._lock_address(tx, address_key)
                self._refuse_shared_address(tx, address_key, owner_id)
            new_version = bool(version) and version != bot.version
            revalidate = moved or new_version
            if new_version:
                start_new_version(tx, bot_id, bot.version, version, now_us())
            tx.execute(
                "UPDATE bots SET endpoint = ?, version = ?, state = ?, state_detail = ?, "
                "state_changed_us = ?, address_key = ?, validated = validated * ? "
                "WHERE bot_id = ?",
                (
                    endpoint or bot.endpoint,
                    version or bot.version,
                    BotState.VALIDATING if revalidate else bot.state,
                    "" if revalidate else bot.state_detail,
                    now_us(),
                    address_key,
                    0 if revalidate else 1,
                    bot_id,
                ),
            )
            return self._bot(tx, bot_id)

    @retry_transient
    def create_bot_key(self, bot_id: str, token: str | None) -> str:
        """A new key for an outbound bot (its owner's token); any earlier key stops working."""
        with self.db.transaction() as tx:
            bot = self._authorize(tx, bot_id, token)
            if bot.state == BotState.RETIRED:
                raise StoreError("FAILED_PRECONDITION", "a retired bot gets no key")
            if not bot.endpoint.startswith(OUTBOUND):
                raise StoreError(
                    "FAILED_PRECONDITION",
                    "a key opens ConnectBot, which only outbound bots dial: make the bot "
                    "outbound first (UpdateBot with transport OUTBOUND)",
                )
            key = new_bot_key()
            set_key_hash(tx, bot_id, hash_token(key))
            return key

    @retry_transient
    def revoke_bot_key(self, bot_id: str, token: str | None) -> None:
        """Revoke a bot's key (its owner's token); a bot with no key is left as it is."""
        with self.db.transaction() as tx:
            self._authorize(tx, bot_id, token)
            set_key_hash(tx, bot_id, "")

    def may_connect(self, bot_id: str, token: str) -> bool:
        """Whether ``token`` opens the bot's ConnectBot stream (see ``connecting_bot``)."""
        return self.connecting_bot(bot_id, token) is not None

    def connecting_bot(self, bot_id: str, token: str) -> BotRow | None:
        """The bot whose ConnectBot stream ``token`` opens (its owner's token or its key, the
        owner not banned: ``StoreError`` PERMISSION_DENIED with the reason if it is), in one
        read; None for a token that opens nothing; NOT_FOUND if there is no such bot."""
        with self.db.transaction() as tx:
            row = tx.one(
                f"SELECT {_BOT_COLUMNS}, o.token_hash, o.banned_reason, b.key_hash FROM bots b "
                "JOIN owners o ON o.owner_id = b.owner_id WHERE b.bot_id = ?",
                (bot_id,),
            )
        if row is None:
            raise StoreError("NOT_FOUND", f"no bot {bot_id!r}")
        bot, (token_hash, banned, key_hash) = BotRow(*row[:-3]), row[-3:]
        if not (token_matches(token_hash, token) or token_matches(key_hash, token)):
            return None
        _refuse_banned(bot.owner, banned)
        return bot

    @retry_transient
    def set_bot_state(self, bot_id: str, token: str | None, state: str) -> BotRow:
        """Pause, resume or retire a bot. A resumed bot goes back to active if it passed
        validation for its endpoint and version, else to validation (a pause never skips it)."""
        with self.db.transaction() as tx:
            bot = self._authorize(tx, bot_id, token)
            if bot.state == BotState.RETIRED:
                raise StoreError("FAILED_PRECONDITION", "a retired bot stays retired")
            if state == BotState.ACTIVE and bot.state != BotState.PAUSED:
                raise StoreError("FAILED_PRECONDITION", f"only a paused bot resumes ({bot.state})")
            if state == BotState.PAUSED and bot.state == BotState.REJECTED:
                raise StoreError(
                    "FAILED_PRECONDITION",
                    "a rejected bot is validated again by UpdateBot (a new version or endpoint)",
                )
            if state not in (BotState.PAUSED, BotState.ACTIVE, BotState.RETIRED):
                raise StoreError("INVALID_ARGUMENT", "state must be PAUSED, ACTIVE or RETIRED")
            if state == BotState.ACTIVE:
                (validated,) = tx.one("SELECT validated FROM bots WHERE bot_id = ?", (bot_id,))
                state = BotState.ACTIVE if validated else BotState.VALIDATING
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
        """The arena's own state changes (validation, health sweep); never of a bot the
        operator holds (a sweep that read the bot before the operator paused it). A bot the
        arena makes active has passed validation. ``next_probe_us``: when a pulled bot is to be
        probed again (0: at the next sweep)."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE bots SET state = ?, state_detail = ?, health_failures = ?, "
                "state_changed_us = ?, next_probe_us = ?, "
                "validated = CASE WHEN ? = 'active' THEN 1 ELSE validated END "
                "WHERE bot_id = ? AND hold = ''",
                (state, detail, failures, now_us(), next_probe_us, state, bot_id),
            )

    def probe_schedule(self) -> dict[str, int]:
        """When each pulled (unhealthy) bot is due for its next health probe, bot id → µs."""
        with self.db.transaction() as tx:
            return dict(tx.all("SELECT bot_id, next_probe_us FROM bots WHERE state = 'unhealthy'"))

    # -- identity and operator controls ---------------------------------------------------------

    def _check_owner_limits(self, tx: Tx, owner_id: str, limits: OwnerLimits) -> None:
        """Refuse a registration over the owner's bot count or hourly registrations."""
        if limits.max_bots:
            count = tx.one(
                "SELECT COUNT(*) FROM bots WHERE owner_id = ? AND state != 'retired'", (owner_id,)
            )[0]
            if count >= limits.max_bots:
                raise StoreError(
                    "RESOURCE_EXHAUSTED",
                    f"an owner may have {limits.max_bots} bots that are not retired "
                    "(retire one first)",
                    retry_after_s=3600.0,  # waiting does not clear it: a hint not to poll
                )
        if limits.per_hour:
            since = now_us() - HOUR_US
            count, oldest = tx.one(
                "SELECT COUNT(*), MIN(created_at_us) FROM bots WHERE owner_id = ? "
                "AND created_at_us > ?",
                (owner_id, since),
            )
            if count >= limits.per_hour:
                wait_s = (oldest - since) / 1e6
                raise StoreError(
                    "RESOURCE_EXHAUSTED",
                    f"an owner may register {limits.per_hour} bots an hour",
                    retry_after_s=wait_s,
                )

    @staticmethod
    def _owner(tx: Tx, owner: str) -> tuple[str, str, str]:
        """An owner's id, token hash and ban reason ('' if not banned)."""
        row = tx.one(
            "SELECT owner_id, token_hash, banned_reason FROM owners WHERE name = ?", (owner,)
        )
        if row is None:
            raise StoreError("NOT_FOUND", f"no owner {owner!r}")
        return row[0], row[1], row[2]

    @retry_transient
    def create_owner(self, owner: str) -> str:
        """Create an owner with no bots (the admin, when registration is closed); its token."""
        token = new_owner_token()
        with self.db.transaction() as tx:
            if tx.one("SELECT 1 FROM owners WHERE name = ?", (owner,)):
                raise StoreError("ALREADY_EXISTS", f"owner {owner!r} exists")
            tx.execute(
                "INSERT INTO owners (owner_id, name, token_hash, created_at_us) "
                "VALUES (?, ?, ?, ?)",
                (uuid.uuid4().hex, owner, hash_token(token), now_us()),
            )
        return token

    @retry_transient
    def rotate_token(self, owner: str, token: str | None, admin: bool = False) -> str:
        """Give an owner a new token and invalidate the old one: with the owner's token (not
        banned), or as the admin (any owner, also a revoked or banned one)."""
        new_token = new_owner_token()
        with self.db.transaction() as tx:
            owner_id, token_hash, banned = self._owner(tx, owner)
            if not admin:
                if not token_matches(token_hash, token):
                    raise StoreError("PERMISSION_DENIED", f"only {owner!r}'s token rotates it")
                _refuse_banned(owner, banned)
            tx.execute(
                "UPDATE owners SET token_hash = ? WHERE owner_id = ?",
                (hash_token(new_token), owner_id),
            )
        return new_token

    @retry_transient
    def revoke_token(self, owner: str) -> None:
        """Invalidate an owner's token: none works until the admin rotates it."""
        with self.db.transaction() as tx:
            owner_id, _, _ = self._owner(tx, owner)
            tx.execute(  # no token hashes to '' (hashes are 64 hex digits)
                "UPDATE owners SET token_hash = '' WHERE owner_id = ?", (owner_id,)
            )
            revoke_owner_keys(tx, owner_id)

    @retry_transient
    def admin_set_bot_state(self, bot_id: str, state: str, reason: str) -> BotRow:
        """The operator pauses (holds), resumes (releases, to be validated again) or retires
        a bot; ``reason`` goes into its state detail, which its owner sees."""
        with self.db.transaction() as tx:
            bot = self._bot(tx, bot_id)
            hold, banned = tx.one(
                "SELECT b.hold, o.banned_reason FROM bots b JOIN owners o "
                "ON o.owner_id = b.owner_id WHERE b.bot_id = ?",
                (bot_id,),
            )
            if bot.state == BotState.RETIRED:
                raise StoreError("FAILED_PRECONDITION", "a retired bot stays retired")
            if state == BotState.ACTIVE:
                if bot.state != BotState.PAUSED:
                    raise StoreError(
                        "FAILED_PRECONDITION", f"only a paused bot resumes ({bot.state})"
                    )
                if banned:
                    raise StoreError(
                        "FAILED_PRECONDITION", f"owner {bot.owner!r} is banned: unban it first"
                    )
                new_state, hold, detail = (
                    str(BotState.VALIDATING),
                    "",
                    f"resumed by the operator: {reason}",
                )
            elif state in (BotState.PAUSED, BotState.RETIRED):
                new_state, hold, detail = state, "operator", f"{state} by the operator: {reason}"
            else:
                raise StoreError("INVALID_ARGUMENT", "state must be PAUSED, ACTIVE or RETIRED")
            tx.execute(
                "UPDATE bots SET state = ?, state_detail = ?, hold = ?, hold_reason = ?, "
                "health_failures = 0, state_changed_us = ? WHERE bot_id = ?",
                (new_state, detail, hold, reason if hold else "", now_us(), bot_id),
            )
            return self._bot(tx, bot_id)

    @retry_transient
    def ban_owner(self, owner: str, reason: str) -> int:
        """Ban an owner: its token is refused with ``reason`` and every bot of it not retired
        is paused and held (leaves matchmaking). Returns how many bots it paused."""
        with self.db.transaction() as tx:
            owner_id, _, _ = self._owner(tx, owner)
            tx.execute("UPDATE owners SET banned_reason = ? WHERE owner_id = ?", (reason, owner_id))
            tx.execute(  # a bot the operator holds on its own keeps that hold after an unban
                "UPDATE bots SET state = 'paused', hold = 'ban', hold_reason = ?, "
                "state_detail = ?, state_changed_us = ? WHERE owner_id = ? "
                "AND state != 'retired' AND hold != 'operator'",
                (reason, f"owner banned by the operator: {reason}", now_us(), owner_id),
            )
            return tx.rowcount

    @retry_transient
    def unban_owner(self, owner: str) -> int:
        """Lift a ban; the bots it paused stay paused (their owner resumes them). Returns how
        many."""
        with self.db.transaction() as tx:
            owner_id, _, _ = self._owner(tx, owner)
            tx.execute("UPDATE owners SET banned_reason = '' WHERE owner_id = ?", (owner_id,))
            lifted = "its owner's ban was lifted: paused until the owner resumes it"
            tx.execute(
                "UPDATE bots SET hold = '', hold_reason = '', state_detail = ?, "
                "state_changed_us = ? WHERE owner_id = ? AND hold = 'ban'",
                (lifted, now_us(), owner_id),
            )
            return tx.rowcount

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
                "max_matches_per_bot, concurrency) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    ladder_id,
                    config.name,
                    config.settings.game,
                    config.SerializeToString(),
                    now_us(),
                    min(config.max_matches_per_bot, MAX_MATCHES_PER_BOT_LIMIT),
                    config.concurrency,
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
            "INSERT INTO entries (ladder_id, bot_id, mu, sigma, changed_us, version) "
            "SELECT ?, b.bot_id, ?, ?, ?, b.version FROM bots b WHERE b.game = ? "
            "AND b.state = 'active' AND b.state_changed_us >= ? AND NOT EXISTS "
            "(SELECT 1 FROM entries e WHERE e.ladder_id = ? AND e.bot_id = b.bot_id) "
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
                f"SELECT e.bot_id, {DISPLAY_SQL}, e.sigma, e.scheduled, b.owner_id, "
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
            Entrant(
                bot, displayed_rating(mu, sigma), sigma, scheduled + in_flight[bot], owner, address
            )
            for bot, state, mu, sigma, scheduled, owner, address in rows
            if state == BotState.ACTIVE and mu is not None
        ]
        gone = [bot for bot, state, *_ in rows if state != BotState.ACTIVE]
        return EntrantChanges(active, gone, next_since)

    def count_entrants(self, ladder_id: str, search: str = "") -> int:
        """How many bots a ladder has (the length of its whole standings), or how many of them
        match ``search`` (see ``standings``)."""
        where, params = _search_filter(search)
        joins = f" {_STANDING_JOINS}" if search else ""
        with self.db.transaction() as tx:
            row = tx.one(
                f"SELECT COUNT(*) FROM entries e{joins} WHERE e.ladder_id = ?{where}",
                (ladder_id, *params),
            )
            return int(row[0])

    def standings(
        self, ladder_id: str, limit: int = 0, offset: int = 0, search: str = ""
    ) -> list[arena_service_pb2.Standing]:
        """Entrants best first by μ − 3σ (ties by bot id): ``limit`` of them (0: all) after the
        best ``offset``; with ``search``, only the bots whose name or owner contains it
        (case-insensitive), still at their ladder positions. One statement reads one row per
        entrant shown and, for its trend, one indexed row: moves and faults are counted in the
        entries as results come in, not summed over the ladder's history."""
        page = f" LIMIT {int(limit) or 2**62} OFFSET {int(offset)}" if limit or offset else ""
        with self.db.transaction() as tx:
            # Entries are ranked (and paged) alone, then joined: only the lines shown are
            # joined to their bots and owners, except that a search reads every name.
            if search:  # the matching bots first (one pass over the names), then ranked
                where, params = _search_filter(search)
                rows = tx.all(
                    "WITH found AS (SELECT b.bot_id FROM bots b JOIN owners o "
                    f"ON o.owner_id = b.owner_id WHERE TRUE{where}), ranked AS (SELECT e.bot_id, "
                    f"ROW_NUMBER() OVER (ORDER BY {DISPLAY_SQL} DESC, e.bot_id) AS position "
                    "FROM entries e WHERE e.ladder_id = ?) SELECT "
                    f"{_STANDING_COLUMNS}, r.position, e.rated_us, {_RATING_BEFORE_TREND} "
                    "FROM ranked r JOIN found f ON f.bot_id = r.bot_id JOIN entries e "
                    "ON e.ladder_id = ? "
                    f"AND e.bot_id = r.bot_id {_STANDING_JOINS} ORDER BY r.position{page}",
                    (*params, ladder_id, ladder_id),
                )
            else:
                rows = tx.all(
                    f"SELECT {_STANDING_COLUMNS}, 0, e.rated_us, {_RATING_BEFORE_TREND} "
                    "FROM (SELECT * FROM entries e "
                    f"WHERE e.ladder_id = ? ORDER BY {DISPLAY_SQL} DESC, e.bot_id{page}) e "
                    f"{_STANDING_JOINS} ORDER BY {DISPLAY_SQL} DESC, e.bot_id",
                    (ladder_id,),
                )
            growth = self._sigma_growth(tx, ladder_id)
            now = self.clock()
            shown = {r[6]: rating_as_of(Rating(r[0], r[1]), r[16], now, growth) for r in rows}
        return [
            arena_service_pb2.Standing(
                position=r[15] or position,
                bot=BotRow(*r[6:15]).to_proto(),
                rating=shown[r[6]].display,
                mu=r[0],
                sigma=shown[r[6]].sigma,
                matches=r[2],
                first_places=r[3],
                fault_rate=100.0 * r[5] / r[4] if r[4] else 0.0,
                trend=_trend(shown[r[6]].display, r[17]),
                rated_at_us=r[16],
            )
            for position, r in enumerate(rows, start=offset + 1)
        ]

    @staticmethod
    def _sigma_growth(tx: Tx, ladder_id: str) -> float:
        """A ladder's ``sigma_growth_per_day`` (0 for a ladder that is not there)."""
        row = tx.one("SELECT config FROM ladders WHERE ladder_id = ?", (ladder_id,))
        if row is None:
            return 0.0
        config = arena_service_pb2.LadderConfig.FromString(bytes(row[0]))
        return rating_policy(config).sigma_growth_per_day

    # -- the match queue ------------------------------------------------------------------------

    def enqueue(
        self,
        ladder_id: str | None,
        kind: str,
        planned: Sequence[PlannedMatch],
        target: int | None = None,
        authority: Authority | None = None,
    ) -> bool:
        """Add a set of matches (one, or a duplicate set sharing a deal).

        A ladder set is refused (False, nothing written) unless every bot in it is still
        active: matchmaking works from a cached pool, and a bot paused, retired or pulled since
        must not be scheduled. With ``target``, also unless the ladder's matches waiting and
        being played stay within it with this set; with ``authority``, unless that lease is
        still held (a scheduler deposed since it planned the set writes nothing). The ladder's
        row is locked while counting, so enqueues from any number of processes hold the target
        exactly. See ``enqueue_sets`` (its transaction, for one set)."""
        return self.enqueue_sets(ladder_id, kind, [planned], target, authority)[0]

    @retry_transient
    def enqueue_sets(
        self,
        ladder_id: str | None,
        kind: str,
        sets: Sequence[Sequence[PlannedMatch]],
        target: int | None = None,
        authority: Authority | None = None,
    ) -> list[bool]:
        """``enqueue`` for the sets a scheduler planned in one tick, in one transaction: whether
        each was queued. The lease and the target are checked once, for them all (over the
        target together: none is queued); each set is refused on its own if a bot of it is
        no longer active (the others are queued).

        Not waited onto disk (``durable=False``): a queued set lost in a database crash is
        only a set never queued (the scheduler plans again). It writes no entry: a bot's
        matches in flight are counted from the queue when entrants are read
        (``_in_flight``), and the entry counts a match when its result is recorded.

        Pipelined, the checks sent together: one round trip for them, and the inserts (one
        statement on PostgreSQL, for every set) go with the commit, two in all whatever the
        number of sets (four for one set before, five before pipelining)."""
        if not sets:
            return []
        refused = [False] * len(sets)
        with self.db.transaction(durable=False, pipelined=True) as tx:
            lease = send_lease_check(tx, *authority) if authority is not None else None
            queued = active = None
            bots = sorted({bot for planned in sets for match in planned for bot in match.seats})
            if ladder_id is not None:
                if target is not None:
                    if tx.dialect == "postgres":  # enqueues to one ladder take turns
                        tx.execute(
                            "SELECT 1 FROM ladders WHERE ladder_id = ? FOR UPDATE", (ladder_id,)
                        )
                    queued = tx.send(
                        "SELECT COUNT(*) FROM matches WHERE status IN ('waiting', 'playing') "
                        "AND ladder_id = ?",
                        (ladder_id,),
                    )
                among, params = tx.one_of("bot_id", bots)
                active = tx.send(
                    f"SELECT bot_id FROM bots WHERE state = 'active' AND {among}", params
                )
            if lease is not None and not lease.rows():
                return refused
            adding = sum(len(planned) for planned in sets)
            if queued is not None and int(queued.rows()[0][0]) + adding > (target or 0):
                return refused
            still_active = {row[0] for row in active.rows()} if active is not None else None
            outcomes, rows = [], []
            for planned in sets:
                ok = still_active is None or all(
                    bot in still_active for match in planned for bot in match.seats
                )
                if ok:
                    rows += self._set_rows(ladder_id, kind, planned)
                outcomes.append(ok)
            self._insert_matches(tx, rows)
        return outcomes

    @staticmethod
    def _set_rows(
        ladder_id: str | None, kind: str, planned: Sequence[PlannedMatch]
    ) -> list[QueuedRow]:
        """The queue's rows of one new set: its matches in order, under a new set id."""
        set_id = uuid.uuid4().hex
        created = now_us()
        return [
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
        ]

    @staticmethod
    def _insert_matches(tx: Tx, rows: Sequence[QueuedRow]) -> None:
        """Queue ``rows`` (``_set_rows``), waiting: on PostgreSQL one statement whatever their
        number (as JSON: one parameter, one text), on SQLite (in-process) a statement a row."""
        if not rows:
            return
        if tx.dialect == "postgres":
            tx.execute(_QUEUE_ROWS_INSERT, (json.dumps(rows),))
            return
        tx.many(
            "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
            "created_at_us) VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?)",
            rows,
        )

    @retry_transient
    def enqueue_validation(
        self, bot_id: str, planned: Sequence[PlannedMatch], authority: Authority | None = None
    ) -> bool:
        """Queue a validation set for a bot, unless it is no longer validating or already has
        one queued, running or parked (its row locked first on PostgreSQL, so processes that
        race to validate the same bot queue one set between them)."""
        with self.db.transaction(durable=False) as tx:
            if authority is not None and not holds_lease(tx, *authority):
                return False
            lock = " FOR UPDATE" if tx.dialect == "postgres" else ""
            state = tx.one(f"SELECT state FROM bots WHERE bot_id = ?{lock}", (bot_id,))
            if state is None or state[0] != BotState.VALIDATING or self._has_validation(tx, bot_id):
                return False
            self._insert_matches(tx, self._set_rows(None, "validation", planned))
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
        """Whether validation matches for this bot are queued, running or parked (a parked one
        waits for an operator rather than a new set being queued after it)."""
        with self.db.transaction() as tx:
            return self._has_validation(tx, bot_id)

    @staticmethod
    def _has_validation(tx: Tx, bot_id: str) -> bool:
        row = tx.one(  # status IN (...), not != 'finished': the status index, not a scan
            "SELECT 1 FROM matches WHERE status IN ('waiting', 'playing', 'parked') "
            "AND kind = 'validation' AND seats LIKE ?",
            (f"%{bot_id}%",),
        )
        return row is not None

    def claim(self, worker: str, lease_s: float, ladder_only: bool = False) -> Claim | None:
        """Take the oldest waiting match (``ladder_only``: the oldest ladder match, passing
        validation matches over) none of whose bots is at its limit of matches at once
        (``match_limit``) and whose ladder is below its concurrency, for ``worker`` until the
        lease ends (``arena.store.claims``).

        Not waited onto disk (``durable=False``): a claim lost in a database crash only lets
        the match be played again, and its result still counts once (by match id). It cannot
        be lost behind a result that was not: PostgreSQL's log is one sequence, so the result's
        synchronous commit, later, flushes the claim's commit record with its own; and a
        worker whose claim was lost is refused its result (``ClaimLost``: the match is no
        longer ``playing`` for it), so no bot is told an outcome that the store has not.
        """
        return self.claim_many(worker, lease_s, [ladder_only])[0]

    @retry_transient
    def claim_many(
        self, worker: str, lease_s: float, ladder_only: Sequence[bool]
    ) -> list[Claim | None]:
        """``claim`` once per item of ``ladder_only``, in one transaction (not waited onto
        disk, as ``claim``): what each got, in order. For a process with several workers free
        at once (the result writer frees them together): the matches being played are read
        once for them all, and on PostgreSQL the statements go in three round trips. Each
        claim sees the matches the ones before it claimed."""
        now = now_us()
        with self.db.transaction(durable=False, pipelined=True) as tx:
            return claim_in(tx, worker, now, now + int(lease_s * 1e6), ladder_only)

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
    def release(self, match_id: str, worker: str) -> str | None:
        """Give a claimed match back to the queue, to be played again from the start under a
        new id (returned; None if the match is no longer ``worker``'s). Not a failure: for a
        match stopped with the arena."""
        with self.db.transaction() as tx:
            requeued = self._requeue(tx, match_id, worker, None, MAX_FAILURES)
        return requeued.match_id if requeued else None

    @retry_transient
    def fail(
        self, match_id: str, worker: str, kind: str, detail: str, max_failures: int = MAX_FAILURES
    ) -> Requeued | None:
        """A claimed match failed for a reason that is not a bot's fault (``kind``: one of
        ``FAILURE_KINDS``): back to the queue under a new id, or parked once it has failed
        ``max_failures`` times in a row. None if the match is no longer ``worker``'s."""
        if kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}")
        with self.db.transaction() as tx:
            return self._requeue(tx, match_id, worker, (kind, detail), max_failures)

    @retry_transient
    def recover(self, worker: str | None, max_failures: int = MAX_FAILURES) -> int:
        """Requeue the matches whose worker is gone and (``worker`` given: at its start, or
        when its own registration ran out) every match ``worker`` held before, each under a
        new id and counted as an interrupted attempt.

        A worker is gone when its registration's lease (``workers``, renewed by its heartbeat)
        ran out, or it has none and the match's own lease ran out (a claim made without a
        registration: the lease given at the claim). A live worker's matches are never taken."""
        with self.db.transaction() as tx:
            skip = " FOR UPDATE OF m SKIP LOCKED" if tx.dialect == "postgres" else ""
            rows = tx.all(
                "SELECT m.match_id, m.claimed_by FROM matches m LEFT JOIN workers w ON "
                "w.worker_id = m.claimed_by WHERE m.status = 'playing' AND m.kind <> 'tournament' "
                "AND (m.claimed_by = ? "
                f"OR (w.worker_id IS NULL AND m.lease_until_us < ?) "
                f"OR w.alive_until_us <= {tx.clock}){skip}",
                (worker or "", now_us()),
            )
            for match_id, held_by in rows:
                detail = f"worker {held_by!r} stopped or lost its lease before the end"
                self._requeue(tx, match_id, None, ("interrupted", detail), max_failures)
            return len(rows)

    @staticmethod
    def _requeue(
        tx: Tx,
        match_id: str,
        worker: str | None,
        failure: tuple[str, str] | None,
        max_failures: int,
    ) -> Requeued | None:
        """Put a match being played back in the queue under a new id (nothing references an
        unfinished match: records and seat rows are written when it finishes); with a
        ``failure``, count it and park the match at ``max_failures``."""
        new_id = uuid.uuid4().hex
        failed = 1 if failure else 0
        kind, detail = (failure[0], bounded(failure[1])) if failure else (None, None)
        park = "? = 1 AND failures + 1 >= ?"
        row = tx.one(
            "UPDATE matches SET match_id = ?, claimed_by = NULL, lease_until_us = NULL, "
            f"status = CASE WHEN {park} THEN 'parked' ELSE 'waiting' END, "
            f"parked_at_us = CASE WHEN {park} THEN ? ELSE NULL END, "
            "failures = failures + ?, failure_kind = COALESCE(?, failure_kind), "
            "failure_detail = COALESCE(?, failure_detail) "
            "WHERE match_id = ? AND status = 'playing'"
            + (" AND claimed_by = ?" if worker is not None else "")
            + " RETURNING status",
            (
                new_id,
                failed,
                max_failures,
                failed,
                max_failures,
                now_us(),
                failed,
                kind,
                detail,
                match_id,
                *((worker,) if worker is not None else ()),
            ),
        )
        return Requeued(new_id, row[0]) if row else None

    # -- parked matches -------------------------------------------------------------------------

    def parked_matches(self, limit: int) -> tuple[list[arena_service_pb2.ParkedMatch], int]:
        """The oldest ``limit`` parked matches, and how many are parked in all."""
        with self.db.transaction() as tx:
            rows = tx.all(
                "SELECT match_id, COALESCE(ladder_id, ''), kind, seats, failures, failure_kind, "
                "failure_detail, parked_at_us FROM matches WHERE status = 'parked' "
                "ORDER BY created_at_us LIMIT ?",
                (limit,),
            )
            total = tx.one("SELECT COUNT(*) FROM matches WHERE status = 'parked'")[0]
        return [
            arena_service_pb2.ParkedMatch(
                match_id=row[0],
                ladder_id=row[1],
                kind=row[2],
                bot_ids=row[3].split(","),
                failures=row[4],
                failure_kind=FAILURE_KINDS.get(row[5] or "", 0),  # type: ignore[arg-type]
                failure_detail=row[6] or "",
                parked_at_us=row[7] or 0,
            )
            for row in rows
        ], int(total)

    def parked_counts(self) -> Counter[str]:
        """Parked matches by the kind of their last failure (for the metrics)."""
        with self.db.transaction() as tx:
            rows = tx.all(
                "SELECT failure_kind, COUNT(*) FROM matches WHERE status = 'parked' "
                "GROUP BY failure_kind"
            )
        return Counter({kind or "": int(count) for kind, count in rows})

    def _parked(self, tx: Tx, match_id: str) -> None:
        row = tx.one("SELECT status FROM matches WHERE match_id = ?", (match_id,))
        if row is None:
            raise StoreError("NOT_FOUND", f"no match {match_id!r}")
        if row[0] != "parked":
            raise StoreError("FAILED_PRECONDITION", f"match {match_id!r} is {row[0]}, not parked")

    @retry_transient
    def requeue_parked(self, match_id: str) -> None:
        """Put a parked match back in the queue (same id: it was never played under it), its
        failure count reset."""
        with self.db.transaction() as tx:
            self._parked(tx, match_id)
            tx.execute(
                "UPDATE matches SET status = 'waiting', failures = 0, parked_at_us = NULL "
                "WHERE match_id = ? AND status = 'parked'",
                (match_id,),
            )

    # -- results --------------------------------------------------------------------------------

    def record_result(
        self, record: record_pb2.MatchRecord, worker: str | None = None
    ) -> dict[str, Rating] | None:
        """Store a finished match and apply it: the new ratings it set (empty if it rated
        nothing), or None if it was already recorded (no change).

        With ``worker``, only while that worker still holds the match: else ``ClaimLost``
        (its lease ran out and the match went back to the queue under a new id)."""
        (outcome,) = self._record_batch([record], worker)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def record_results(
        self, records: Sequence[record_pb2.MatchRecord], worker: str | None = None
    ) -> list[RecordOutcome]:
        """``record_result`` for several finished matches in one transaction (one commit, one
        disk flush for them all): each match's outcome, in order, as ``record_result`` would
        return or raise it (``ClaimLost`` or ``StoreError`` as a value).

        One match's refusal (lost claim, already recorded, unknown) writes nothing for it and
        nothing less for the others. Two rotations of one set in a batch are applied in turn,
        as two transactions would be: the set is rated once. Should the batch's transaction
        fail for another reason, each match is recorded again on its own, so that one bad
        match costs the others nothing (its error is its outcome)."""
        if len(records) <= 1:
            return self._record_batch(records, worker)
        try:
            return self._record_batch(records, worker)
        except Exception:
            log.warning("a batch of %d results failed: recording each alone", len(records))
        outcomes: list[RecordOutcome] = []
        for record in records:
            try:
                outcomes.extend(self._record_batch([record], worker))
            except Exception as error:
                outcomes.append(error)
        return outcomes

    @retry_transient
    def _record_batch(
        self, records: Sequence[record_pb2.MatchRecord], worker: str | None
    ) -> list[RecordOutcome]:
        """``record_results`` in one transaction: the batch's reads (``ResultBatch.read``),
        then each match checked and applied in order against them (see ``_finish`` for the
        round trips)."""
        if not records:
            return []
        with self.db.transaction(pipelined=True) as tx:
            batch = ResultBatch.read(tx, [record.match_id for record in records])
            writes = FinishedWrites()
            outcomes = [self._record_one(tx, batch, writes, record, worker) for record in records]
            writes.flush(tx)
            return outcomes

    def _record_one(
        self,
        tx: Tx,
        batch: ResultBatch,
        writes: FinishedWrites,
        record: record_pb2.MatchRecord,
        worker: str | None,
    ) -> RecordOutcome:
        """One match of a batch: checked against the batch's rows as they stand, written, and
        applied to them for the matches after it."""
        rows = batch.set_rows(record.match_id)
        this = next((row for row in rows if row[0] == record.match_id), None)
        if this is None:
            if worker is not None:
                return ClaimLost(record.match_id, worker)
            return StoreError("NOT_FOUND", f"no match {record.match_id!r}")
        if this[1] == "finished":
            return None
        if worker is not None and (this[1] != "playing" or this[6] != worker):
            return ClaimLost(record.match_id, worker)
        ratings = self._finish(
            tx, writes, record, rows, validate=True, reads=batch.reads_for(record.match_id)
        )
        rated = record.status in RATED_STATUSES
        seats = this[4].split(",")
        batch.finished(
            record.match_id,
            int(record.status),
            [
                (bot, record.outcome.ranks[seat], float(record.outcome.scores[seat]))
                for seat, bot in enumerate(seats)
            ]
            if rated
            else [],
            {bot: (rating.mu, rating.sigma) for bot, rating in ratings.items()},
            now_us(),
        )
        return ratings

    @retry_transient
    def void_parked(self, match_id: str, reason: str) -> None:
        """End a parked match without playing it: a record with status VOIDED (not rated; a
        duplicate set is rated from its other rotations once this completes it). A validation
        match voided so leaves its bot validating (a new set is queued), not rejected."""
        with self.db.transaction() as tx:
            rows = self._lock_set(tx, match_id)
            self._parked(tx, match_id)  # read under the lock: not requeued meanwhile
            ladder_id, _, seats_text = next(row for row in rows if row[0] == match_id)[2:5]
            seed, failures, failure_kind, failure_detail = tx.one(
                "SELECT seed, failures, failure_kind, failure_detail FROM matches "
                "WHERE match_id = ?",
                (match_id,),
            )
            seats = seats_text.split(",")
            endpoints = dict(
                tx.all(
                    "SELECT bot_id, endpoint FROM bots WHERE bot_id IN "
                    f"({', '.join('?' for _ in seats)})",
                    seats,
                )
            )
            if ladder_id is not None:
                config = tx.one("SELECT config FROM ladders WHERE ladder_id = ?", (ladder_id,))[0]
                settings = arena_service_pb2.LadderConfig.FromString(bytes(config)).settings
            else:  # a validation match: the game of the bot it validates
                bot = next(bot for bot in seats if bot != HOUSE_RANDOM)
                game = tx.one("SELECT game FROM bots WHERE bot_id = ?", (bot,))[0]
                settings = options_pb2.GameSettings(game=game, num_seats=len(seats))
            detail = (
                f"voided by an operator after {failures} failed attempt(s) "
                f"(last: {failure_kind}: {failure_detail})"
            )
            record = record_pb2.MatchRecord(
                match_id=match_id,
                settings=settings,
                seed=int(seed),
                seats=[
                    record_pb2.SeatAssignment(seat=seat, endpoint=endpoints.get(bot, ""))
                    for seat, bot in enumerate(seats)
                ],
                status=record_pb2.MATCH_STATUS_VOIDED,
                status_detail=bounded(f"{detail}; reason: {reason}" if reason else detail),
                finished_at_us=now_us(),
            )
            writes = FinishedWrites()
            self._finish(tx, writes, record, rows, validate=False)
            writes.flush(tx)

    @staticmethod
    def _lock_set(tx: Tx, match_id: str) -> list[Any]:
        """Every match of ``match_id``'s set (id, status, ladder, kind, seats, result status,
        claimed by), locked in one order: of two rotations finishing at once, the second waits
        for the first and sees it finished, so the set is rated once."""
        return tx.all(
            SET_ROWS_SQL + (" FOR UPDATE" if tx.dialect == "postgres" else ""), (match_id,)
        )

    def _finish(
        self,
        tx: Tx,
        writes: FinishedWrites,
        record: record_pb2.MatchRecord,
        rows: Sequence[Any],
        *,
        validate: bool,
        reads: SetReads | None = None,
    ) -> dict[str, Rating]:
        """Mark the match finished with ``record`` and apply it (``validate``: a validation
        match's result to its bot): the new ratings it set (empty if it rated nothing).

        Its writes join ``writes`` (sent with the batch's, ``FinishedWrites.flush``), but a
        validation match's are sent at once: its bot's verdict reads the queue. On PostgreSQL,
        with the set's reads made before (``ResultBatch``), nothing more is read for a ladder
        match: a batch costs two round trips in all."""
        this = next(row for row in rows if row[0] == record.match_id)
        _, _, ladder_id, kind, seats_text, _, _ = this
        seats = seats_text.split(",")
        finished = record.finished_at_us or now_us()
        summaries = summaries_of(record, len(seats))
        ratings: dict[str, Rating] = {}
        entries: list[EntryChange] = []
        if kind != "validation" and ladder_id is not None:
            ratings, entries = self._ladder_changes(tx, record, rows, seats, summaries, reads)
        writes.add(
            record.match_id,
            int(record.status),
            finished,
            record.SerializeToString(),
            self._seat_rows(record, seats, ratings, summaries),
            ladder_id,
            entries,
            now_us(),
        )
        if kind == "validation" and validate:
            writes.flush(tx)
            self._apply_validation(tx, record, seats)
        self._record_faults(tx, record, seats, summaries)
        return ratings

    def _ladder_changes(
        self,
        tx: Tx,
        record: record_pb2.MatchRecord,
        rows: Sequence[Any],
        seats: Sequence[str],
        summaries: Sequence[record_pb2.SeatSummary],
        reads: SetReads | None,
    ) -> tuple[dict[str, Rating], list[EntryChange]]:
        """What a ladder match changes in its bots' entries: the set's new ratings if it
        completed a rated set (else none), and each bot's matches, moves and faults."""
        ladder_id = next(row for row in rows if row[0] == record.match_id)[2]
        others = [row for row in rows if row[0] != record.match_id]
        played = Counter(seats)
        moves: Counter[str] = Counter()
        faults: Counter[str] = Counter()
        for bot, summary in zip(seats, summaries, strict=True):
            moves[bot] += summary.moves
            faults[bot] += summary.faults
        per_match: list[Rotation] = []  # each rated match of the set, once it is complete
        inputs = _RatingInputs()
        rated = [other[0] for other in others if other[5] in RATED_STATUSES]
        complete = all(row[1] == "finished" for row in others)
        if complete and (rated or record.status in RATED_STATUSES):
            inputs = self._rating_inputs(tx, ladder_id, rows, rated, reads)
            per_match = [inputs.rotations[m] for m in rated if m in inputs.rotations]
            if record.status in RATED_STATUSES:
                per_match.append(_rotation(seats, record.outcome, inputs.lower_score_wins))
        if not per_match:  # the set is not complete, or nothing in it is rated: count the match
            return {}, [
                EntryChange(bot, None, None, 0, 0, played[bot], moves[bot], faults[bot])
                for bot in sorted(played)
            ]
        new_ratings = rate_set(
            inputs.current, per_match, inputs.duplicate, inputs.policy, inputs.idle_us
        )
        firsts = first_places(per_match)
        return new_ratings, [
            EntryChange(
                bot,
                new_ratings[bot].mu,
                new_ratings[bot].sigma,
                sum(bot in rotation.seats for rotation in per_match),
                firsts.get(bot, 0),
                played[bot],
                moves[bot],
                faults[bot],
            )
            for bot in sorted(new_ratings)
        ]

    @staticmethod
    def _seat_rows(
        record: record_pb2.MatchRecord,
        seats: Sequence[str],
        ratings: dict[str, Rating],
        summaries: Sequence[record_pb2.SeatSummary],
    ) -> list[SeatRow]:
        """A row per seat: result, moves, faults, latency summary and, if this match completed
        a rated set, the bot's rating after it (its rating history)."""
        rated = record.status in RATED_STATUSES
        rows: list[SeatRow] = []
        for seat, bot_id in enumerate(seats):
            summary = summaries[seat]
            timed = summary.moves > 0 and bot_id != HOUSE_RANDOM
            after = ratings.get(bot_id)
            rows.append(
                (
                    seat,
                    bot_id,
                    record.outcome.ranks[seat] if rated else 0,
                    record.outcome.scores[seat] if rated else 0,
                    summary.moves,
                    summary.faults,
                    summary.elapsed_sum_us,
                    summary.elapsed_p50_us if timed else None,
                    summary.elapsed_p95_us if timed else None,
                    after.mu if after else None,
                    after.sigma if after else None,
                )
            )
        return rows

    @staticmethod
    def _record_faults(
        tx: Tx,
        record: record_pb2.MatchRecord,
        seats: Sequence[str],
        summaries: Sequence[record_pb2.SeatSummary],
    ) -> None:
        """Count the match's faults by bot and kind (``bot_faults``)."""
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
            if bot.state != BotState.VALIDATING:
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
                "SELECT COUNT(*) FROM matches WHERE status IN ('waiting', 'playing', 'parked') "
                "AND kind = 'validation' AND seats LIKE ?",
                (f"%{bot_id}%",),
            )[0]
            if pending == 0:
                tx.execute(
                    "UPDATE bots SET state = 'active', state_detail = 'passed validation', "
                    "validated = 1, state_changed_us = ? WHERE bot_id = ?",
                    (now_us(), bot_id),
                )

    @staticmethod
    def _rating_inputs(
        tx: Tx,
        ladder_id: str,
        rows: Sequence[Any],
        rated: Sequence[str],
        reads: SetReads | None = None,
    ) -> _RatingInputs:
        """What rating a complete set needs, in one round trip (three queries sent together,
        unless ``send_set_reads`` sent them with the set's rows): the ratings of the bots
        seated in the set (``rows``, from ``_lock_set``) and when each was last rated, each
        ``rated`` match's seats (bot, rank, score), and the ladder's rating options.

        The entries are locked in bot order before they are read: no lost update when two
        processes rate sets sharing a bot, and no deadlock (same order everywhere)."""
        if reads is None:
            reads = Store._send_rating_reads(tx, ladder_id, rows, rated)
        entries, seat_rows, config = reads.entries, reads.rated_seats, reads.config
        inputs = _RatingInputs()
        now = now_us()
        for bot, mu, sigma, rated_us in entries.rows():
            inputs.current[bot] = Rating(mu, sigma)
            inputs.idle_us[bot] = idle_since(rated_us, now)
        seats_of: dict[str, list[tuple[str, int, float]]] = {}
        for match_id, bot, rank, score in seat_rows.rows():
            seats_of.setdefault(match_id, []).append((bot, rank, float(score)))
        (blob,) = config.rows()[0]
        ladder = arena_service_pb2.LadderConfig.FromString(bytes(blob))
        inputs.policy, inputs.duplicate = rating_policy(ladder), ladder.duplicate_deals
        inputs.lower_score_wins = ladder.duplicate_deals and lower_score_wins(ladder.settings)
        inputs.rotations = {
            match_id: Rotation(
                tuple(bot for bot, _, _ in seated),
                tuple(rank for _, rank, _ in seated),
                tuple(score for _, _, score in seated),
                inputs.lower_score_wins,
            )
            for match_id, seated in seats_of.items()
            if len(seated) >= 2
        }
        return inputs

    @staticmethod
    def _send_rating_reads(
        tx: Tx, ladder_id: str, rows: Sequence[Any], rated: Sequence[str]
    ) -> SetReads:
        """``_rating_inputs``'s three reads, sent together (the set's rows already read)."""
        lock = " FOR UPDATE" if tx.dialect == "postgres" else ""
        bots = sorted({bot for row in rows for bot in row[4].split(",")} - {HOUSE_RANDOM})
        entries = tx.send(
            "SELECT bot_id, mu, sigma, rated_us FROM entries WHERE ladder_id = ? AND bot_id IN "
            f"({', '.join('?' for _ in bots)}) ORDER BY bot_id{lock}",
            (ladder_id, *bots),
        )
        seat_rows = (
            tx.send(
                "SELECT match_id, bot_id, rank, score FROM match_seats WHERE match_id IN "
                f"({', '.join('?' for _ in rated)}) ORDER BY match_id, seat",
                rated,
            )
            if rated
            else Pending(list)
        )
        config = tx.send("SELECT config FROM ladders WHERE ladder_id = ?", (ladder_id,))
        return SetReads(Pending(lambda: list(rows)), entries, seat_rows, config)

    # -- reading results ------------------------------------------------------------------------

    def match_record(self, match_id: str) -> record_pb2.MatchRecord:
        """A finished match's record; withheld (FAILED_PRECONDITION) while another rotation of
        its duplicate deal has not finished: its seed and moves show that rotation's cards."""
        with self.db.transaction() as tx:
            row = tx.one("SELECT record FROM records WHERE match_id = ?", (match_id,))
            if row is None:
                raise StoreError("NOT_FOUND", f"no finished match {match_id!r}")
            unfinished = int(tx.one(_UNFINISHED_ROTATIONS, (match_id,))[0])
        if unfinished:
            raise StoreError("FAILED_PRECONDITION", withheld_message(match_id, unfinished))
        return record_pb2.MatchRecord.FromString(bytes(row[0]))

    def token_owner(self, token: str) -> str | None:
        """The name of the owner whose token this is (banned or not), or None: who is asking,
        for what a read shows (``arena.public``)."""
        with self.db.transaction() as tx:
            row = tx.one("SELECT name FROM owners WHERE token_hash = ?", (hash_token(token),))
        return None if row is None else str(row[0])

    def seat_owners(self, match_id: str) -> tuple[str, ...]:
        """The owner of each seat's bot in a match, in seat order ('' for the house bot and a
        bot no longer stored): which seats of its record a viewer may see in full."""
        with self.db.transaction() as tx:
            row = tx.one("SELECT seats FROM matches WHERE match_id = ?", (match_id,))
            if row is None:
                return ()
            seats = row[0].split(",")
            bots = sorted(set(seats) - {HOUSE_RANDOM})
            owners: dict[str, str] = {}
            if bots:
                among, params = tx.one_of("b.bot_id", bots)
                owners = dict(
                    tx.all(
                        "SELECT b.bot_id, o.name FROM bots b JOIN owners o "
                        f"ON o.owner_id = b.owner_id WHERE {among}",
                        params,
                    )
                )
        return tuple(str(owners.get(bot, "")) for bot in seats)

    def rotations_unfinished(self, match_id: str) -> int:
        """How many other rotations of the match's duplicate deal have not finished (0 for a
        match that is not part of one): while any has not, the match's record, its live
        moves and its rank and score are withheld."""
        with self.db.transaction() as tx:
            return int(tx.one(_UNFINISHED_ROTATIONS, (match_id,))[0])

    def profile(self, bot_id: str, recent: int) -> arena_service_pb2.GetBotProfileResponse:
        """Ratings history, recent matches and fault and latency figures of a bot."""
        with self.db.transaction() as tx:
            bot = self._bot(tx, bot_id)
            response = arena_service_pb2.GetBotProfileResponse(bot=bot.to_proto())
            response.versions.extend(version_figures(tx, bot_id, self.clock()))
            replaced = sorted(
                (v.replaced_at_us, v.version) for v in response.versions if not v.current
            )
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
                        rating=displayed_rating(mu, sigma),
                        mu=mu,
                        sigma=sigma,
                        at_us=at,
                        version=version_at(replaced, bot.version, at),
                    )
                )
            for row in tx.all(
                "SELECT s.match_id, COALESCE(m.ladder_id, ''), m.result_status, s.seat, s.rank, "
                f"s.score, s.faults, s.finished_at_us, {unfinished_rotations_sql('m')} "
                "FROM match_seats s JOIN matches m ON m.match_id = s.match_id "
                "WHERE s.bot_id = ? ORDER BY s.finished_at_us DESC LIMIT ?",
                (bot_id, recent),
            ):
                withheld = bool(row[8])  # the rank and score say something about the deal
                response.recent_matches.append(
                    arena_service_pb2.MatchSummary(
                        match_id=row[0],
                        ladder_id=row[1],
                        status=row[2],
                        seat=row[3],
                        rank=0 if withheld else row[4],
                        score=0 if withheld else row[5],
                        faults=row[6],
                        finished_at_us=row[7],
                        withheld=withheld,
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
