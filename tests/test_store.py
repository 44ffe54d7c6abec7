"""The store on real SQLite and real PostgreSQL: owners, leases, idempotent results, ratings."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openskill.models import PlackettLuce

from arena.duplicate_scoring import Rotation
from arena.matchmaking import PlannedMatch, owed
from arena.ratings import DAY_US, INITIAL_MU, INITIAL_SIGMA, Rating, after_idle, rate_duplicate
from arena.store.claims import HOUSE_RANDOM, Claim
from arena.store.coordination import Coordination
from arena.store.db import Tx, open_database
from arena.store.repository import CHANGE_GRACE_US, OWNER_TOKEN_PREFIX, Store, StoreError, now_us
from arena.store.schema import MIGRATIONS
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2, record_pb2
from referee.codec.summaries import summaries_from_moves
from tests.stores import BACKENDS, postgres_available, postgres_url, rows_without_their_match


def ladder_config(
    name: str = "l1",
    seats: int = 3,
    duplicate: bool = False,
    concurrency: int = 64,
    game: str = "oh-hell",
) -> pb.LadderConfig:
    """A ladder of ``seats``-seat Oh Hell (or ``game``) playing up to ``concurrency`` matches
    at once."""
    return pb.LadderConfig(
        name=name,
        settings=options_pb2.GameSettings(game=game, num_seats=seats),
        move_time_ms=1000,
        duplicate_deals=duplicate,
        concurrency=concurrency,
    )


def test_owner_tokens_carry_the_prefix_and_never_start_like_an_option(store: Store) -> None:
    tokens = [store.create_owner(f"owner{index}") for index in range(50)]
    tokens.append(store.rotate_token("owner0", tokens[0]))
    assert all(token.startswith(OWNER_TOKEN_PREFIX) for token in tokens)
    assert len(set(tokens)) == len(tokens)


def active_bots(store: Store, count: int, game: str = "oh-hell") -> tuple[list[str], str]:
    """Register ``count`` bots of one owner and activate them; returns ids and the token."""
    bot, token = store.register_bot("alice", None, "bot0", game, "127.0.0.1:1", "1")
    assert token
    ids = [bot.bot_id]
    for index in range(1, count):
        ids.append(
            store.register_bot("alice", token, f"bot{index}", game, "127.0.0.1:1", "1")[0].bot_id
        )
    for bot_id in ids:
        store.set_state_by_arena(bot_id, "active", "", 0)
    # Validated, so heard from: no preference announced (see test_capacity for the limits).
    store.set_announced_limits(dict.fromkeys(ids, 0))
    return ids, token


def finished_record(match_id: str, ranks: list[int], scores: list[int]) -> record_pb2.MatchRecord:
    return record_pb2.MatchRecord(
        match_id=match_id,
        status=record_pb2.MATCH_STATUS_COMPLETED,
        outcome=record_pb2.MatchOutcome(ranks=ranks, scores=scores),
        moves=[record_pb2.MoveRecord(index=i, seat=i % 3, elapsed_us=1000) for i in range(6)],
    )


def test_owner_token_is_shown_once_and_guards_the_owners_bots(store: Store) -> None:
    bot, token = store.register_bot("alice", None, "b1", "oh-hell", "127.0.0.1:1", "1")
    assert token and bot.state == "validating"
    with pytest.raises(StoreError) as denied:
        store.register_bot("alice", None, "b2", "oh-hell", "127.0.0.1:1", "1")
    assert denied.value.code == "PERMISSION_DENIED"
    with pytest.raises(StoreError):
        store.register_bot("alice", "wrong", "b2", "oh-hell", "127.0.0.1:1", "1")
    second, again = store.register_bot("alice", token, "b2", "oh-hell", "127.0.0.1:1", "1")
    assert again is None
    with pytest.raises(StoreError) as duplicate:
        store.register_bot("alice", token, "b2", "oh-hell", "127.0.0.1:1", "1")
    assert duplicate.value.code == "ALREADY_EXISTS"
    assert len(store.bots()) == 2, "rejected requests leave nothing behind"
    with pytest.raises(StoreError):
        store.set_bot_state(second.bot_id, "wrong", "paused")
    assert store.set_bot_state(second.bot_id, token, "paused").state == "paused"
    resumed = store.set_bot_state(second.bot_id, token, "active")
    assert resumed.state == "validating", "a pause does not skip validation"
    store.set_state_by_arena(second.bot_id, "active", "passed validation", 0)
    assert store.set_bot_state(second.bot_id, token, "paused").state == "paused"
    assert store.set_bot_state(second.bot_id, token, "active").state == "active"
    assert store.update_bot(second.bot_id, token, "", "2").state == "validating"
    store.set_bot_state(second.bot_id, token, "paused")
    resumed = store.set_bot_state(second.bot_id, token, "active")
    assert resumed.state == "validating", "a new version is validated, paused or not"
    assert store.set_bot_state(second.bot_id, token, "retired").state == "retired"
    with pytest.raises(StoreError):
        store.set_bot_state(second.bot_id, token, "active")


def test_an_address_belongs_to_one_owner_and_entrants_carry_owner_and_address(
    store: Store,
) -> None:
    """Another owner cannot register, or move a bot to, an address an owner's bot uses (its
    key: where the endpoint resolved, so two spellings of one address are one); the same owner
    may; a retired bot frees it. Moving a bot sends it back to validation, and matchmaking
    reads each entrant's owner and address."""
    here, there = "203.0.114.9:50051", "203.0.114.10:50051"
    bot, token = store.register_bot(
        "alice", None, "a", "oh-hell", "bot.alice.example:50051", "1", here
    )
    assert token
    for name, endpoint in (("copy", "203.0.114.9:50051"), ("alias", "evil.example:50051")):
        with pytest.raises(StoreError) as taken:
            store.register_bot(f"mallory-{name}", None, name, "oh-hell", endpoint, "1", here)
        assert taken.value.code == "ALREADY_EXISTS" and "another owner" in str(taken.value)
    assert [b.owner for b in store.bots()] == ["alice"], "a refusal leaves no owner behind"
    second = store.register_bot("alice", token, "a2", "oh-hell", "203.0.114.9:50051", "1", here)[0]
    other, other_token = store.register_bot("bob", None, "b", "oh-hell", there, "1", there)
    assert other_token
    with pytest.raises(StoreError) as moved:
        store.update_bot(other.bot_id, other_token, "bot.alice.example:50051", "", here)
    assert moved.value.code == "ALREADY_EXISTS"
    for bot_id in (bot.bot_id, second.bot_id, other.bot_id):
        store.set_state_by_arena(bot_id, "active", "passed validation", 0)
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    keys = {e.bot_id: (e.owner, e.address) for e in store.entrants(ladder_id)}
    alice, bob = keys[bot.bot_id][0], keys[other.bot_id][0]
    assert alice != bob and keys == {
        bot.bot_id: (alice, here),
        second.bot_id: (alice, here),
        other.bot_id: (bob, there),
    }
    changes = store.entrant_changes(ladder_id, "oh-hell", 0)
    assert {(e.owner, e.address) for e in changes.active} == {(alice, here), (bob, there)}

    assert store.update_bot(other.bot_id, other_token, there, "", there).state == "active"
    assert store.update_bot(other.bot_id, other_token, "", "", None).state == "active"
    moved_bot = store.update_bot(other.bot_id, other_token, "203.0.114.11:50051", "", None)
    assert moved_bot.state == "validating", "a new endpoint is validated again"
    assert moved_bot.endpoint == "203.0.114.11:50051"
    store.set_bot_state(bot.bot_id, token, "retired")
    with pytest.raises(StoreError):
        store.register_bot("carol", None, "c", "oh-hell", here, "1", here)  # a2 is still there
    store.set_bot_state(second.bot_id, token, "retired")
    assert store.register_bot("carol", None, "c", "oh-hell", here, "1", here)[0].state


def test_two_owners_racing_for_one_address_get_it_once(store: Store) -> None:
    """Registrations at one address from eight owners at once: exactly one is stored."""
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def register(index: int) -> None:
        start.wait()
        try:
            store.register_bot(f"o{index}", None, "b", "oh-hell", "h:1", "1", "203.0.114.9:1")
            outcomes.append("ok")
        except StoreError as error:
            outcomes.append(error.code)

    threads = [threading.Thread(target=register, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ALREADY_EXISTS"] * 7 + ["ok"]
    assert len(store.bots()) == 1


def test_results_count_once_and_match_openskill(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    store.enqueue(ladder_id, "ladder", [PlannedMatch(5, tuple(ids))])
    claim = store.claim("w1", 60)
    assert claim is not None and claim.seats == tuple(ids)
    record = finished_record(claim.match_id, [2, 1, 3], [10, 20, 5])
    ratings = store.record_result(record)
    assert ratings is not None
    assert store.record_result(record) is None, "a result delivered twice counts once"
    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in ids], ranks=[2, 1, 3])
    standings = {s.bot.bot_id: s for s in store.standings(ladder_id)}
    for bot_id, team in zip(ids, expected, strict=True):
        assert standings[bot_id].mu == pytest.approx(team[0].mu)
        assert standings[bot_id].sigma == pytest.approx(team[0].sigma)
        assert standings[bot_id].matches == 1
        assert (ratings[bot_id].mu, ratings[bot_id].sigma) == (
            standings[bot_id].mu,
            standings[bot_id].sigma,
        ), "what the result returns for the matchmaking pool is what was stored"
    assert [s.position for s in store.standings(ladder_id)] == [1, 2, 3]
    assert store.standings(ladder_id)[0].bot.bot_id == ids[1]
    profile = store.profile(ids[1], 10)
    assert len(profile.rating_history) == 1 and len(profile.recent_matches) == 1
    assert profile.recent_matches[0].rank == 1 and profile.moves == 2


def test_duplicate_set_is_rated_once_when_every_rotation_is_done(store: Store) -> None:
    ids, _ = active_bots(store, 2)
    ladder_id = store.create_ladder(ladder_config(seats=2, duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    store.enqueue(
        ladder_id, "ladder", [PlannedMatch(9, (ids[0], ids[1])), PlannedMatch(9, (ids[1], ids[0]))]
    )
    first, second = store.claim("w", 60), store.claim("w", 60)
    assert first and second and first.seed == second.seed == 9
    assert store.record_result(finished_record(first.match_id, [1, 2], [5, 1])) == {}
    assert all(s.matches == 0 for s in store.standings(ladder_id)), "half a set is not rated"
    assert [e.scheduled for e in store.entrants(ladder_id)] == [2, 2], "one done, one playing"
    ratings = store.record_result(finished_record(second.match_id, [1, 2], [5, 1]))
    assert ratings is not None and set(ratings) == set(ids)
    assert [e.scheduled for e in store.entrants(ladder_id)] == [2, 2]
    standings = store.standings(ladder_id)
    assert all(s.matches == 2 for s in standings)
    # Each bot won the deal once from the same seat: the set is a tie, ratings stay equal.
    assert standings[0].mu == pytest.approx(standings[1].mu)


def test_leases_requeue_dead_workers_matches_and_claims_never_collide(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    config = ladder_config()
    config.max_matches_per_bot = 40  # every match has the same bots: let them play all 40
    ladder_id = store.create_ladder(config)
    store.enter_active_bots(ladder_id, "oh-hell")
    for seed in range(40):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, tuple(ids))])
    held = store.claim("crashed", 60)
    assert held is not None
    assert store.recover("crashed") == 1, "a restarted worker requeues what it held"
    expired = store.claim("slow", -1)  # a lease already in the past
    assert expired is not None and store.recover("other") == 1
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while (claim := store.claim(name, 60)) is not None:
            with lock:
                claimed.append(claim.match_id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(claimed) == 40 and len(set(claimed)) == 40


def test_a_missing_or_unknown_thing_is_not_found(store: Store) -> None:
    for call in (
        lambda: store.bot("nope"),
        lambda: store.ladder("nope"),
        lambda: store.match_record("nope"),
        lambda: store.record_result(finished_record("nope", [1], [0])),
    ):
        with pytest.raises(StoreError) as error:
            call()
        assert error.value.code == "NOT_FOUND"
    assert rows_without_their_match(store) == (0, 0), "nothing written for the unknown match"


def test_a_set_with_a_bot_no_longer_active_is_not_enqueued(store: Store) -> None:
    ids, token = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    store.set_bot_state(ids[0], token, "paused")
    assert store.enqueue(ladder_id, "ladder", [PlannedMatch(1, tuple(ids))]) is False
    assert store.waiting(ladder_id) == 0
    assert all(e.scheduled == 0 for e in store.entrants(ladder_id))
    store.set_bot_state(ids[0], token, "active")
    assert store.enqueue(ladder_id, "ladder", [PlannedMatch(1, tuple(ids))]) is True


def test_a_tick_reads_only_the_bots_whose_state_changed(store: Store) -> None:
    ids, token = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    first = store.entrant_changes(ladder_id, "oh-hell", 0)
    assert {e.bot_id for e in first.active} == set(ids) and first.gone == []
    quiet = store.entrant_changes(ladder_id, "oh-hell", first.next_since_us + 10**7)
    assert quiet.active == [] and quiet.gone == [], "nothing changed after that"
    since = now_us()
    store.set_bot_state(ids[0], token, "paused")
    newcomer = store.register_bot("alice", token, "late", "oh-hell", "127.0.0.1:1", "1")[0]
    assert store.entrant_changes(ladder_id, "oh-hell", since).active == [], "still validating"
    store.set_state_by_arena(newcomer.bot_id, "active", "passed validation", 0)
    changes = store.entrant_changes(ladder_id, "oh-hell", since)
    assert changes.gone == [ids[0]]
    assert [(e.bot_id, e.scheduled, e.sigma) for e in changes.active] == [
        (newcomer.bot_id, 0, INITIAL_SIGMA)
    ], "a bot that became active is entered with a fresh rating"
    assert newcomer.bot_id in {e.bot_id for e in store.entrants(ladder_id)}
    assert changes.next_since_us <= now_us() - CHANGE_GRACE_US


@contextlib.contextmanager
def raw_database(backend: str, tmp_path: Path) -> Iterator[tuple[str, Tx]]:
    """An empty database of ``backend`` and a transaction on it outside the store."""
    if backend == "sqlite":
        path = str(tmp_path / "old.sqlite3")
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as connection:
            yield path, Tx(connection.cursor(), "sqlite")
        return
    if not postgres_available():
        pytest.skip("no PostgreSQL server reachable")
    import psycopg

    with postgres_url() as url, psycopg.connect(url, autocommit=True) as connection:
        yield url, Tx(connection.cursor(), "postgres")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_database_of_the_previous_schema_is_migrated(backend: str, tmp_path: Path) -> None:
    with raw_database(backend, tmp_path) as (url, tx):
        tx.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version, statements in enumerate(MIGRATIONS[:2], start=1):
            for statement in statements(backend):
                tx.execute(statement)
            tx.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        tx.execute("INSERT INTO owners VALUES ('o', 'ann', 'h', 0)")
        tx.execute(
            "INSERT INTO bots (bot_id, owner_id, name, game, endpoint, version, state, "
            "created_at_us) VALUES ('b1', 'o', 'one', 'oh-hell', 'h:1', '1', 'active', 0)"
        )
        tx.execute(
            "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
            "result_status, created_at_us, finished_at_us) "
            "VALUES ('m1', 'old', 's1', 'ladder', 1, 'b1,x', 'finished', 1, 0, 7)"
        )
        old_ladder = ladder_config("old").SerializeToString()
        tx.execute("INSERT INTO ladders VALUES ('old', 'old', 'oh-hell', ?, 0)", (old_ladder,))
        # Two matches finished (m1 and one before) and one queued, counted when queued.
        # first_places 7: a figure the recount of migration 16 replaces (b1 won m1 only)
        tx.execute("INSERT INTO entries VALUES ('old', 'b1', 30, 7.5, 2, 3, 7)")
        tx.execute(
            "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
            "created_at_us) VALUES ('m2', 'old', 's2', 'ladder', 2, 'x,b1', 'waiting', 9)"
        )
        for seat, bot in enumerate(["b1", "x"]):
            tx.execute(  # b1 made 4 moves, 1 a fault
                "INSERT INTO match_seats VALUES ('m1', ?, ?, ?, 0, ?, ?, 10, 7)",
                (seat, bot, seat + 1, 4 if bot == "b1" else 1, 1 if bot == "b1" else 0),
            )
            tx.execute("INSERT INTO bot_latency VALUES (?, 'm1', 1000, 2000, 1)", (bot,))
            tx.execute(
                "INSERT INTO rating_history VALUES ('old', ?, 'm1', ?, 7.5, 5)", (bot, 30 - seat)
            )
        database = open_database(url)
        try:
            store = Store(database)
            profile = store.profile("b1", 10)
            assert [
                (p.ladder_id, p.match_id, p.mu, p.sigma, p.at_us) for p in profile.rating_history
            ] == [("old", "m1", 30.0, 7.5, 7)], "history carried over, timed by its match's end"
            assert (profile.latency_p50_ms, profile.latency_p95_ms) == (1.0, 2.0)
            assert [(e.bot_id, e.scheduled) for e in store.entrants("old")] == [("b1", 3)]
            old = store.entrants("old")
            assert [(e.owner, e.address) for e in old] == [("o", "h:1")], "keyed by its text"
            assert [s.fault_rate for s in store.standings("old")] == [25.0], "moves summed once"
            assert [s.first_places for s in store.standings("old")] == [1], "recounted"
            assert [v.version for v in store.profile("b1", 1).versions] == ["1"]
            ladder_id = store.create_ladder(ladder_config())
            assert store.entrant_changes(ladder_id, "oh-hell", 1).active == []
            store.enter_active_bots(ladder_id, "oh-hell")
            assert [e.bot_id for e in store.entrants(ladder_id)] == ["b1"], "old bots enter"
            with database.transaction() as check:
                assert check.one("SELECT MAX(version) FROM schema_version")[0] == len(MIGRATIONS)
        finally:
            database.close()


def test_rotations_finishing_at_once_rate_their_set_exactly_once(store: Store) -> None:
    ids, _ = active_bots(store, 2)
    ladder_id = store.create_ladder(ladder_config(seats=2, duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    sets = 8
    for seed in range(sets):
        store.enqueue(
            ladder_id,
            "ladder",
            [PlannedMatch(seed, (ids[0], ids[1])), PlannedMatch(seed, (ids[1], ids[0]))],
        )
    for _ in range(sets):
        pair = [store.claim("w", 60), store.claim("w", 60)]
        barrier = threading.Barrier(2)

        def finish(match_id: str, barrier: threading.Barrier) -> None:
            barrier.wait()
            store.record_result(finished_record(match_id, [1, 2], [5, 1]))

        threads = [
            threading.Thread(target=finish, args=(claim.match_id, barrier))
            for claim in pair
            if claim
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [s.matches for s in store.standings(ladder_id)] == [2 * sets, 2 * sets]


def test_a_catch_up_reads_only_the_entries_that_changed(store: Store) -> None:
    ids, token = active_bots(store, 5)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    assert len(store.entrants(ladder_id)) == 5
    since = now_us()
    assert store.entrants(ladder_id, since) == []
    store.enqueue(ladder_id, "ladder", [PlannedMatch(3, tuple(ids[:3]))])
    assert store.entrants(ladder_id, since) == [], "queuing a set writes no entry"
    scheduled = {e.bot_id: e.scheduled for e in store.entrants(ladder_id)}
    assert scheduled == {b: 1 if b in ids[:3] else 0 for b in ids}, "counted from the queue"
    claim = store.claim("w", 60)
    assert claim is not None
    ratings = store.record_result(finished_record(claim.match_id, [3, 1, 2], [0, 9, 5]))
    assert ratings is not None
    rated = {e.bot_id: e for e in store.entrants(ladder_id, since)}
    assert set(rated) == set(ids[:3])
    for bot_id, entrant in rated.items():
        assert entrant.rating == pytest.approx(ratings[bot_id].display)
        assert entrant.sigma == ratings[bot_id].sigma
        assert entrant.scheduled == 1, "counted once: finished now, no longer in flight"
    store.set_bot_state(ids[0], token, "paused")
    assert ids[0] not in {e.bot_id for e in store.entrants(ladder_id, since)}, "active only"


def test_seat_rows_are_the_same_from_a_records_summaries_or_from_its_moves(store: Store) -> None:
    """Records carry per-seat summaries the store uses as they are; records written before
    they existed (no summaries) are summed up from their moves, to the same rows."""
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    store.enqueue(ladder_id, "ladder", [PlannedMatch(5, tuple(ids)), PlannedMatch(6, tuple(ids))])
    rows = []
    for with_summaries in (False, True):
        claim = store.claim("w1", 60)
        assert claim is not None
        record = finished_record(claim.match_id, [1, 2, 3], [30, 20, 10])
        del record.moves[:]
        for i in range(9):  # seat i % 3 answers in (i + 1) ms; move 4 (seat 1) timed out
            fault = record_pb2.FAULT_KIND_TIMEOUT if i == 4 else record_pb2.FAULT_KIND_UNSPECIFIED
            record.moves.add(index=i, seat=i % 3, elapsed_us=1000 * (i + 1), fault=fault)
        if with_summaries:
            record.seat_summaries.extend(summaries_from_moves(record, 3))
        store.record_result(record)
        with store.db.transaction() as tx:
            rows.append(
                tx.all(
                    "SELECT seat, moves, faults, latency_sum_us, p50_us, p95_us "
                    "FROM match_seats WHERE match_id = ? ORDER BY seat",
                    (claim.match_id,),
                )
            )
    assert [tuple(row) for row in rows[0]] == [tuple(row) for row in rows[1]]
    assert tuple(rows[0][0]) == (0, 3, 0, 12000, 4000, 7000)  # 1, 4, 7 ms
    assert tuple(rows[0][1]) == (1, 3, 1, 15000, 5000, 8000)  # 2, 5, 8 ms
    assert store.profile(ids[1], 10).faults == {"timeout": 2}, "both records' fault counted"


def test_validation_is_pending_until_its_matches_are_finished(store: Store) -> None:
    """A validating bot's validation matches count as pending while waiting or playing, and
    the bot becomes active when every one of them finished without a fault."""
    bot, _ = store.register_bot("carol", None, "new-bot", "oh-hell", "127.0.0.1:1", "1")
    assert not store.has_validation(bot.bot_id)
    seats = (bot.bot_id, HOUSE_RANDOM, HOUSE_RANDOM)
    store.enqueue(None, "validation", [PlannedMatch(1, seats), PlannedMatch(2, seats)])
    assert store.has_validation(bot.bot_id)
    for _ in range(2):
        claim = store.claim("w1", 60)
        assert claim is not None
        assert store.has_validation(bot.bot_id), "playing counts as pending"
        assert store.bot(bot.bot_id).state == "validating"
        store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]))
    assert not store.has_validation(bot.bot_id)
    assert store.bot(bot.bot_id).state == "active"


def test_standings_come_in_pages_with_fault_rates_counted_as_results_arrive(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    store.enqueue(ladder_id, "ladder", [PlannedMatch(5, tuple(ids)), PlannedMatch(6, tuple(ids))])
    for ranks in ([2, 1, 3], [2, 1, 3]):
        claim = store.claim("w1", 60)
        assert claim is not None
        record = finished_record(claim.match_id, ranks, [10, 20, 5])
        record.moves[1].fault = record_pb2.FAULT_KIND_TIMEOUT  # seat 1: 1 fault in 2 moves
        store.record_result(record)
    whole = store.standings(ladder_id)
    assert [s.position for s in whole] == [1, 2, 3] and whole[0].bot.bot_id == ids[1]
    assert [s.fault_rate for s in whole] == [50.0, 0.0, 0.0], "2 faults in 4 moves over 2 matches"
    assert store.count_entrants(ladder_id) == 3
    assert store.standings(ladder_id, limit=2) == whole[:2]
    assert store.standings(ladder_id, limit=1, offset=1) == whole[1:2], "positions stay absolute"
    assert store.standings(ladder_id, offset=2) == whole[2:]
    assert store.standings(ladder_id, limit=5, offset=3) == []


# -- match lifecycle: new ids on requeue, lost claims, parking, withheld rotations -------------


def queued_match(store: Store, seats: int = 3, duplicate: bool = False) -> tuple[str, list[str]]:
    """A ladder with active bots and one queued set; returns the ladder id and the bots."""
    ids, _ = active_bots(store, seats)
    ladder_id = store.create_ladder(ladder_config(seats=seats, duplicate=duplicate))
    store.enter_active_bots(ladder_id, "oh-hell")
    rotations = [tuple(ids[(i + s) % seats] for i in range(seats)) for s in range(seats)]
    planned = [PlannedMatch(7, rotation) for rotation in (rotations if duplicate else [tuple(ids)])]
    store.enqueue(ladder_id, "ladder", planned)
    return ladder_id, ids


def statuses(store: Store) -> dict[str, tuple[str, int]]:
    with store.db.transaction() as tx:
        return {m: (s, f) for m, s, f in tx.all("SELECT match_id, status, failures FROM matches")}


def test_a_match_back_in_the_queue_is_played_under_a_new_id(store: Store) -> None:
    queued_match(store)
    first = store.claim("w1", 60)
    assert first is not None
    assert store.release(first.match_id, "someone-else") is None, "only the holder releases"
    released = store.release(first.match_id, "w1")
    assert released is not None and released != first.match_id
    assert statuses(store) == {released: ("waiting", 0)}, "a release is not a failure"
    second = store.claim("w1", 60)
    assert second is not None and second.match_id == released and second.seed == first.seed
    with pytest.raises(StoreError) as lost:  # the old id's result is refused
        store.record_result(finished_record(first.match_id, [1, 2, 3], [3, 2, 1]), "w1")
    assert lost.value.code == "FAILED_PRECONDITION" and "no longer claimed" in str(lost.value)

    with store.db.transaction() as tx:  # the lease runs out; another process recovers it
        tx.execute("UPDATE matches SET lease_until_us = 0")
    assert store.recover(None) == 1
    ((third, (status, failures)),) = statuses(store).items()
    assert third not in (first.match_id, second.match_id) and (status, failures) == ("waiting", 1)
    with pytest.raises(StoreError, match="no longer claimed"):
        store.record_result(finished_record(second.match_id, [1, 2, 3], [3, 2, 1]), "w1")
    again = store.claim("w2", 60)
    assert again is not None and again.match_id == third
    with pytest.raises(StoreError, match="no longer claimed"):  # held, but by w2
        store.record_result(finished_record(third, [1, 2, 3], [3, 2, 1]), "w1")
    assert store.record_result(finished_record(third, [1, 2, 3], [3, 2, 1]), "w2")
    assert store.record_result(finished_record(third, [1, 2, 3], [3, 2, 1]), "w2") is None


def test_a_match_that_keeps_failing_is_parked_then_requeued_or_voided(store: Store) -> None:
    ladder_id, ids = queued_match(store)
    seen = []
    for attempt in range(1, 4):
        claim = store.claim("w", 60)
        assert claim is not None
        seen.append(claim.match_id)
        requeued = store.fail(claim.match_id, "w", "play", "RuntimeError: boom " + "x" * 5000, 3)
        assert requeued is not None and requeued.match_id not in seen
        assert requeued.status == ("parked" if attempt == 3 else "waiting")
    assert store.claim("w", 60) is None, "a parked match is not claimed"
    assert store.waiting(ladder_id) == 0, "nor counted in the ladder's queue"
    assert all(e.scheduled == 0 for e in store.entrants(ladder_id)), "nor in the bots' schedules"
    (parked,), total = store.parked_matches(10)
    assert requeued is not None
    assert total == 1 and parked.match_id == requeued.match_id and parked.failures == 3
    assert parked.failure_kind == pb.MATCH_FAILURE_KIND_PLAY and list(parked.bot_ids) == ids
    assert (
        parked.failure_detail.startswith("RuntimeError: boom")
        and len(parked.failure_detail) <= 1000
    )
    assert store.parked_counts() == {"play": 1}

    store.requeue_parked(parked.match_id)
    assert statuses(store) == {parked.match_id: ("waiting", 0)}, "requeued with a clean slate"
    with pytest.raises(StoreError) as not_parked:
        store.requeue_parked(parked.match_id)
    assert not_parked.value.code == "FAILED_PRECONDITION"
    for _ in range(3):
        claim = store.claim("w", 60)
        assert claim is not None
        store.fail(claim.match_id, "w", "setup", "ValueError: no such game", 3)
    (parked,), _ = store.parked_matches(10)
    assert parked.failure_kind == pb.MATCH_FAILURE_KIND_SETUP
    store.void_parked(parked.match_id, "the deal breaks the referee")
    record = store.match_record(parked.match_id)
    assert record.status == record_pb2.MATCH_STATUS_VOIDED and record.seed == 7
    assert "operator" in record.status_detail and "the deal breaks" in record.status_detail
    assert store.parked_matches(10) == ([], 0)
    assert all(s.matches == 0 for s in store.standings(ladder_id)), "a void is not rated"
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: store.void_parked(parked.match_id, ""), "FAILED_PRECONDITION"),
        (lambda: store.void_parked("nope", ""), "NOT_FOUND"),
        (lambda: store.requeue_parked("nope"), "NOT_FOUND"),
    ]
    for call, code in calls:
        with pytest.raises(StoreError) as error:
            call()
        assert error.value.code == code


def test_a_restart_counts_an_interrupted_match_and_parks_it_at_the_limit(store: Store) -> None:
    queued_match(store)
    for _ in range(2):
        assert store.claim("w", 60) is not None
        assert store.recover("w", 2) == 1
    (parked,), _ = store.parked_matches(10)
    assert parked.failure_kind == pb.MATCH_FAILURE_KIND_INTERRUPTED and parked.failures == 2


def test_a_rotations_record_rank_and_score_are_withheld_until_its_deal_is_done(
    store: Store,
) -> None:
    ladder_id, _ = queued_match(store, seats=3, duplicate=True)
    claims = [store.claim("w", 60) for _ in range(3)]
    assert all(claims)
    first = claims[0]
    assert first is not None
    store.record_result(finished_record(first.match_id, [1, 2, 3], [9, 5, 1]), "w")
    assert store.rotations_unfinished(first.match_id) == 2
    with pytest.raises(StoreError) as withheld:
        store.match_record(first.match_id)
    assert withheld.value.code == "FAILED_PRECONDITION" and "2 other" in str(withheld.value)
    (summary,) = store.profile(first.seats[0], 10).recent_matches
    assert summary.withheld and (summary.rank, summary.score) == (0, 0)
    # The last rotation fails for good and is voided: the set is done and rated from the rest.
    second, third = claims[1], claims[2]
    assert second is not None and third is not None
    store.record_result(finished_record(second.match_id, [2, 1, 3], [5, 9, 1]), "w")
    parked = store.fail(third.match_id, "w", "play", "boom", 1)
    assert parked is not None and parked.status == "parked"
    with pytest.raises(StoreError, match="1 other"):
        store.match_record(first.match_id)
    store.void_parked(parked.match_id, "")
    assert store.match_record(first.match_id).outcome.scores == [9, 5, 1]
    (summary, *_) = store.profile(first.seats[0], 10).recent_matches
    assert not any(m.withheld for m in store.profile(first.seats[0], 10).recent_matches)
    assert all(s.matches == 2 for s in store.standings(ladder_id)), "rated from two rotations"


def test_validation_matches_are_not_rotations_of_one_deal(store: Store) -> None:
    bot, _ = store.register_bot("v", None, "b", "oh-hell", "127.0.0.1:1", "1")
    store.enqueue(
        None,
        "validation",
        [PlannedMatch(1, (bot.bot_id, HOUSE_RANDOM)), PlannedMatch(2, (HOUSE_RANDOM, bot.bot_id))],
    )
    claim = store.claim("w", 60)
    assert claim is not None
    store.record_result(finished_record(claim.match_id, [1, 2], [3, 1]), "w")
    assert store.match_record(claim.match_id).match_id == claim.match_id, "other seeds: readable"


# -- round trips: what recording a result costs on PostgreSQL -----------------------------------


def round_trips(trace: str) -> int:
    """How many times the client waited for the server in a libpq protocol trace: each Sync,
    Flush or simple Query it sent (a Flush sent right after a Sync is the same wait)."""
    sent = [line.split("\t")[2] for line in trace.splitlines() if line.startswith("F\t")]
    waits = 0
    for index, message in enumerate(sent):
        after_sync = message == "Flush" and index > 0 and sent[index - 1] == "Sync"
        waits += message in ("Sync", "Flush", "Query") and not after_sync
    return waits


def test_a_result_costs_two_round_trips_and_claims_three_on_postgres(tmp_path: Path) -> None:
    """Pinned so that a regression shows (the figures are the protocol's, not timings): a
    result reads the set's rows, its bots' entries, the other rotations' ranks and the
    ladder's config together, then sends its writes (one ``arena_finish``) with the commit (8
    round trips before pipelining, 3 before schema 17), and a batch of results does the same
    for all of them at once; a scheduler's tick of sets is its checks (lease, target, bots)
    in one and its inserts with the commit; claims, one or several together, read the matches
    being played with the first page of waiting ones and their bots' limits, then lock and
    count again, then send the update with the commit (``arena.store.claims``)."""
    if not postgres_available():
        pytest.skip("no PostgreSQL server reachable")
    from psycopg import pq

    from arena.store.db import PostgresDatabase

    trace_path = tmp_path / "libpq.trace"

    def trace(connection: object) -> None:
        pgconn = connection.pgconn  # type: ignore[attr-defined]
        pgconn.trace(trace_file.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    with (
        open(trace_path, "w") as trace_file,
        postgres_url() as url,
        contextlib.closing(PostgresDatabase(url, pool_size=1, configure=trace)) as database,
    ):
        store = Store(database)

        def trips(record: record_pb2.MatchRecord) -> int:
            """Round trips of ``record_result`` (worker 'w')."""
            return traced(lambda: store.record_result(record, "w"))

        def traced(call: Callable[[], object]) -> int:
            trace_file.flush()
            start = trace_path.stat().st_size
            call()
            trace_file.flush()
            with open(trace_path) as written:
                written.seek(start)
                return round_trips(written.read())

        ids, _ = active_bots(store, 3)
        ladder_id = store.create_ladder(ladder_config(seats=3, duplicate=True))
        store.enter_active_bots(ladder_id, "oh-hell")
        store.enqueue(ladder_id, "ladder", [PlannedMatch(1, tuple(ids))])
        claims: list[Claim | None] = []
        assert traced(lambda: claims.append(store.claim("w", 60))) == 3, "a claim"
        (claim,) = claims
        assert claim is not None
        record = finished_record(claim.match_id, [1, 2, 3], [3, 2, 1])
        assert trips(record) == 2, "a rated match"
        assert trips(record) == 2, "delivered twice"
        rotations = [tuple(ids[(i + s) % 3] for i in range(3)) for s in range(2)]
        store.enqueue(ladder_id, "ladder", [PlannedMatch(2, seats) for seats in rotations])
        first, last = store.claim("w", 60), store.claim("w", 60)
        assert first is not None and last is not None
        for claimed in (first, last):
            assert trips(finished_record(claimed.match_id, [1, 2, 3], [3, 2, 1])) == 2
        assert all(s.matches == 3 for s in store.standings(ladder_id)), "the results counted"
        for seed in (3, 4):  # a batch: two round trips whatever its size
            store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, seats) for seats in rotations])
        batch = [store.claim("w", 60) for _ in range(4)]
        records = [finished_record(c.match_id, [1, 2, 3], [3, 2, 1]) for c in batch if c]
        assert traced(lambda: store.record_results(records, "w")) == 2, "a batch of four"
        assert all(s.matches == 7 for s in store.standings(ladder_id)), "each counted"
        epoch = Coordination(database).lead(f"ladder:{ladder_id}", "w", 60)
        assert epoch is not None
        authority = (f"ladder:{ladder_id}", "w", epoch)
        sets = [[PlannedMatch(seed, tuple(ids))] for seed in (5, 6, 7)]
        assert traced(lambda: store.enqueue_sets(ladder_id, "ladder", sets, 8, authority)) == 2
        assert store.waiting(ladder_id) == 3, "a tick's sets: checks and inserts, two trips"
        assert traced(lambda: store.claim_many("w", 60, [True] * 3)) == 3, "claims together"
        assert store.waiting(ladder_id) == 3 and store.claim("w", 60) is None, "all three"


SCANNED = re.compile(
    r"(?:Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)(?: using \S+)? on (bots|entries)\b"
    r".*actual time=\S+ rows=(\d+) loops=(\d+)"
)
"""A scan of ``bots`` or ``entries`` in an ``auto_explain`` plan, with the rows it returned."""


def test_a_claim_and_a_result_read_only_their_bots_rows_on_postgres() -> None:
    """Pinned from the plans the server ran (``auto_explain``), not timings: a claim and a
    result read the rows of the bots they seat, not every bot's or entry's (until schema 20
    the claim's function of then, ``arena_claim``, joined ``bots`` by hash and
    ``arena_finish`` its entries, over all 10,000 of them in the ladder benchmark; the
    entries' read likewise without statistics), on the generic plans they run once prepared
    as on the first ones."""
    if not postgres_available():
        pytest.skip("no PostgreSQL server reachable")
    from arena.store.db import PostgresDatabase

    plans: list[str] = []

    def explain(connection: Any) -> None:
        try:
            connection.execute("LOAD 'auto_explain'")
        except Exception:  # not superuser, or no contrib: nothing to look at
            return
        for setting in ("log_min_duration = 0", "log_analyze = on", "log_nested_statements = on"):
            connection.execute(f"SET auto_explain.{setting}")
        # On tables this small a scan is the cheaper plan; without it, what is left is whether
        # a statement can find its rows by key at all (at 10,000 bots the planner scans only
        # where it cannot).
        connection.execute("SET enable_seqscan = off")
        connection.execute("SET client_min_messages = log")
        # Prepared from their first call: a pipelined transaction's plans are then the generic
        # ones it runs in a long-lived arena (``Database.transaction``).
        connection.prepare_threshold = 0
        connection.add_notice_handler(lambda notice: plans.append(notice.message_primary or ""))

    bots = 120
    with (
        postgres_url() as url,
        contextlib.closing(PostgresDatabase(url, pool_size=1, configure=explain)) as database,
    ):
        store = Store(database)
        ids = [
            store.register_bot(f"o{n}", None, "b", "oh-hell", f"127.0.0.1:{n + 1}", "1")[0].bot_id
            for n in range(bots)
        ]
        for bot_id in ids:
            store.set_state_by_arena(bot_id, "active", "", 0)
        ladder_id = store.create_ladder(ladder_config(seats=3))
        store.enter_active_bots(ladder_id, "oh-hell")
        with database.transaction() as tx:
            tx.execute("ANALYZE")
        if not plans:
            pytest.skip("auto_explain not available")
        for round_index in range(3):  # a few: the session's plans settle (generic ones)
            seats = tuple(ids[3 * round_index : 3 * round_index + 3])
            assert store.enqueue(ladder_id, "ladder", [PlannedMatch(round_index, seats)])
            del plans[:]
            claim = store.claim("w", 60)
            assert claim is not None and claim.seats == seats
            store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]), "w")
            scans = [match.groups() for plan in plans for match in SCANNED.finditer(plan)]
            assert scans, "the plans were seen"
            too_many = [(table, rows) for table, rows, loops in scans if int(rows) > len(seats)]
            assert not too_many, f"rows read of {bots} bots: {too_many}"
        with database.transaction() as tx:  # the one connection: its prepared statements
            generic = tx.one(
                "SELECT SUM(generic_plans) FROM pg_prepared_statements WHERE statement LIKE "
                "'%%= ANY ($1)%%' AND statement NOT LIKE '%%pg_prepared_statements%%'"
            )[0]  # psycopg: %% for %
        assert generic, "the plans seen include the generic ones of statements with keys"


def test_bot_states_are_one_enum_tied_to_the_wire() -> None:
    """Every ``BotState`` has its wire value and every wire value but the zero one its state."""
    from arena.store.repository import BOT_STATES, BotState
    from cardarena.arena.v1 import arena_service_pb2

    wire = {n for n in arena_service_pb2.BotState.values() if n}
    assert set(BOT_STATES.values()) == wire
    assert [BOT_STATES[state.value] for state in BotState] == [
        arena_service_pb2.BotState.Value(f"BOT_STATE_{state.name}") for state in BotState
    ]


Result = tuple[list[int], list[int]]
"""A match's ranks and scores, seat by seat."""


def rate_two_seat_set(
    store: Store, game: str, first: Result, second: Result
) -> tuple[list[str], str, dict[str, Rating] | None]:
    """Two bots, a two-seat duplicate ladder of ``game`` and one set of it (deal 9, both
    rotations) finished with these results: the bots, the ladder and the set's ratings."""
    ids, _ = active_bots(store, 2, game)
    ladder_id = store.create_ladder(ladder_config(seats=2, duplicate=True, game=game))
    store.enter_active_bots(ladder_id, game)
    store.enqueue(
        ladder_id, "ladder", [PlannedMatch(9, (ids[0], ids[1])), PlannedMatch(9, (ids[1], ids[0]))]
    )
    claims = store.claim("w", 60), store.claim("w", 60)
    assert claims[0] and claims[1]
    store.record_result(finished_record(claims[0].match_id, *first))
    return ids, ladder_id, store.record_result(finished_record(claims[1].match_id, *second))


def test_a_duplicate_set_is_rated_from_its_seat_comparisons_and_counts_first_places(
    store: Store,
) -> None:
    """Seat 0 wins the deal whoever holds it, but ids[0] wins it by more, and also loses the
    other seat by less: the seat comparisons credit ids[0] twice; first places count the two
    matches won (one each), not the set."""
    ids, ladder_id, ratings = rate_two_seat_set(
        store, "oh-hell", ([1, 2], [50, 10]), ([1, 2], [30, 20])
    )
    rotations = [
        Rotation((ids[0], ids[1]), (1, 2), (50.0, 10.0)),
        Rotation((ids[1], ids[0]), (1, 2), (30.0, 20.0)),
    ]
    expected = rate_duplicate(dict.fromkeys(ids, Rating()), rotations)
    assert ratings == expected
    standings = {s.bot.bot_id: s for s in store.standings(ladder_id)}
    assert standings[ids[0]].mu > standings[ids[1]].mu
    assert [standings[bot].first_places for bot in ids] == [1, 1], "a match each, not the set"
    assert [standings[bot].matches for bot in ids] == [2, 2]


def test_a_duplicate_set_where_a_lower_score_wins_compares_margins_that_way(
    store: Store,
) -> None:
    """Mau-Mau's tallies count against a seat: ids[0] finishes each seat as ids[1] did there
    but with a lower tally (seat 0) and further below its opponent (seat 1), so it wins both
    seat comparisons; read as points, the margins would have credited ids[1]."""
    ids, _, ratings = rate_two_seat_set(
        store, "mau-mau", ([2, 1], [300, 100]), ([2, 1], [500, 100])
    )
    rotations = [
        Rotation((ids[0], ids[1]), (2, 1), (300.0, 100.0), lower_score_wins=True),
        Rotation((ids[1], ids[0]), (2, 1), (500.0, 100.0), lower_score_wins=True),
    ]
    assert ratings == rate_duplicate(dict.fromkeys(ids, Rating()), rotations)
    assert ratings is not None and ratings[ids[0]].mu > ratings[ids[1]].mu


def test_a_ladder_keeps_sigma_above_its_floor_and_idle_bots_regain_sigma(store: Store) -> None:
    ids, _ = active_bots(store, 3)

    def ladder(name: str, min_sigma: float, growth: float) -> Callable[[int], dict[str, Rating]]:
        config = ladder_config(name)
        config.min_sigma, config.sigma_growth_per_day = min_sigma, growth
        ladder_id = store.create_ladder(config)
        store.enter_active_bots(ladder_id, "oh-hell")

        def play(seed: int) -> dict[str, Rating]:
            store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, tuple(ids))])
            claim = store.claim("w", 60)
            assert claim is not None
            ratings = store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]))
            assert ratings is not None
            return ratings

        return play

    floored = ladder("floored", 7.6, 0.0)  # six matches unfloored: 7.51, 6.99, 7.15
    for seed in range(6):
        ratings = floored(seed)
    assert all(rating.sigma == 7.6 for rating in ratings.values()), "held at the floor"

    growing = ladder("growing", 0.0, 1.0)
    with store.db.transaction() as tx:  # settled: σ 2; ids[2] last rated 30 days ago
        tx.execute("UPDATE entries SET sigma = 2.0, rated_us = ?", (now_us(),))
        tx.execute(
            "UPDATE entries SET rated_us = ? WHERE bot_id = ?", (now_us() - 30 * DAY_US, ids[2])
        )
    ratings = growing(99)
    assert ratings[ids[0]].sigma < 2.0, "a bot that just played: no growth"
    grown = after_idle(Rating(0.0, 2.0), 30 * DAY_US, 1.0).sigma
    assert grown == pytest.approx((4 + 30) ** 0.5, rel=1e-3)
    assert 2.0 < ratings[ids[2]].sigma < grown, "grew with 30 idle days, then the match"


def test_a_new_version_is_a_new_entry_fresh_or_inheriting_and_the_profile_shows_each(
    store: Store,
) -> None:
    ids, token = active_bots(store, 3)
    fresh_config, inherit_config = ladder_config("fresh"), ladder_config("inherit")
    inherit_config.new_version_rating = pb.NEW_VERSION_RATING_INHERIT
    ladders = [store.create_ladder(fresh_config), store.create_ladder(inherit_config)]
    for seed, ladder_id in enumerate(ladders):
        store.enter_active_bots(ladder_id, "oh-hell")
        for round_ in range(3):
            store.enqueue(ladder_id, "ladder", [PlannedMatch(seed * 10 + round_, tuple(ids))])
            claim = store.claim("w", 60)
            assert claim is not None
            store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]))
    before = {ladder: {s.bot.bot_id: s for s in store.standings(ladder)} for ladder in ladders}
    assert before[ladders[0]][ids[0]].mu > INITIAL_MU

    store.update_bot(ids[0], token, "", "2")
    store.set_state_by_arena(ids[0], "active", "passed validation", 0)
    after = {ladder: {s.bot.bot_id: s for s in store.standings(ladder)} for ladder in ladders}
    fresh, inherited = after[ladders[0]][ids[0]], after[ladders[1]][ids[0]]
    assert (fresh.mu, fresh.sigma, fresh.matches, fresh.first_places) == (
        INITIAL_MU,
        INITIAL_SIGMA,
        0,
        0,
    )
    assert inherited.mu == before[ladders[1]][ids[0]].mu and inherited.sigma == INITIAL_SIGMA
    assert inherited.matches == 0
    other, was = after[ladders[0]][ids[1]], before[ladders[0]][ids[1]]
    assert (other.mu, other.sigma, other.matches) == (was.mu, was.sigma, was.matches)
    entrant = next(e for e in store.entrants(ladders[1]) if e.bot_id == ids[0])
    assert owed(entrant) < owed(next(e for e in store.entrants(ladders[1]) if e.bot_id == ids[1]))

    store.enqueue(ladders[1], "ladder", [PlannedMatch(99, tuple(ids))])
    claim = store.claim("w", 60)
    assert claim is not None
    store.record_result(finished_record(claim.match_id, [1, 2, 3], [3, 2, 1]))
    profile = store.profile(ids[0], 10)
    figures = [
        (v.version, v.ladder_id, v.current, v.matches, v.first_places) for v in profile.versions
    ]
    assert figures == sorted([("2", ladders[0], True, 0, 0), ("2", ladders[1], True, 1, 1)]) + [
        ("1", ladder, False, 3, 3) for ladder in sorted(ladders)
    ]
    old = next(v for v in profile.versions if not v.current and v.ladder_id == ladders[1])
    assert old.mu == pytest.approx(before[ladders[1]][ids[0]].mu)
    assert [p.version for p in profile.rating_history] == ["1"] * 6 + ["2"]
