"""Ladder bookkeeping per finished match with 10,000 registered bots, on the real store.

What the arena does around every match except playing it, as ``Arena.schedule_once`` and
``Arena.play_claim`` do it: keep the ladder's matchmaking pool up to date (``Arena._pool``: the
bots whose state changed, read every ``pool_refresh_s``; a full rebuild from every entrant every
``pool_rebuild_s``), pick the players and plan the set (``arena.matchmaking``), enqueue it
(within the queue's target and fenced by the ladder's lease, renewed each round), claim it,
record the result (durable record, seat rows, rating update with openskill, rating history) in
one transaction, and give the new ratings to the pool. The match records are real:
Oh Hell 4-seat matches played at random in-process, built with the referee's own
``match_record``, so their size and move count are a real match's.

A round is one ``pool_refresh_s`` of the scheduler at ``--per-round`` matches per refresh (40
per 5 s: 8 finished matches a second). Each round one bot is paused and the one paused before
resumes (so the refresh has changes to read), then the round's matches run, then a catch-up
(the entries changed over the last ``pool_catch_up_s``) and a full rebuild are timed; each is
charged at its real rate (one per ``pool_catch_up_s / pool_refresh_s`` rounds, one per
``pool_rebuild_s / pool_refresh_s`` rounds).

Batches, as the arena now works: a scheduling tick's sets are planned one after the other and
queued in one transaction (``Store.enqueue_sets``: the lease and the queue's target checked
once), and the result writer records the results waiting for it in one transaction
(``Store.record_results``: one commit, one disk flush for them all). ``--batch K,…`` measures
each K in turn, round by round (interleaved, each K against the baseline of its own rounds):
K sets enqueued together, K claims in one transaction (``Store.claim_many``, as the arena's
claimer does for the workers a batch of results freed), K results in one transaction.
K = 1 is the arena at this benchmark's rate (see ``BATCHES``); larger K a busier arena.

The baseline, measured in the same run and interleaved with the ladder's work, is the least a
durable result can cost on the same database: one bare ``INSERT`` of a record-sized blob and its
``COMMIT`` (SQLite in WAL mode with the store's pragmas; PostgreSQL through psycopg with the
store's session settings, so lz4 for the blob where the server has it). On PostgreSQL a second
baseline keeps the server's default compression (pglz: the baseline of figures from before the
store chose lz4), and ``record_result`` alone is also given as a ratio. Figures are
wall-clock ms per finished match (the database does I/O), means over ``--rounds`` interleaved
rounds (a mean, so the WAL checkpoint that comes every few rounds is in it), and their ratio to
that baseline. Target: at most 1 ms per finished match.

    python benchmarks/ladder.py                       # SQLite file in a temporary directory
    python benchmarks/ladder.py --database-url postgresql://postgres@127.0.0.1:5432/test
    python benchmarks/ladder.py --quick               # a smoke run for CI
    python benchmarks/ladder.py --batch 1,16          # only these batch sizes

With ``--database-url`` the benchmark creates its own database on that server and drops it at
the end (like ``tests/stores.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ladder import ArenaConfig, queue_target
from arena.matchmaking import MatchmakingPool, PlannedMatch, plan_set
from arena.store.coordination import Coordination
from arena.store.db import (
    LZ4_WHERE_AVAILABLE,
    SQLITE_PRAGMAS,
    open_database,
    scratch_postgres_database,
)
from arena.store.repository import CHANGE_GRACE_US as GRACE_US
from arena.store.repository import Store, now_us
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import options_pb2, record_pb2
from referee.codec.record import match_record
from referee.games.registry import codec_for, make_game
from referee.match import Match

GAME, SEATS = "oh-hell", 4
STAGES = (
    "pool rebuild",
    "pool catch-up",
    "pool refresh",
    "matchmaking",
    "enqueue",
    "claim",
    "record_result",
)
"""The pool's upkeep, paid per period and shown per match: ``pool rebuild`` (every entrant
read, pool built), ``pool catch-up`` (the entries that changed), ``pool refresh`` (the bots whose
state changed). ``matchmaking`` is pick + plan and the pool's updates (matches scheduled, new
ratings)."""
CONFIG = ArenaConfig()
WORKER = "bench"
"""The worker id the benchmark claims, records and schedules (holds the ladder's lease) as."""
LEASE_S = 60.0
"""The ladder's lease, renewed every round (the arena's lasts ``leader_lease_s`` and is renewed
every tick; a longer one here, so that a round slowed down by a busy machine keeps it)."""
ROUNDS_PER_REBUILD = round(CONFIG.pool_rebuild_s / CONFIG.pool_refresh_s)
ROUNDS_PER_CATCH_UP = round(CONFIG.pool_catch_up_s / CONFIG.pool_refresh_s)
BATCHES = (1, 8, 32)
"""The batch sizes measured by default (``--batch``): sets enqueued together and results
recorded in one transaction. 1 is what an arena at this benchmark's 8 finished matches a second
sees (a result commit takes a few ms, so the result writer rarely finds a second result waiting,
and a 0.2 s tick plans one or two sets); 8 and 32 (``ArenaConfig.result_batch_max``) what a
busy one sees: K results wait when K finish during one batch's commit (K = 8 at about 300
matches a second where a batch of 8 takes 25 ms, as on PostgreSQL on 2026-12-03)."""


def sample_records(count: int) -> list[record_pb2.MatchRecord]:
    """Records of real random Oh Hell matches (the bytes a worker sends the store)."""
    game = make_game(GAME, SEATS)
    codec = codec_for(game)
    records = []
    for seed in range(count):
        match = Match(game, seed)
        rng = random.Random(seed)
        while not match.is_over:
            legal = match.legal_actions()
            match.play(legal[rng.randrange(len(legal))], rng.randrange(2000, 40_000))
        records.append(
            match_record(
                match,
                codec,
                match_id="",
                seats=[record_pb2.SeatAssignment(seat=s) for s in range(SEATS)],
                started_at_us=1,
                finished_at_us=2,
                referee_version="bench",
            )
        )
    return records


@contextlib.contextmanager
def database_url(url: str | None) -> Iterator[str]:
    """A SQLite file in a temporary directory, or a fresh PostgreSQL database dropped after."""
    if url is None:
        with tempfile.TemporaryDirectory() as directory:
            yield str(Path(directory) / "ladder.sqlite3")
        return
    with scratch_postgres_database(url, "cardarena_bench") as scratch:
        yield scratch


class Baseline:
    """A bare INSERT + COMMIT of one record-sized blob on the same kind of database, set up as
    the store sets up its connections (``server_default``: PostgreSQL's own compression)."""

    def __init__(self, url: str, directory: Path | None, server_default: bool = False) -> None:
        self.postgres = url.startswith("postgres")
        if self.postgres:
            import psycopg

            self.conn: Any = psycopg.connect(url, autocommit=True)
            table = "bench_blobs_default" if server_default else "bench_blobs"
            if not server_default:
                self.conn.execute(LZ4_WHERE_AVAILABLE)
            self.conn.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, body BYTEA)")
            self.sql = f"INSERT INTO {table} (id, body) VALUES (%s, %s)"
        else:
            assert directory is not None
            self.conn = sqlite3.connect(str(directory / "baseline.sqlite3"), isolation_level=None)
            for pragma in SQLITE_PRAGMAS:
                self.conn.execute(f"PRAGMA {pragma}")
            self.conn.execute("CREATE TABLE bench_blobs (id TEXT PRIMARY KEY, body BLOB)")
            self.sql = "INSERT INTO bench_blobs (id, body) VALUES (?, ?)"

    def one(self, blob: bytes) -> None:
        """One durable insert."""
        if self.postgres:
            with self.conn.transaction():
                self.conn.execute(self.sql, (uuid.uuid4().hex, blob))
        else:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(self.sql, (uuid.uuid4().hex, blob))
            self.conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def register(store: Store, bots: int) -> None:
    """``bots`` active bots of the ladder's game of 100 owners (matchmaking seats each owner
    once a match), through the store's API, validated (so heard from)."""
    tokens: dict[str, str] = {}
    ids = []
    for index in range(bots):
        owner = f"owner{index % 100}"
        bot, token = store.register_bot(
            owner, tokens.get(owner), f"bot{index}", GAME, f"127.0.0.1:{1 + index}", "1"
        )
        if token:
            tokens[owner] = token
        store.set_state_by_arena(bot.bot_id, "active", "", 0)
        ids.append(bot.bot_id)
    # Validated, so heard from (GetInfo): no preference announced, the default limit of
    # matches at once (a batch of claims may seat a bot twice).
    store.set_announced_limits(dict.fromkeys(ids, 0))


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Result and wall-clock seconds of one call."""
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def run(
    url: str | None, bots: int, rounds: int, per_round: int, seed: int, batches: Sequence[int]
) -> dict[str, Any]:
    """Build the ladder, then time ``rounds`` x ``per_round`` finished matches, the rounds taking
    each batch size of ``batches`` in turn (interleaved, each with its own figures)."""
    records = sample_records(8)
    blob = records[0].SerializeToString()
    result: dict[str, Any] = {
        "database": "postgresql" if url else "sqlite",
        "bots": bots,
        "record_bytes": len(blob),
        "moves_per_record": len(records[0].moves),
    }
    with database_url(url) as location, tempfile.TemporaryDirectory() as scratch:
        database = open_database(location)
        store = Store(database)
        baseline = Baseline(location, Path(scratch))
        pglz = Baseline(location, None, server_default=True) if url else None
        try:
            _, setup_s = timed(lambda: register(store, bots))
            config = arena_service_pb2.LadderConfig(
                name="bench",
                settings=options_pb2.GameSettings(game=GAME, num_seats=SEATS),
                concurrency=max(batches),
            )
            ladder_id = store.create_ladder(config)
            coordination, lease = Coordination(database), f"ladder:{ladder_id}"
            store.enter_active_bots(ladder_id, GAME)
            # In an arena the bots registered long before; here all 10,000 did within the
            # refresh's grace window, which would have every refresh read them all again.
            long_ago = now_us() - 2 * GRACE_US
            with database.transaction() as tx:
                tx.execute("UPDATE bots SET state_changed_us = ?", (long_ago,))
                tx.execute("UPDATE entries SET changed_us = ?", (long_ago,))
            if database.dialect == "postgres":  # what autovacuum does within a minute of a
                with database.transaction() as tx:  # bulk load: plans from real row counts
                    tx.execute("ANALYZE")
            result["register_ms_per_bot"] = 1000 * setup_s / bots
            result["tick"] = schedule_tick_ms(store, ladder_id)
            rng = random.Random(seed)
            watches = {batch: Stopwatch() for batch in batches}
            bases: dict[int, list[float]] = {batch: [] for batch in batches}
            base_cpu: dict[int, list[float]] = {batch: [] for batch in batches}
            rebuilds, catch_ups, pglz_bases = [], [], []
            pool, since = rebuild(store, ladder_id, rng)
            round_starts: list[int] = []  # the catch-up cursor at the start of each round
            bot_ids = [entrant.bot_id for entrant in store.entrants(ladder_id)]
            paused: str | None = None
            played = 0
            for round_index in range(rounds):
                batch = batches[round_index % len(batches)]
                watch = watches[batch]
                round_starts.append(now_us() - GRACE_US)
                base = Stopwatch()
                for _ in range(per_round):
                    base.run("baseline", baseline.one, blob)
                bases[batch].append(1000 * base.wall["baseline"] / per_round)
                base_cpu[batch].append(1000 * base.cpu["baseline"] / per_round)
                if pglz is not None:
                    for _ in range(per_round):
                        base.run("pglz", pglz.one, blob)
                    pglz_bases.append(1000 * base.wall["pglz"] / per_round)
                watch.start_round()
                if paused is not None:  # a bot comes back, another leaves (not timed: API calls)
                    store.set_state_by_arena(paused, "active", "", 0)
                paused = rng.choice(bot_ids)
                store.set_state_by_arena(paused, "paused", "", 0)
                # As Arena._pool does once per pool_refresh_s: the bots whose state changed.
                since = watch.run("pool refresh", refresh, store, ladder_id, pool, since)
                # As Arena._schedule_ladder does each tick: its ladder's lease, renewed.
                epoch = watch.run("enqueue", coordination.lead, lease, WORKER, LEASE_S)
                assert epoch is not None
                for start in range(0, per_round, batch):
                    size = min(batch, per_round - start)
                    # A tick's sets, planned one after the other from the pool, then queued
                    # together within the queue's target and fenced by the lease, as the
                    # arena enqueues them.
                    sets = [watch.run("matchmaking", plan_next, pool, rng) for _ in range(size)]
                    done = watch.run(
                        "enqueue",
                        store.enqueue_sets,
                        ladder_id,
                        "ladder",
                        sets,
                        queue_target(config),
                        (lease, WORKER, epoch),
                    )
                    assert all(done), "a refused set would make the arena rebuild the pool"
                    # The claimer's batch: the workers the last results freed, together.
                    claims = watch.run("claim", store.claim_many, WORKER, 300.0, [False] * size)
                    finished = []
                    for claim in claims:
                        assert claim is not None
                        record = record_pb2.MatchRecord()
                        record.CopyFrom(records[played % len(records)])
                        record.match_id = claim.match_id
                        finished.append(record)
                        played += 1
                    # The result writer's batch: the matches that finished while it wrote
                    # the last one, in one transaction.
                    outcomes = watch.run("record_result", store.record_results, finished, WORKER)
                    for ratings in outcomes:
                        assert isinstance(ratings, dict) and ratings
                        watch.run("matchmaking", pool.rated, ratings)
                # As Arena._pool does once per pool_catch_up_s: the entries changed since the
                # last catch-up (here: over the last ROUNDS_PER_CATCH_UP rounds), charged at
                # that rate.
                changed_since = round_starts[max(0, round_index + 1 - ROUNDS_PER_CATCH_UP)]
                catch_ups.append(
                    watch.run(
                        "pool catch-up",
                        catch_up_ms,
                        store,
                        ladder_id,
                        pool,
                        changed_since,
                        share=1 / ROUNDS_PER_CATCH_UP,
                    )
                )
                # As Arena._pool does once per pool_rebuild_s, charged at that rate (the pool
                # built is thrown away: the arena keeps its pool between rebuilds).
                rebuilds.append(
                    watch.run(
                        "pool rebuild",
                        timed_rebuild,
                        store,
                        ladder_id,
                        random.Random(seed),
                        share=1 / ROUNDS_PER_REBUILD,
                    )
                )
                watch.end_round(per_round)
            result["by_batch"] = {
                str(batch): figures(watches[batch], bases[batch], base_cpu[batch])
                for batch in batches
            }
            result.update(result["by_batch"][str(batches[0])])
            if pglz_bases:
                result["pglz_baseline_ms"] = statistics.mean(pglz_bases)
                result["pglz_ratio"] = result["ms_per_match"] / result["pglz_baseline_ms"]
                result["pglz_record_ratio"] = (
                    result["stages_ms"]["record_result"] / result["pglz_baseline_ms"]
                )
            result["standings_ms"] = 1000 * timed(lambda: store.standings(ladder_id))[1]
            result["standings_page_ms"] = (
                1000 * timed(lambda: store.standings(ladder_id, limit=20, offset=5000))[1]
            )
            result["matches"] = rounds * per_round
            result["rebuild_ms"] = statistics.median(rebuilds)
            result["catch_up_ms"] = statistics.median(catch_ups)
        finally:
            baseline.close()
            if pglz is not None:
                pglz.close()
            database.close()
    return result


def figures(watch: Stopwatch, bases: list[float], base_cpu: list[float]) -> dict[str, Any]:
    """One batch size's figures: stage means per match, totals, the same rounds' baseline and
    the ratios to it. Means, not medians: a WAL checkpoint comes every few rounds and belongs
    in the cost."""
    stages, cpu = watch.means("wall"), watch.means("cpu")
    total, total_cpu = sum(stages.values()), sum(cpu.values())
    baseline_ms, baseline_cpu_ms = statistics.mean(bases), statistics.mean(base_cpu)
    return {
        "stages_ms": stages,
        "stages_cpu_ms": cpu,
        "ms_per_match": total,
        "cpu_ms_per_match": total_cpu,
        "median_round_ms": statistics.median(watch.round_totals),
        "baseline_ms": baseline_ms,
        "baseline_cpu_ms": baseline_cpu_ms,
        "ratio": total / baseline_ms,
        "cpu_ratio": total_cpu / baseline_cpu_ms,
        "record_ratio": stages["record_result"] / baseline_ms,
        "rounds": len(watch.round_totals),
    }


def plan_next(pool: MatchmakingPool, rng: random.Random) -> list[PlannedMatch]:
    """The scheduler's step: the next set from the pool, counted as scheduled in it."""
    planned = plan_set(pool.pick(SEATS), rng, False)
    pool.scheduled([bot for match in planned for bot in match.seats])
    return planned


def timed_rebuild(store: Store, ladder_id: str, rng: random.Random) -> float:
    """ms of one ``rebuild``."""
    return 1000 * timed(lambda: rebuild(store, ladder_id, rng))[1]


def catch_up_ms(store: Store, ladder_id: str, pool: MatchmakingPool, since: int) -> float:
    """ms of one ``catch_up``."""
    return 1000 * timed(lambda: catch_up(store, ladder_id, pool, since))[1]


def rebuild(store: Store, ladder_id: str, rng: random.Random) -> tuple[MatchmakingPool, int]:
    """``Arena._pool``'s rebuild: enter new bots, read every entrant, build the pool."""
    since = now_us() - GRACE_US
    store.enter_active_bots(ladder_id, GAME)
    return MatchmakingPool(store.entrants(ladder_id), rng), since


def catch_up(store: Store, ladder_id: str, pool: MatchmakingPool, since: int) -> None:
    """``Arena._pool``'s catch-up: the entries whose rating or matches scheduled changed."""
    pool.update(store.entrants(ladder_id, since))


def refresh(store: Store, ladder_id: str, pool: MatchmakingPool, since: int) -> int:
    """``Arena._pool``'s refresh: the bots whose state changed; returns the next cursor."""
    changes = store.entrant_changes(ladder_id, GAME, since)
    pool.remove(changes.gone)
    pool.update(changes.active)
    return changes.next_since_us


class Stopwatch:
    """Wall-clock and CPU seconds (this process: SQLite's work, not a disk's) per stage, and
    each round's per-match figures."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.rounds: dict[str, list[dict[str, float]]] = {"wall": [], "cpu": []}
        self.round_totals: list[float] = []

    def run(self, stage: str, fn: Callable[..., Any], *args: Any, share: float = 1.0) -> Any:
        """Call ``fn``, charging ``share`` of its time to ``stage``."""
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn(*args)
        self.wall[stage] = self.wall.get(stage, 0.0) + share * (time.perf_counter() - wall)
        self.cpu[stage] = self.cpu.get(stage, 0.0) + share * (time.process_time() - cpu)
        return value

    def start_round(self) -> None:
        """Forget the last round's figures."""
        self.wall, self.cpu = dict.fromkeys(STAGES, 0.0), dict.fromkeys(STAGES, 0.0)

    def end_round(self, matches: int) -> None:
        """Keep this round's ms per match."""
        for kind, spent in (("wall", self.wall), ("cpu", self.cpu)):
            self.rounds[kind].append({s: 1000 * spent[s] / matches for s in STAGES})
        self.round_totals.append(sum(self.rounds["wall"][-1].values()))

    def means(self, kind: str) -> dict[str, float]:
        """Mean ms per match of each stage over the rounds."""
        return {s: statistics.mean(r[s] for r in self.rounds[kind]) for s in STAGES}


def schedule_tick_ms(store: Store, ladder_id: str) -> dict[str, float]:
    """What every scheduling tick pays whatever it schedules (ms, median of 5)."""
    calls: dict[str, Callable[[], Any]] = {
        "bots(validating)": lambda: store.bots(("validating",)),
        "ladder_configs": store.ladder_configs,
        "waiting": lambda: store.waiting(ladder_id),
    }
    return {
        name: statistics.median(1000 * timed(call)[1] for _ in range(5))
        for name, call in calls.items()
    }


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite file)")
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=24)
    parser.add_argument("--per-round", type=int, default=40, help="matches per round")
    parser.add_argument(
        "--batch",
        default=",".join(str(batch) for batch in BATCHES),
        help="batch sizes, comma-separated: sets per enqueue and results per transaction "
        "(rounds take them in turn)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    batches = [int(batch) for batch in args.batch.split(",")]
    if args.quick:
        args.bots, args.rounds, args.per_round = 200, 2 * len(batches), 8
    result = run(args.database_url, args.bots, args.rounds, args.per_round, args.seed, batches)
    print(
        f"{result['database']}, {result['bots']} bots, {result['matches']} matches, "
        f"records of {result['record_bytes']} bytes ({result['moves_per_record']} moves); "
        f"registration {result['register_ms_per_bot']:.2f} ms per bot"
    )
    by_batch = result["by_batch"]
    header = "".join(f"{'K=' + k + ' wall':>12}{'cpu':>8}" for k in by_batch)
    print(f"{'stage (ms per match)':26}{header}")
    for stage in STAGES:
        cells = "".join(
            f"{f['stages_ms'][stage]:12.3f}{f['stages_cpu_ms'][stage]:8.3f}"
            for f in by_batch.values()
        )
        print(f"{stage:26}{cells}")
    rows = (
        ("total per finished match", "ms_per_match", "cpu_ms_per_match", ".3f"),
        ("  (median round, wall)", "median_round_ms", None, ".3f"),
        ("baseline INSERT+COMMIT", "baseline_ms", "baseline_cpu_ms", ".3f"),
        ("ratio total / baseline", "ratio", "cpu_ratio", ".2f"),
        ("ratio record_result / base", "record_ratio", None, ".2f"),
    )
    for label, wall, cpu, form in rows:
        cells = "".join(
            f"{format(f[wall], form):>12}{format(f[cpu], form) if cpu else '':>8}"
            for f in by_batch.values()
        )
        print(f"{label:26}{cells}")
    print(
        "(K: sets per enqueue and results per transaction; an arena's result writer sees "
        "K = 1 + the matches finishing during one result commit)"
    )
    if "pglz_baseline_ms" in result:
        print(
            f"baseline, pglz (server): {result['pglz_baseline_ms']:.3f} ms; ratios at "
            f"K={batches[0]}: total {result['pglz_ratio']:.2f}, "
            f"record_result {result['pglz_record_ratio']:.2f}"
        )
    tick = ", ".join(f"{name} {ms:.2f}" for name, ms in result["tick"].items())
    print(f"per scheduling tick (ms): {tick}")
    print(
        f"pool rebuild: {result['rebuild_ms']:.1f} ms every {CONFIG.pool_rebuild_s:.0f} s "
        f"(charged once per {ROUNDS_PER_REBUILD} rounds of {args.per_round} matches); "
        f"catch-up: {result['catch_up_ms']:.1f} ms every {CONFIG.pool_catch_up_s:.0f} s "
        f"(once per {ROUNDS_PER_CATCH_UP} rounds)"
    )
    print(
        f"standings (one call): {result['standings_ms']:.1f} ms for every bot, "
        f"{result['standings_page_ms']:.1f} ms for a page of 20 (#5001-5020)"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
