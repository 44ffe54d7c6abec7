"""The store's schema as numbered migrations (never edit one that has shipped; add the next)."""

from __future__ import annotations

from collections.abc import Callable


def _v1(dialect: str) -> list[str]:
    blob = "BYTEA" if dialect == "postgres" else "BLOB"
    return [
        """CREATE TABLE owners (
            owner_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            token_hash TEXT NOT NULL,
            created_at_us BIGINT NOT NULL)""",
        """CREATE TABLE bots (
            bot_id TEXT PRIMARY KEY,
            owner_id TEXT NOT NULL REFERENCES owners (owner_id),
            name TEXT NOT NULL,
            game TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            version TEXT NOT NULL,
            state TEXT NOT NULL,
            state_detail TEXT NOT NULL DEFAULT '',
            health_failures INTEGER NOT NULL DEFAULT 0,
            created_at_us BIGINT NOT NULL,
            UNIQUE (owner_id, name))""",
        f"""CREATE TABLE ladders (
            ladder_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            game TEXT NOT NULL,
            config {blob} NOT NULL,
            created_at_us BIGINT NOT NULL)""",
        """CREATE TABLE entries (
            ladder_id TEXT NOT NULL REFERENCES ladders (ladder_id),
            bot_id TEXT NOT NULL REFERENCES bots (bot_id),
            mu DOUBLE PRECISION NOT NULL,
            sigma DOUBLE PRECISION NOT NULL,
            matches INTEGER NOT NULL DEFAULT 0,
            scheduled INTEGER NOT NULL DEFAULT 0,
            first_places INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (ladder_id, bot_id))""",
        """CREATE TABLE matches (
            match_id TEXT PRIMARY KEY,
            ladder_id TEXT,
            set_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            seed BIGINT NOT NULL,
            seats TEXT NOT NULL,
            status TEXT NOT NULL,
            claimed_by TEXT,
            lease_until_us BIGINT,
            attempts INTEGER NOT NULL DEFAULT 0,
            result_status INTEGER,
            created_at_us BIGINT NOT NULL,
            finished_at_us BIGINT)""",
        "CREATE INDEX matches_by_status ON matches (status, created_at_us)",
        "CREATE INDEX matches_by_set ON matches (set_id)",
        f"""CREATE TABLE records (
            match_id TEXT PRIMARY KEY REFERENCES matches (match_id),
            record {blob} NOT NULL)""",
        """CREATE TABLE match_seats (
            match_id TEXT NOT NULL REFERENCES matches (match_id),
            seat INTEGER NOT NULL,
            bot_id TEXT NOT NULL,
            rank INTEGER NOT NULL,
            score BIGINT NOT NULL,
            moves INTEGER NOT NULL,
            faults INTEGER NOT NULL,
            latency_sum_us BIGINT NOT NULL,
            finished_at_us BIGINT NOT NULL,
            PRIMARY KEY (match_id, seat))""",
        "CREATE INDEX match_seats_by_bot ON match_seats (bot_id, finished_at_us)",
        """CREATE TABLE bot_faults (
            bot_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            count BIGINT NOT NULL,
            PRIMARY KEY (bot_id, kind))""",
        """CREATE TABLE bot_latency (
            bot_id TEXT NOT NULL,
            match_id TEXT NOT NULL,
            p50_us BIGINT NOT NULL,
            p95_us BIGINT NOT NULL,
            moves INTEGER NOT NULL,
            PRIMARY KEY (bot_id, match_id))""",
        """CREATE TABLE rating_history (
            ladder_id TEXT NOT NULL,
            bot_id TEXT NOT NULL,
            match_id TEXT NOT NULL,
            mu DOUBLE PRECISION NOT NULL,
            sigma DOUBLE PRECISION NOT NULL,
            at_us BIGINT NOT NULL,
            PRIMARY KEY (ladder_id, bot_id, match_id))""",
    ]


def _v2(dialect: str) -> list[str]:
    """Indexes for 10,000 bots and a long match history (see benchmarks/ladder.py).

    Without them ``ladders()`` and ``standings()`` scanned every match ever played to find a
    ladder's, and every scheduling tick scanned all bots for their state.
    """
    del dialect
    return [
        "CREATE INDEX matches_by_ladder ON matches (ladder_id, status)",
        "CREATE INDEX bots_by_state ON bots (state, game)",
        # Covers the entrants join (bot_id -> state) without reading the bots table.
        "CREATE INDEX bots_state_by_id ON bots (bot_id, state)",
    ]


def _v3(dialect: str) -> list[str]:
    """When each bot's state last changed, so a scheduling tick reads only the bots that joined
    or left a ladder since the one before (not all 10,000 entrants); see ``Store.entrant_changes``.
    """
    del dialect
    return [
        "ALTER TABLE bots ADD COLUMN state_changed_us BIGINT NOT NULL DEFAULT 0",
        "CREATE INDEX bots_by_state_change ON bots (game, state_changed_us)",
    ]


def _v4(dialect: str) -> list[str]:
    """A seat row also carries the bot's latency summary and, on the match that completed a
    rated set, its rating after it: one row per bot and match instead of three (``bot_latency``
    and ``rating_history`` were keyed the same way), so recording a result writes a third fewer
    pages. Existing rows are carried over; a rating point's time becomes its match's end.

    Entries carry when their rating or matches scheduled last changed, so a matchmaking pool
    catches up with other processes' results from the rows that changed (no index: the column
    is written with the row, at no extra page)."""
    del dialect

    def carried(column: str, table: str) -> str:
        return (
            f"(SELECT t.{column} FROM {table} t WHERE t.match_id = match_seats.match_id "
            "AND t.bot_id = match_seats.bot_id)"
        )

    return [
        "ALTER TABLE match_seats ADD COLUMN p50_us BIGINT",
        "ALTER TABLE match_seats ADD COLUMN p95_us BIGINT",
        "ALTER TABLE match_seats ADD COLUMN mu DOUBLE PRECISION",
        "ALTER TABLE match_seats ADD COLUMN sigma DOUBLE PRECISION",
        "UPDATE match_seats SET "
        f"p50_us = {carried('p50_us', 'bot_latency')}, p95_us = {carried('p95_us', 'bot_latency')}",
        "CREATE INDEX rating_history_by_match ON rating_history (match_id, bot_id)",
        "UPDATE match_seats SET "
        f"mu = {carried('mu', 'rating_history')}, sigma = {carried('sigma', 'rating_history')}",
        "DROP TABLE bot_latency",
        "DROP TABLE rating_history",
        "ALTER TABLE entries ADD COLUMN changed_us BIGINT NOT NULL DEFAULT 0",
    ]


def _v5(dialect: str) -> list[str]:
    """``entries.scheduled`` counts a match when its result is recorded, not when it is queued
    (queued and playing matches are counted from the queue when entrants are read): queuing a
    set writes no entry. The matches in flight when this runs were counted at queuing, so they
    come off."""
    find = "strpos" if dialect == "postgres" else "instr"
    return [
        "UPDATE entries SET scheduled = scheduled - (SELECT COUNT(*) FROM matches m "
        "WHERE m.ladder_id = entries.ladder_id AND m.status IN ('waiting', 'playing') "
        f"AND {find}(',' || m.seats || ',', ',' || entries.bot_id || ',') > 0)"
    ]


def _v6(dialect: str) -> list[str]:
    """Each entry counts the moves and faults of its bot's matches in the ladder, so standings
    (fault rates) read one row per bot instead of summing every seat row of the ladder's history.
    Existing databases get the sums once, here."""
    del dialect

    def summed(column: str) -> str:
        return (
            f"COALESCE((SELECT SUM(s.{column}) FROM match_seats s JOIN matches m "
            "ON m.match_id = s.match_id WHERE m.ladder_id = entries.ladder_id "
            "AND s.bot_id = entries.bot_id), 0)"
        )

    return [
        "ALTER TABLE entries ADD COLUMN moves_played BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE entries ADD COLUMN faults BIGINT NOT NULL DEFAULT 0",
        f"UPDATE entries SET moves_played = {summed('moves')}, faults = {summed('faults')}",
    ]


def _v7(dialect: str) -> list[str]:
    """Each bot keeps the address its endpoint resolved to when it was registered or last
    changed (``1.2.3.4:50051``), so registration refuses an address another owner's bot uses
    and matchmaking never seats two bots at one address together. Bots registered before get
    their endpoint's text, lower-cased, until their next UpdateBot."""
    del dialect
    return [
        "ALTER TABLE bots ADD COLUMN address_key TEXT NOT NULL DEFAULT ''",
        "UPDATE bots SET address_key = lower(endpoint)",
        "CREATE INDEX bots_by_address ON bots (address_key)",
    ]


def _v8(dialect: str) -> list[str]:
    """Operator controls (issue 18): an owner may be banned (with the reason it is told), a bot
    may be held by the operator (``hold`` 'operator', or 'ban' while its owner is banned: only
    the operator releases it) with the reason shown to its owner. The index counts an owner's
    recent registrations (its registrations-per-hour limit)."""
    del dialect
    return [
        "ALTER TABLE owners ADD COLUMN banned_reason TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE bots ADD COLUMN hold TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE bots ADD COLUMN hold_reason TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX bots_by_owner ON bots (owner_id, created_at_us)",
    ]


def _v9(dialect: str) -> list[str]:
    """Matches that fail for a reason that is not a bot's fault: how often in a row, the last
    failure's kind and detail, and when the match was parked (status 'parked', for an operator
    to requeue or void) after too many. ``attempts`` still counts every claim."""
    del dialect
    return [
        "ALTER TABLE matches ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE matches ADD COLUMN failure_kind TEXT",
        "ALTER TABLE matches ADD COLUMN failure_detail TEXT",
        "ALTER TABLE matches ADD COLUMN parked_at_us BIGINT",
    ]


def _v10(dialect: str) -> list[str]:
    """A limit on the matches one bot plays at once, and health probes of pulled bots with
    back-off (issue 17).

    ``bots.max_matches`` is what the bot last announced in GetInfo (``max_concurrent_matches``;
    NULL: not heard yet, 0: no preference); ``ladders.max_matches_per_bot`` copies the ladder's
    cap out of its config so the claim can read it (0: the default; no ladder stored before
    had one). ``bots.next_probe_us`` is when a pulled bot is probed again."""
    del dialect
    return [
        "ALTER TABLE bots ADD COLUMN max_matches INTEGER",
        "ALTER TABLE bots ADD COLUMN next_probe_us BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE ladders ADD COLUMN max_matches_per_bot INTEGER NOT NULL DEFAULT 0",
    ]


def _v11(dialect: str) -> list[str]:
    """Whether a bot passed validation for its current endpoint and version, so a paused bot
    resumes to where validation left it (active, or validating again) instead of always to
    active: pausing a bot in validation, or one its owner's ban paused, must not skip it. Bots
    that stood active, pulled or paused before count as validated."""
    del dialect
    return [
        "ALTER TABLE bots ADD COLUMN validated INTEGER NOT NULL DEFAULT 0",
        "UPDATE bots SET validated = 1 WHERE state IN ('active', 'unhealthy', 'paused')",
    ]


def _v12(dialect: str) -> list[str]:
    """Many arena processes on one database (issue 19).

    ``workers``: every live arena process, under an id no two live processes share, with the
    roles it runs, the address other processes reach its API at, and its lease
    (``alive_until_us``, on the database's clock), renewed by its heartbeat; ``incarnation``
    changes at every registration, so a process whose lease ran out cannot renew it. A match
    whose worker is not alive goes back to the queue.
    ``leases``: named leadership leases (the scheduler of one ladder, validation, health
    sweeps), each held by one worker until ``until_us``; ``epoch`` grows at every change of
    holder, so a deposed holder's late write is refused.
    ``ladders.concurrency``: the ladder's limit of matches played at once, out of its config so
    the claim can hold it (0 until the store fills it in at open)."""
    del dialect
    return [
        """CREATE TABLE workers (
            worker_id TEXT PRIMARY KEY,
            incarnation TEXT NOT NULL,
            roles TEXT NOT NULL,
            address TEXT NOT NULL DEFAULT '',
            host TEXT NOT NULL DEFAULT '',
            pid INTEGER NOT NULL DEFAULT 0,
            started_at_us BIGINT NOT NULL,
            alive_until_us BIGINT NOT NULL,
            draining INTEGER NOT NULL DEFAULT 0)""",
        """CREATE TABLE leases (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            until_us BIGINT NOT NULL,
            epoch BIGINT NOT NULL)""",
        "ALTER TABLE ladders ADD COLUMN concurrency INTEGER NOT NULL DEFAULT 0",
    ]


def _v13(dialect: str) -> list[str]:
    """Listing matches (ListMatches, ``arena.store.listings``): when a worker started each
    match (NULL for the matches started before), and the finished matches in the order they
    finished, in all and by ladder, so a page of the latest reads only its own rows however
    long the history. The ladder index starts with the columns of ``matches_by_ladder``
    (ladder_id, status), which it replaces: one index more to write, not two."""
    del dialect
    return [
        "ALTER TABLE matches ADD COLUMN started_at_us BIGINT",
        "CREATE INDEX matches_finished ON matches (status, finished_at_us, match_id)",
        "CREATE INDEX matches_by_ladder_finished ON matches (ladder_id, status, "
        "finished_at_us, match_id)",
        "DROP INDEX matches_by_ladder",
    ]


def _v14(dialect: str) -> list[str]:
    """Where each outbound bot's ConnectBot stream is open (issue 20): one row per bot, the
    worker holding it, so any process can reach the bot through that one (``RelayBot``) and
    standings show it connected. A row whose worker is no longer alive counts for nothing."""
    del dialect
    return [
        """CREATE TABLE bot_streams (
            bot_id TEXT PRIMARY KEY,
            worker_id TEXT NOT NULL,
            opened_at_us BIGINT NOT NULL)""",
    ]


def _v15(dialect: str) -> list[str]:
    """A ladder's entries in standings order (μ − 3σ, best first; ties by bot id): a page of
    the standings of a ladder of 10,000 reads its own rows instead of sorting every entry
    (``Store.standings``; the web UI's standings pages). The expression is
    ``arena.ratings.DISPLAY_SQL`` as it is today, written out: a shipped migration never
    changes (tests/test_standings_search.py checks that the standings still use it)."""
    del dialect
    return [
        "CREATE INDEX entries_by_rating ON entries (ladder_id, (mu - 3 * sigma) DESC, bot_id)",
    ]


def _v16(dialect: str) -> list[str]:
    """Ratings that do not freeze and first places that count matches (issue 23).

    ``entries.rated_us``: when the entry's rating last changed, so σ grows with the time since
    (a ladder's ``sigma_growth_per_day``); existing entries take their last change.
    ``entries.first_places`` counts every match a bot finished first in, also each rotation of
    a duplicate set (it counted a set once, from the set's summed ranks): recounted here from
    the seat rows of rated matches whose set is complete.

    Bot versions: ``entries.version`` is the version an entry rates (each version of a bot
    is its own entry); ``version_entries`` keeps the figures of the versions replaced."""
    del dialect
    return [
        "ALTER TABLE entries ADD COLUMN version TEXT NOT NULL DEFAULT ''",
        "UPDATE entries SET version = COALESCE((SELECT b.version FROM bots b "
        "WHERE b.bot_id = entries.bot_id), '')",
        """CREATE TABLE version_entries (
            ladder_id TEXT NOT NULL,
            bot_id TEXT NOT NULL,
            version TEXT NOT NULL,
            mu DOUBLE PRECISION NOT NULL,
            sigma DOUBLE PRECISION NOT NULL,
            matches INTEGER NOT NULL,
            first_places INTEGER NOT NULL,
            replaced_at_us BIGINT NOT NULL,
            PRIMARY KEY (ladder_id, bot_id, version))""",
        "CREATE INDEX version_entries_by_bot ON version_entries (bot_id, replaced_at_us)",
        "ALTER TABLE entries ADD COLUMN rated_us BIGINT NOT NULL DEFAULT 0",
        "UPDATE entries SET rated_us = changed_us WHERE matches > 0",
        "UPDATE entries SET first_places = (SELECT COUNT(*) FROM match_seats s "
        "JOIN matches m ON m.match_id = s.match_id WHERE m.ladder_id = entries.ladder_id "
        "AND s.bot_id = entries.bot_id AND s.rank = 1 AND m.result_status IN (1, 2) "
        "AND NOT EXISTS (SELECT 1 FROM matches o WHERE o.set_id = m.set_id "
        "AND o.status <> 'finished'))",
    ]


_FINISH_SIGNATURE = """arena_finish(
            p_match_id TEXT, p_result_status INTEGER, p_finished_us BIGINT, p_record BYTEA,
            p_seats JSONB, p_ladder_id TEXT, p_changed_us BIGINT, p_entries JSONB)"""
_ENTRIES_UPDATE = """UPDATE entries e
                    SET mu = COALESCE(u.mu, e.mu), sigma = COALESCE(u.sigma, e.sigma),
                    matches = e.matches + u.matches, first_places = e.first_places + u.firsts,
                    scheduled = e.scheduled + u.played, moves_played = e.moves_played + u.moves,
                    faults = e.faults + u.faults, changed_us = p_changed_us,
                    rated_us = CASE WHEN u.mu IS NULL THEN e.rated_us ELSE p_changed_us END
                    FROM (SELECT c->>0 AS bot_id, (c->>1)::DOUBLE PRECISION AS mu,
                        (c->>2)::DOUBLE PRECISION AS sigma, (c->>3)::INTEGER AS matches,
                        (c->>4)::INTEGER AS firsts, (c->>5)::INTEGER AS played,
                        (c->>6)::BIGINT AS moves, (c->>7)::BIGINT AS faults
                        FROM jsonb_array_elements(p_entries) AS c) AS u
                    WHERE e.ladder_id = p_ladder_id AND e.bot_id = u.bot_id"""
"""``arena_finish``'s update of the entries (schema 17: joined to the JSON rows)."""
_ENTRIES_BY_KEY = (
    _ENTRIES_UPDATE
    + "\n                    AND e.bot_id = ANY (ARRAY(SELECT c->>0 FROM jsonb_array_elements("
    + "p_entries) AS c))"
)
"""The same update, its entries found by key (schema 20): the planner cannot tell that the JSON
array has a few rows, and scanned every entry of the ladder to join them (4 ms of 10,000)."""


def _finish_function(verb: str, entries_update: str) -> str:
    """``arena_finish`` (see ``_v17``) with ``entries_update`` for its entries."""
    return f"""{verb} FUNCTION {_FINISH_SIGNATURE}
            RETURNS VOID LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE matches SET status = 'finished', result_status = p_result_status,
                    finished_at_us = p_finished_us, lease_until_us = NULL
                    WHERE match_id = p_match_id;
                INSERT INTO records (match_id, record) VALUES (p_match_id, p_record);
                {entries_update};
                INSERT INTO match_seats (match_id, seat, bot_id, rank, score, moves, faults,
                    latency_sum_us, finished_at_us, p50_us, p95_us, mu, sigma)
                    SELECT p_match_id, (r->>0)::INTEGER, r->>1, (r->>2)::INTEGER,
                        (r->>3)::BIGINT, (r->>4)::INTEGER, (r->>5)::INTEGER, (r->>6)::BIGINT,
                        p_finished_us, (r->>7)::BIGINT, (r->>8)::BIGINT,
                        (r->>9)::DOUBLE PRECISION, (r->>10)::DOUBLE PRECISION
                    FROM jsonb_array_elements(p_seats) AS r;
            END $$"""


def _claim_fits_function(verb: str, language: str, body: str, bots_at_limit: str) -> str:
    """``arena_claim_fits`` (see ``_v17``): ``body`` around its condition ``{fits}``, of which
    ``bots_at_limit`` is the query of the seated bots already at their limit."""
    fits = f"""NOT (ladder IS NOT NULL AND concurrency > 0 AND (SELECT COUNT(*) FROM matches m
                    WHERE m.status = 'playing' AND m.ladder_id = ladder) >= concurrency)
                AND NOT EXISTS ({bots_at_limit})"""
    return f"""{verb} FUNCTION arena_claim_fits(
            seated TEXT[], ladder TEXT, concurrency INTEGER, ladder_cap INTEGER,
            default_cap INTEGER, cap_limit INTEGER, unannounced INTEGER)
            RETURNS BOOLEAN LANGUAGE {language} STABLE AS $$
            {body.format(fits=fits)} $$"""


_LIMIT_ARGUMENTS = "ladder_cap, default_cap, cap_limit, unannounced"
_BOTS_AT_LIMIT_V17 = f"""SELECT 1 FROM unnest(seated) AS s (bot)
                    LEFT JOIN bots b ON b.bot_id = s.bot
                    WHERE (SELECT COUNT(*) FROM matches m WHERE m.status = 'playing'
                        AND s.bot = ANY (string_to_array(m.seats, ',')))
                        >= arena_match_limit(b.max_matches, {_LIMIT_ARGUMENTS})"""
"""Schema 17: each seated bot's matches being played counted apart (the matches being played
read once a bot), its limit joined from ``bots``."""


def _bots_at_limit_by_key(counted: str) -> str:
    """The seated bots whose matches in ``counted`` (a condition on ``matches m``) reach their
    limit: the matches read once for all the seated bots, each bot's limit looked up by key."""
    return f"""SELECT 1 FROM unnest(seated) AS s (bot)
                    LEFT JOIN (SELECT p.bot, COUNT(DISTINCT m.match_id) AS playing
                        FROM matches m, unnest(string_to_array(m.seats, ',')) AS p (bot)
                        WHERE {counted} AND p.bot = ANY (seated) GROUP BY p.bot)
                        AS c ON c.bot = s.bot
                    WHERE COALESCE(c.playing, 0) >= arena_match_limit(
                        (SELECT b.max_matches FROM bots b WHERE b.bot_id = s.bot),
                        {_LIMIT_ARGUMENTS})"""


_BOTS_AT_LIMIT_BY_KEY = _bots_at_limit_by_key("m.status = 'playing'")
"""Schema 20: the same count, the matches being played read once for all the seated bots,
and each bot's limit looked up by key (the join to ``bots`` was hashed over every bot)."""
_BOTS_AT_LIMIT_WITH_RESERVATIONS = _bots_at_limit_by_key("m.status IN ('playing', 'reserved')")
"""Schema 22: a reserved tournament rotation counts as a match of each of its bots."""
_FITS_BODY_PLPGSQL = "BEGIN RETURN {fits}; END"


def _v17(dialect: str) -> list[str]:
    """PostgreSQL only: a claim, and the writes of a finished match, as server-side functions,
    so each is one statement instead of ten or more (issue 19: the bookkeeping of a match cost
    the client and the server CPU per statement). SQLite, in-process, keeps its Python code.

    ``arena_claim`` is ``Store._claimable`` and the claim's update in one call: the oldest
    waiting match (optionally ladder matches only) whose ladder is below its concurrency and
    whose bots are all below their limit of matches at once, counted from the matches being
    played; the match found is locked (SKIP LOCKED), then its ladder's row (when it has a
    concurrency) and its bots' rows in bot order, and only then counted again; a match that no
    longer fits is let go (its locks rolled back with a subtransaction) and the next one tried.
    The limits' constants are parameters, so the Python ones stay the only copy.
    ``arena_finish`` writes a finished match: its status, its record, its seat rows and its
    bots' entries (a NULL μ leaves the rating as it is), the rows as two JSON arrays of arrays
    (psycopg turns one text into bytes faster than 19 typed arrays)."""
    if dialect != "postgres":
        return []
    return [
        """CREATE FUNCTION arena_match_limit(
            announced INTEGER, ladder_cap INTEGER, default_cap INTEGER, cap_limit INTEGER,
            unannounced INTEGER) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN announced IS NULL THEN LEAST(capped, unannounced)
                WHEN announced > 0 THEN LEAST(announced, capped) ELSE capped END
            FROM (SELECT LEAST(CASE WHEN ladder_cap = 0 THEN default_cap ELSE ladder_cap END,
                cap_limit) AS capped) AS cap $$""",
        _claim_fits_function("CREATE", "sql", "SELECT {fits}", _BOTS_AT_LIMIT_V17),
        """CREATE FUNCTION arena_claim(
            p_worker TEXT, p_now_us BIGINT, p_lease_until_us BIGINT, p_ladder_only BOOLEAN,
            p_house TEXT, p_default_cap INTEGER, p_cap_limit INTEGER, p_unannounced INTEGER)
            RETURNS TABLE (match_id TEXT, ladder_id TEXT, kind TEXT, seed BIGINT, seats TEXT,
                endpoints TEXT[])
            LANGUAGE plpgsql AS $$
            #variable_conflict use_column
            DECLARE
                candidate RECORD;
                seated TEXT[];
                claimed RECORD;
            BEGIN
                PERFORM set_config('synchronous_commit', 'off', true);
                FOR candidate IN
                    SELECT m.match_id, m.seats, m.ladder_id,
                        COALESCE(l.max_matches_per_bot, 0) AS cap,
                        COALESCE(l.concurrency, 0) AS concurrency
                    FROM matches m LEFT JOIN ladders l ON l.ladder_id = m.ladder_id
                    WHERE m.status = 'waiting' AND (NOT p_ladder_only OR m.kind = 'ladder')
                    ORDER BY m.created_at_us, m.match_id
                LOOP
                    seated := ARRAY(SELECT DISTINCT s FROM unnest(string_to_array(
                        candidate.seats, ',')) AS s WHERE s <> p_house ORDER BY s);
                    CONTINUE WHEN NOT arena_claim_fits(seated, candidate.ladder_id,
                        candidate.concurrency, candidate.cap, p_default_cap, p_cap_limit,
                        p_unannounced);
                    BEGIN
                        PERFORM 1 FROM matches m WHERE m.match_id = candidate.match_id
                            AND m.status = 'waiting' FOR UPDATE SKIP LOCKED;
                        CONTINUE WHEN NOT FOUND;
                        IF candidate.ladder_id IS NOT NULL AND candidate.concurrency > 0 THEN
                            PERFORM 1 FROM ladders l WHERE l.ladder_id = candidate.ladder_id
                                FOR UPDATE;
                        END IF;
                        PERFORM 1 FROM bots b WHERE b.bot_id = ANY (seated)
                            ORDER BY b.bot_id FOR UPDATE;
                        IF arena_claim_fits(seated, candidate.ladder_id, candidate.concurrency,
                                candidate.cap, p_default_cap, p_cap_limit, p_unannounced) THEN
                            UPDATE matches m SET status = 'playing', claimed_by = p_worker,
                                lease_until_us = p_lease_until_us, started_at_us = p_now_us,
                                attempts = m.attempts + 1 WHERE m.match_id = candidate.match_id
                                RETURNING m.match_id, m.ladder_id, m.kind, m.seed, m.seats
                                INTO claimed;
                            RETURN QUERY SELECT claimed.match_id, claimed.ladder_id,
                                claimed.kind, claimed.seed, claimed.seats,
                                ARRAY(SELECT COALESCE(b.endpoint, '') FROM unnest(
                                    string_to_array(claimed.seats, ',')) WITH ORDINALITY
                                    AS s (bot, n) LEFT JOIN bots b ON b.bot_id = s.bot
                                    ORDER BY s.n);
                            RETURN;
                        END IF;
                        RAISE EXCEPTION 'claim candidate no longer fits' USING ERRCODE = 'AR001';
                    EXCEPTION WHEN SQLSTATE 'AR001' THEN
                        NULL;  -- let it go: its locks are rolled back with the block
                    END;
                END LOOP;
            END $$""",
        _finish_function("CREATE", _ENTRIES_UPDATE),
    ]


def _v18(dialect: str) -> list[str]:
    """Bot keys (issue 20): ``bots.key_hash``, the hash of the bot's own key, a credential
    that opens only that bot's ConnectBot stream ('' for none; ``arena.store.bot_keys``)."""
    del dialect
    return ["ALTER TABLE bots ADD COLUMN key_hash TEXT NOT NULL DEFAULT ''"]


def _v19(dialect: str) -> list[str]:
    """Tournaments run by the arena (issue 23, ``arena.store.tournaments``): each tournament's
    configuration and progress, and each duplicate set played, once (its key is its place in
    the plan), so a restarted arena resumes where it stopped and never counts a set twice."""
    blob = "BYTEA" if dialect == "postgres" else "BLOB"
    return [
        f"""CREATE TABLE tournaments (
            tournament_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            config {blob} NOT NULL,
            state TEXT NOT NULL,
            sets_planned INTEGER NOT NULL DEFAULT 0,
            created_at_us BIGINT NOT NULL,
            finished_at_us BIGINT NOT NULL DEFAULT 0)""",
        "CREATE INDEX tournaments_by_state ON tournaments (state, created_at_us)",
        """CREATE TABLE tournament_sets (
            tournament_id TEXT NOT NULL REFERENCES tournaments (tournament_id),
            round INTEGER NOT NULL,
            table_index INTEGER NOT NULL,
            set_index INTEGER NOT NULL,
            rotations TEXT NOT NULL,
            matches INTEGER NOT NULL,
            played_at_us BIGINT NOT NULL,
            PRIMARY KEY (tournament_id, round, table_index, set_index))""",
    ]


def _v20(dialect: str) -> list[str]:
    """PostgreSQL only (issue 19): ``arena_claim`` and ``arena_finish`` without a scan of every
    bot or entry. A bot's limit is looked up by key (a join to ``unnest(seated)``, whose size
    the planner cannot know, was hashed over every bot: 1-2 ms twice a claim with 10,000 bots)
    and the matches being played are read once for all its bots, not once a bot;
    ``arena_claim_fits`` is PL/pgSQL so that its plan is kept for the session instead of made
    again at every call, and ``arena_finish`` finds the entries it updates by key
    (``_ENTRIES_BY_KEY``). Same rules, same results."""
    if dialect != "postgres":
        return []
    return [
        _claim_fits_function(
            "CREATE OR REPLACE", "plpgsql", _FITS_BODY_PLPGSQL, _BOTS_AT_LIMIT_BY_KEY
        ),
        _finish_function("CREATE OR REPLACE", _ENTRIES_BY_KEY),
    ]


def _v21(dialect: str) -> list[str]:
    """Tournament matches in the queue table (``arena.store.tournaments``): while a tournament
    set is played, each of its rotations is a ``matches`` row of kind 'tournament' (status
    'pending' until it starts, then 'playing'; deleted when it ends), so ListMatches lists it,
    WatchMatch finds the process playing it and a bot's limit of matches at once counts it.
    ``matches.tournament_id`` says whose it is (NULL for ladder and validation matches)."""
    del dialect
    return ["ALTER TABLE matches ADD COLUMN tournament_id TEXT"]


def _v22(dialect: str) -> list[str]:
    """Reservations of tournament rotations (``arena.store.tournaments``): a rotation that
    finds a bot at its limit of matches at once becomes 'reserved' (``reserved_at_us``: when),
    and a reserved rotation counts against each of its bots' limits for ladder and validation
    claims, so a busy ladder stops giving those bots new matches and the rotation starts once
    their matches end (a busy ladder no longer starves a tournament). On PostgreSQL
    ``arena_claim_fits`` counts the reserved rotations (same parameters, same plan shape)."""
    statements = ["ALTER TABLE matches ADD COLUMN reserved_at_us BIGINT"]
    if dialect == "postgres":
        statements.append(
            _claim_fits_function(
                "CREATE OR REPLACE",
                "plpgsql",
                _FITS_BODY_PLPGSQL,
                _BOTS_AT_LIMIT_WITH_RESERVATIONS,
            )
        )
    return statements


def _v23(dialect: str) -> list[str]:
    """PostgreSQL only (issue 19): the functions of schema 17 dropped. Claims are made by
    ``arena.store.claims`` on both databases, several at a time from one read of the matches
    being played (``arena_claim`` counted them twice a claim and opened a subtransaction a
    candidate): one copy of the rules, in Python. A batch of finished matches writes in one
    statement (``arena.store.results.FinishedWrites``), not five and a call of
    ``arena_finish`` each."""
    if dialect != "postgres":
        return []
    return [
        "DROP FUNCTION arena_claim(TEXT, BIGINT, BIGINT, BOOLEAN, TEXT, INTEGER, INTEGER, INTEGER)",
        "DROP FUNCTION arena_claim_fits(TEXT[], TEXT, INTEGER, INTEGER, INTEGER, INTEGER, INTEGER)",
        "DROP FUNCTION arena_match_limit(INTEGER, INTEGER, INTEGER, INTEGER, INTEGER)",
        "DROP FUNCTION arena_finish(TEXT, INTEGER, BIGINT, BYTEA, JSONB, TEXT, BIGINT, JSONB)",
    ]


def _v24(dialect: str) -> list[str]:
    """PostgreSQL only (issue 19): the foreign keys of ``records`` and ``match_seats`` to
    ``matches`` dropped. They are checked a row at a time, by a trigger that looks the match up
    and locks it again: five checks a four-seat match, 0.09 ms of the server's 0.25 ms for a
    batch's writes (``auto_explain`` with its triggers, a batch of 32). The rows they guarded
    are written in one place, ``FinishedWrites``, in the statement that marks their match
    finished, under the lock on the match its batch took first; and no match with a record is
    ever deleted (only the queued rotations of tournaments are, which have neither). The
    tests check that no record and no seat row is without its match, after the chaos runs
    among others. SQLite keeps them: checked in-process, they cost next to nothing, and
    dropping one there means copying the table."""
    if dialect != "postgres":
        return []
    return [
        "ALTER TABLE records DROP CONSTRAINT records_match_id_fkey",
        "ALTER TABLE match_seats DROP CONSTRAINT match_seats_match_id_fkey",
    ]


MIGRATIONS: list[Callable[[str], list[str]]] = [
    *(_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9, _v10, _v11, _v12, _v13, _v14, _v15, _v16),
    *(_v17, _v18, _v19, _v20, _v21, _v22, _v23, _v24),
]
"""Migration n (from 1) turns schema n-1 into schema n, for a dialect."""
