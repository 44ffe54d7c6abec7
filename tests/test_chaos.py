"""Chaos: three ``arena serve`` processes on one PostgreSQL database act as one arena while one
of them is killed (SIGKILL) and restarted again and again, the ladder's scheduler among the
victims.

A sampler reads the database every ~200 ms in one REPEATABLE READ snapshot and records every
moment a cap did not hold: the ladder's queue (waiting + playing) above its target, its matches
playing above its concurrency, a bot playing more matches than its cap, a match still 'playing'
for a worker dead longer than the takeover bound. In the end, after a graceful stop: every
finished match has one record, no queued match was played to a result twice, what the bots
were told at EndMatch is what was recorded, and the ratings follow from the records.
"""

from __future__ import annotations

import math
import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot
from arena.matchmaking import PlannedMatch
from arena.ratings import Rating, rate, set_ranks
from arena.store.claims import HOUSE_RANDOM, match_limit
from arena.store.db import CLOCK_US, open_database
from arena.store.repository import Store
from arena.store.results import RATED_STATUSES
from benchmarks.scale_out import drain, register, short_klaberjass_ladder
from benchmarks.servers.sleepy import read_end_log, sleepy_command, start_sleepy_bots
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2
from tests.helpers import POLLING_LIMITS, ROOT
from tests.stores import ROWS_WITHOUT_THEIR_MATCH_SQL, postgres_available, postgres_url
from tests.test_ladder_e2e import ADMIN, wait_active, wait_for
from tests.test_scale_out import counts
from tests.test_store import active_bots, finished_record, ladder_config

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)

LEASE_S = 10.0
"""``arena serve``'s default worker lease (``--lease-s``): a killed process's matches are
another's once it has run out (docs/scale-out.md)."""
TAKEOVER_S = 15.0
"""The takeover bound: a dead worker's matches go back to the queue within this after it died.
It died at its last heartbeat, at most ``LEASE_S`` before its lease ran out, so a match may
still be 'playing' at most ``TAKEOVER_S - LEASE_S`` after its worker's lease ran out."""
WORKERS = 4
CONCURRENCY = 6
"""Below the three processes' 12 workers: the ladder's cap, not the workers, binds."""
QUEUE_TARGET = max(2, 2 * CONCURRENCY)
LADDER_CAP = 3
ANNOUNCED = 2
"""What each bot announces in GetInfo: below the ladder's cap, so it is the bot's limit."""
BOTS = 8
"""8 bots × 2 matches each ÷ 2 seats: 8 matches at once at most, above the concurrency."""
KILLS = (
    ("leader", "same id"),
    ("any", "new id"),
    ("leader", "new id"),
    ("any", "same id"),
    ("leader", "same id"),
    ("any", "new id"),
)
"""Whom each kill picks (the ladder's scheduler lease holder, or any process) and how the
victim comes back: under its own id (on this host it takes the id over at once) or a new one.
"""
CLOCK = CLOCK_US["postgres"]


@dataclass
class Arenas:
    """The arena processes of the test, by worker id, and which ids were ever SIGKILLed."""

    url: str
    tmp_path: Path
    running: dict[str, BotProcess] = field(default_factory=dict)
    killed: set[str] = field(default_factory=set)

    def start(self, worker_id: str, log_name: str | None = None) -> BotProcess | None:
        """Start ``arena serve --worker-id worker_id`` (its log: ``log_name`` or the id);
        None if it exits before serving."""
        token_file = self.tmp_path / "admin"
        token_file.write_text(ADMIN)
        command = arena_serve_command(
            token_file,
            ["--database-url", self.url],
            WORKERS,
            *POLLING_LIMITS,
            "--worker-id",
            worker_id,
            "--validation-workers",
            str(WORKERS),
        )
        with self.log(log_name or worker_id).open("a") as log:
            try:
                process = start_server(worker_id, command, cwd=str(ROOT), stderr=log.fileno())
            except RuntimeError:
                return None
        self.running[worker_id] = process
        return process

    def log(self, worker_id: str) -> Path:
        return self.tmp_path / f"{worker_id}.log"

    def kill(self, worker_id: str) -> None:
        process = self.running.pop(worker_id).process
        process.send_signal(signal.SIGKILL)
        process.wait()
        stop_bot(process)  # closes its pipe
        self.killed.add(worker_id)

    def stop_all(self) -> dict[str, int | None]:
        """SIGTERM to every process at once, then wait for each to drain: exit codes."""
        for process in self.running.values():
            process.process.terminate()
        codes = {}
        for worker_id, process in self.running.items():
            codes[worker_id] = drain(process)
        self.running.clear()
        return codes


class Sampler(threading.Thread):
    """Reads the queue, the bots' limits and the workers' leases in one snapshot every
    ~200 ms and counts the samples in which each cap did not hold, with the first example."""

    def __init__(self, url: str, ladder_id: str) -> None:
        super().__init__(daemon=True)
        self.url, self.ladder_id = url, ladder_id
        self.stopping = threading.Event()
        self.violations: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.peaks: Counter[str] = Counter()
        self.samples = 0
        self.error: BaseException | None = None
        self._first_seen_us: dict[str, int] = {}
        self.longest_dead_s = 0.0
        """The longest a match was seen 'playing' after its worker's lease ran out."""

    def run(self) -> None:
        try:
            with psycopg.connect(self.url) as connection:
                connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                while not self.stopping.wait(0.2):
                    with connection.transaction():
                        self.sample(connection)
                    self.samples += 1
        except BaseException as error:  # reported by the test, not lost in the thread
            self.error = error

    def stop(self) -> None:
        self.stopping.set()
        self.join(10)

    def violate(self, kind: str, detail: str) -> None:
        self.violations[kind] += 1
        self.examples.setdefault(kind, detail)

    def report(self) -> list[str]:
        return [
            f"{kind}: in {count} of {self.samples} samples, first: {self.examples[kind]}"
            for kind, count in self.violations.items()
        ]

    def sample(self, connection: psycopg.Connection[Any]) -> None:
        now = int(connection.execute(f"SELECT {CLOCK}").fetchone()[0])  # type: ignore[index]
        queue = connection.execute(
            "SELECT match_id, ladder_id, status, seats, claimed_by FROM matches "
            "WHERE status IN ('waiting', 'playing')"
        ).fetchall()
        announced = dict(connection.execute("SELECT bot_id, max_matches FROM bots").fetchall())
        alive_until = dict(
            connection.execute("SELECT worker_id, alive_until_us FROM workers").fetchall()
        )
        ours = [row for row in queue if row[1] == self.ladder_id]
        playing = [row for row in queue if row[2] == "playing"]
        queued, in_play = len(ours), sum(row[2] == "playing" for row in ours)
        self.peaks["queue"] = max(self.peaks["queue"], queued)
        self.peaks["playing"] = max(self.peaks["playing"], in_play)
        if queued > QUEUE_TARGET:
            self.violate("queue", f"{queued} waiting+playing > target {QUEUE_TARGET}")
        if in_play > CONCURRENCY:
            self.violate("concurrency", f"{in_play} playing > {CONCURRENCY}")
        per_bot = Counter(bot for row in playing for bot in set(row[3].split(",")) - {HOUSE_RANDOM})
        self.peaks["per_bot"] = max(self.peaks["per_bot"], *per_bot.values(), 0)
        over = [
            f"{bot} in {matches} matches > {match_limit(announced.get(bot), LADDER_CAP)}"
            for bot, matches in per_bot.items()
            if matches > match_limit(announced.get(bot), LADDER_CAP)
        ]
        if over:
            self.violate("bot cap", ", ".join(over))
        stuck = []
        for match_id, _, _, _, worker in playing:
            first_seen = self._first_seen_us.setdefault(match_id, now)
            until = alive_until.get(worker)
            if until is not None and until > now:
                continue  # its worker is alive
            dead_since = first_seen if until is None else until
            self.longest_dead_s = max(self.longest_dead_s, (now - dead_since) / 1e6)
            bound_s = TAKEOVER_S if until is None else TAKEOVER_S - LEASE_S
            if now - dead_since > bound_s * 1e6:
                state = "unregistered" if until is None else "dead"
                dead_s = (now - dead_since) / 1e6
                stuck.append(f"{match_id} on {worker!r}, {state} for {dead_s:.1f} s")
        if stuck:
            self.violate("takeover", f"{len(stuck)} still playing, e.g. {stuck[0]}")


def scheduler_of(url: str, ladder_id: str) -> str | None:
    """The worker holding the ladder's scheduler lease now, if any."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            f"SELECT holder FROM leases WHERE name = %s AND until_us > {CLOCK}",
            (f"ladder:{ladder_id}",),
        ).fetchone()
    return None if row is None else str(row[0])


@contextmanager
def sleepy_bots(tmp_path: Path) -> Iterator[list[BotProcess]]:
    """``BOTS`` bot processes answering after 20-40 ms, each logging its EndMatch calls."""
    commands = [
        sleepy_command("20:40", ANNOUNCED, seed, tmp_path / f"bot{seed}.ends")
        for seed in range(BOTS)
    ]
    bots = start_sleepy_bots(commands, ROOT)
    try:
        yield bots
    finally:
        for bot in bots:
            stop_bot(bot.process)


def playing_on(url: str, worker_id: str) -> set[str]:
    """The matches 'playing' under ``worker_id`` now."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT match_id FROM matches WHERE status = 'playing' AND claimed_by = %s",
            (worker_id,),
        ).fetchall()
    return {str(row[0]) for row in rows}


def still_playing(url: str, match_ids: set[str]) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT match_id FROM matches WHERE status = 'playing' AND match_id = ANY(%s)",
            (sorted(match_ids),),
        ).fetchall()
    return {str(row[0]) for row in rows}


def none_playing(url: str, match_ids: set[str]) -> bool:
    return not still_playing(url, match_ids)


def chaos(arenas: Arenas, ladder_id: str, rng: random.Random) -> tuple[list[str], set[str]]:
    """A duplicate of a live id first (it must refuse to start), then kills and restarts as
    ``KILLS`` says, at random moments: what went wrong, and the matches the killed processes
    were playing (every one must be played again: none may stay 'playing')."""
    problems = []
    duplicate = sorted(arenas.running)[1]
    if arenas.start(duplicate, log_name="duplicate") is not None:
        problems.append(f"a second live process took worker id {duplicate!r}")
        arenas.kill(duplicate)  # the duplicate: one of the two
    elif "in use" not in arenas.log("duplicate").read_text():
        problems.append("the refused duplicate does not say its worker id is in use")
    lost: set[str] = set()
    leader_killed = False
    for number, (whom, comeback) in enumerate(KILLS):
        time.sleep(rng.uniform(2.0, 6.0))
        leader = scheduler_of(arenas.url, ladder_id)
        if whom == "leader" and leader in arenas.running:
            victim, leader_killed = leader, True
        else:
            victim = rng.choice(sorted(arenas.running))
        in_flight = playing_on(arenas.url, victim)
        arenas.kill(victim)
        lost |= in_flight
        if comeback == "new id":
            if arenas.start(f"{victim.split('~')[0]}~{number}") is None:
                problems.append(f"a new process (after killing {victim}) did not start")
            continue
        # Same host, same id, the old pid gone: it takes the id over at once (no wait for the
        # old lease) and puts the old run's matches back in the queue as it starts.
        if arenas.start(victim) is None:
            problems.append(f"{victim} did not restart under its own id after its kill")
            continue
        try:
            wait_for(partial(none_playing, arenas.url, in_flight), 5, "its matches requeued")
        except AssertionError:
            problems.append(f"{victim} restarted and left its dead run's matches 'playing'")
    if not leader_killed:
        problems.append("no ladder scheduler lease holder was found to kill")
    return problems, lost


def recorded(url: str) -> dict[str, tuple[list[str], str, record_pb2.MatchRecord]]:
    """Every finished match's seats, worker and record, by match id."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT m.match_id, m.seats, m.claimed_by, r.record FROM matches m "
            "JOIN records r ON r.match_id = m.match_id WHERE m.status = 'finished'"
        ).fetchall()
    return {
        match_id: (seats.split(","), worker, record_pb2.MatchRecord.FromString(bytes(blob)))
        for match_id, seats, worker, blob in rows
    }


def record_problems(url: str) -> list[str]:
    """A record per finished match, and no record or seat row of any other; no queued ladder
    match (a set of one here) played to a result twice, no bot validated by two sets; each
    record is of its own match."""
    problems = []
    with psycopg.connect(url) as connection:
        unrecorded, twice = connection.execute(
            "SELECT (SELECT COUNT(*) FROM matches m WHERE m.status = 'finished' AND NOT EXISTS "
            "(SELECT 1 FROM records r WHERE r.match_id = m.match_id)), "
            "(SELECT COUNT(*) FROM (SELECT set_id FROM matches WHERE status = 'finished' "
            "AND kind = 'ladder' GROUP BY set_id HAVING COUNT(*) > 1) AS sets)"
        ).fetchone()  # type: ignore[misc]
        loose = connection.execute(ROWS_WITHOUT_THEIR_MATCH_SQL).fetchone()
        loose_records, loose_seats = loose if loose is not None else (0, 0)
        validation_sets = Counter(
            bot
            for (seats,) in connection.execute(
                "SELECT MIN(seats) FROM matches WHERE kind = 'validation' GROUP BY set_id"
            )
            for bot in set(seats.split(",")) - {HOUSE_RANDOM}
        )
    if unrecorded:
        problems.append(f"{unrecorded} finished matches without a record")
    if loose_records or loose_seats:
        problems.append(f"{loose_records} records and {loose_seats} seat rows not of a "
                        "finished match")  # fmt: skip
    if twice:
        problems.append(f"{twice} queued matches were played to a result twice")
    problems += [f"{bot} validated by {n} sets" for bot, n in validation_sets.items() if n > 1]
    for match_id, (_, _, record) in recorded(url).items():
        if record.match_id != match_id:
            problems.append(f"the record stored for {match_id} is of {record.match_id}")
    return problems


def announcement_problems(
    url: str, ends: dict[str, list[dict[str, Any]]], killed: set[str]
) -> list[str]:
    """What the bots were told at EndMatch against what was recorded: every announced result
    recorded as announced, aborted matches not recorded, and a recorded result unannounced
    only if its process was killed (between recording and announcing)."""
    problems = []
    results = recorded(url)
    announced = set()
    for bot_id, entries in ends.items():
        for end in entries:
            match_id, seat = end["match_id"], end["seat"]
            found = results.get(match_id)
            if end["status"] == record_pb2.MATCH_STATUS_ABORTED:
                if found is not None:
                    problems.append(f"{match_id} announced aborted but recorded")
                continue
            announced.add(match_id)
            if found is None:
                problems.append(f"{match_id} announced to {bot_id} but not recorded")
                continue
            seats, _, record = found
            told = (seats[seat], end["status"], end["ranks"], end["scores"])
            outcome = record.outcome
            stored = (bot_id, record.status, list(outcome.ranks), list(outcome.scores))
            if told != stored:
                problems.append(f"{match_id}: announced {told}, recorded {stored}")
    for match_id, (_, worker, _) in results.items():
        if match_id not in announced and worker not in killed:
            problems.append(f"{match_id} recorded by {worker!r} (never killed), unannounced")
    return problems


def rating_problems(url: str, ladder_id: str) -> list[str]:
    """Replay every rated result from its record, each from the ratings its bots had then,
    and compare with the ratings stored after it (``match_seats``) and at the end
    (``entries``). Results of different processes commit in an order the finish times need
    not follow, so the next result applied is the first (by finish time) that reproduces its
    stored ratings from the ratings replayed so far; a lost or doubled update reproduces none.
    """
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT m.match_id, m.seats, r.record FROM matches m JOIN records r ON "
            "r.match_id = m.match_id WHERE m.ladder_id = %s AND m.status = 'finished' "
            "ORDER BY m.finished_at_us, m.match_id",
            (ladder_id,),
        ).fetchall()
        after = {
            (match_id, bot): Rating(mu, sigma)
            for match_id, bot, mu, sigma in connection.execute(
                "SELECT match_id, bot_id, mu, sigma FROM match_seats WHERE mu IS NOT NULL"
            )
        }
        final = {
            bot: Rating(mu, sigma)
            for bot, mu, sigma in connection.execute(
                "SELECT bot_id, mu, sigma FROM entries WHERE ladder_id = %s", (ladder_id,)
            )
        }
    pending = []
    for match_id, seats, blob in rows:
        record = record_pb2.MatchRecord.FromString(bytes(blob))
        if record.status in RATED_STATUSES:
            ranks = dict(zip(seats.split(","), record.outcome.ranks, strict=True))
            pending.append((match_id, set_ranks([ranks])))
    ratings: dict[str, Rating] = {}
    while pending:
        for index, (match_id, ranks) in enumerate(pending):
            replayed = rate({bot: ratings.get(bot, Rating()) for bot in ranks}, ranks)
            if all(same(replayed[bot], after.get((match_id, bot))) for bot in ranks):
                ratings.update(replayed)
                del pending[index]
                break
        else:
            return [f"{len(pending)} rated results reproduce no stored rating, first {pending[0]}"]
    return [
        f"{bot}: replayed {ratings.get(bot)}, stored {final.get(bot)}"
        for bot in sorted(set(final) | set(ratings))
        if not same(ratings.get(bot, Rating()), final.get(bot))
    ]


def same(a: Rating, b: Rating | None) -> bool:
    return b is not None and math.isclose(a.mu, b.mu) and math.isclose(a.sigma, b.sigma)


def test_arena_processes_killed_and_restarted_act_as_one_arena(tmp_path: Path) -> None:
    with postgres_url() as url, sleepy_bots(tmp_path) as bots:
        arenas = Arenas(url, tmp_path)
        try:
            for name in ("alpha", "beta", "gamma"):
                assert arenas.start(name) is not None, arenas.log(name).read_text()[-3000:]
            client = ArenaClient(arenas.running["alpha"].address, ADMIN, timeout_s=10)
            ids = register(client, bots, "klaberjass")
            wait_active(client, ids)
            ladder = short_klaberjass_ladder("chaos", CONCURRENCY, LADDER_CAP)
            created = client.call("CreateLadder", pb.CreateLadderRequest(config=ladder))
            ladder_id = created.ladder.ladder_id
            client.close()
            sampler = Sampler(url, ladder_id)
            sampler.start()
            problems, lost = chaos(arenas, ladder_id, random.Random(19))
            try:  # the last kill's matches too: after its lease, within the takeover bound
                wait_for(partial(none_playing, url, lost), LEASE_S + TAKEOVER_S + 5)
            except AssertionError:
                problems.append(
                    f"{len(still_playing(url, lost))} killed runs' matches not replayed"
                )
            time.sleep(2)
            codes = arenas.stop_all()
            sampler.stop()
        finally:
            arenas.stop_all()
        for bot in bots:
            stop_bot(bot.process)
        assert sampler.error is None, sampler.error
        assert sampler.samples > 50, sampler.samples
        problems += sampler.report()
        problems += [f"{worker_id} exited {code}" for worker_id, code in codes.items() if code]
        by_worker = counts(url)  # a record per finished match; each result rated once
        if not any("~" in worker_id for worker_id in by_worker):
            problems.append("no process started under a new id after a kill finished a match")
        with psycopg.connect(url) as connection:
            left = connection.execute(
                "SELECT COUNT(*) FROM matches WHERE status = 'playing'"
            ).fetchone()
        if left and left[0]:
            problems.append(f"{left[0]} matches still 'playing' after every process stopped")
        problems += record_problems(url)
        ends = {bot_id: read_end_log(tmp_path / f"bot{i}.ends") for i, bot_id in enumerate(ids)}
        problems += announcement_problems(url, ends, arenas.killed)
        problems += rating_problems(url, ladder_id)
    print(
        f"chaos: {sum(by_worker.values())} ladder matches by worker {by_worker}; "
        f"{sampler.samples} samples, peaks {dict(sampler.peaks)}, a dead worker's match "
        f"played on at most {sampler.longest_dead_s:.1f} s past its lease"
    )
    assert sum(by_worker.values()) > 50, by_worker
    assert not problems, "\n".join(problems[:40])


def test_the_rating_replay_finds_a_lost_or_a_changed_update() -> None:
    """The replay above can fail: results recorded through the store replay cleanly, and
    stop doing so once an entry misses its last update or a stored rating point changes."""
    with postgres_url() as url:
        database = open_database(url)
        try:
            store = Store(database)
            ids, _ = active_bots(store, 3)
            ladder_id = store.create_ladder(ladder_config())
            store.enter_active_bots(ladder_id, "oh-hell")
            for number in range(6):
                store.enqueue(ladder_id, "ladder", [PlannedMatch(number, tuple(ids))])
                claim = store.claim("here", 60)
                assert claim is not None
                ranks = [1 + (number + seat) % 3 for seat in range(3)]
                store.record_result(finished_record(claim.match_id, ranks, [3, 2, 1]))
            assert rating_problems(url, ladder_id) == []
            with database.transaction() as tx:
                tx.execute("UPDATE entries SET mu = 25.0 WHERE bot_id = ?", (ids[0],))
            assert [ids[0] in problem for problem in rating_problems(url, ladder_id)] == [True]
            with database.transaction() as tx:
                tx.execute("UPDATE match_seats SET mu = mu + 0.5 WHERE bot_id = ?", (ids[1],))
            assert "reproduce no stored rating" in rating_problems(url, ladder_id)[0]
        finally:
            database.close()
