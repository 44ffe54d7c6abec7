"""Many processes, one arena (the store's side): worker registrations and their leases,
leadership leases with epochs, and the caps that must hold whoever enqueues or claims."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from arena.matchmaking import PlannedMatch
from arena.store.claims import HOUSE_RANDOM
from arena.store.coordination import Coordination, WorkerIdInUse, default_worker_id
from arena.store.repository import Store
from tests.test_store import active_bots, ladder_config


def coordination(store: Store) -> Coordination:
    return Coordination(store.db)


def registered_as(store: Store, worker_id: str, pid: int, host: str | None = None) -> None:
    """Make ``worker_id``'s registration look like another process's (``pid``, ``host``)."""
    with store.db.transaction() as tx:
        tx.execute(
            "UPDATE workers SET pid = ?, host = COALESCE(?, host) WHERE worker_id = ?",
            (pid, host, worker_id),
        )


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_live_worker_id_cannot_be_taken_and_an_expired_one_can(store: Store) -> None:
    workers = coordination(store)
    first = workers.register("w1", ("referee",), "127.0.0.1:1", 30)
    registered_as(store, "w1", os.getppid())  # a live process on this host
    with pytest.raises(WorkerIdInUse, match=r"w1.*in use by a live arena process"):
        workers.register("w1", ("referee",), "127.0.0.1:2", 30)
    assert workers.heartbeat("w1", first, 30)
    assert [w.worker_id for w in workers.workers() if w.alive] == ["w1"]
    short = workers.register("w2", ("api",), "127.0.0.1:3", 0.05)
    time.sleep(0.1)
    assert not workers.heartbeat("w2", short, 30), "a lease that ran out is never renewed"
    again = workers.register("w2", ("api",), "127.0.0.1:3", 30)
    assert again != short and workers.heartbeat("w2", again, 30)
    workers.retire("w2", again)
    assert [w.worker_id for w in workers.workers()] == ["w1"]
    registered_as(store, "w1", os.getppid(), "another-host")
    with pytest.raises(WorkerIdInUse):
        workers.register("w1", ("referee",), "127.0.0.1:2", 30)


def test_a_restart_under_a_fixed_id_takes_over_its_dead_predecessor_at_once(
    store: Store,
) -> None:
    workers = coordination(store)
    before = workers.register("pod-0", ("referee",), "", 30)
    registered_as(store, "pod-0", dead_pid())  # this host, its process gone: a restart
    after = workers.register("pod-0", ("referee",), "", 30)
    assert after != before and not workers.heartbeat("pod-0", before, 30)
    again = workers.register("pod-0", ("referee",), "", 30)  # this very process (pid 1 again)
    assert not workers.heartbeat("pod-0", after, 30) and workers.heartbeat("pod-0", again, 30)


def test_default_worker_ids_differ_unless_the_environment_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CARDARENA_WORKER_ID", raising=False)
    assert default_worker_id() != default_worker_id()
    monkeypatch.setenv("CARDARENA_WORKER_ID", "cardarena-arena-7c9f-x2")
    assert default_worker_id() == "cardarena-arena-7c9f-x2"


def test_one_leader_at_a_time_and_the_epoch_moves_with_the_holder(store: Store) -> None:
    leases = coordination(store)
    assert leases.lead("ladder:x", "w1", 0.2) == 1
    assert leases.lead("ladder:x", "w2", 0.2) is None, "held by a live holder"
    assert leases.lead("ladder:x", "w1", 0.2) == 1, "renewing keeps the epoch"
    time.sleep(0.3)
    assert leases.lead("ladder:x", "w2", 5) == 2, "an expired lease is taken, epoch + 1"
    assert leases.lead("ladder:x", "w1", 5) is None
    leases.resign("ladder:x", "w2")
    assert leases.lead("ladder:x", "w1", 5) == 1, "a resigned lease is free at once"


def test_racing_for_a_lease_elects_exactly_one(store: Store) -> None:
    leases = coordination(store)
    won: list[str] = []

    def race(name: str) -> None:
        if leases.lead("validation", name, 30) is not None:
            won.append(name)

    threads = [threading.Thread(target=race, args=(f"w{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1


def test_a_deposed_scheduler_enqueues_nothing(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    leases = coordination(store)
    epoch = leases.lead(f"ladder:{ladder_id}", "w1", 0.1)
    assert epoch is not None
    planned = [PlannedMatch(1, tuple(ids))]
    authority = (f"ladder:{ladder_id}", "w1", epoch)
    assert store.enqueue(ladder_id, "ladder", planned, authority=authority)
    time.sleep(0.2)
    assert leases.lead(f"ladder:{ladder_id}", "w2", 5) == epoch + 1
    assert not store.enqueue(ladder_id, "ladder", planned, authority=authority)
    assert store.waiting(ladder_id) == 1


def test_enqueues_from_many_threads_hold_the_queue_target_exactly(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    outcomes: list[bool] = []

    def enqueue(seed: int) -> None:
        planned = [PlannedMatch(seed, tuple(ids)), PlannedMatch(seed, tuple(reversed(ids)))]
        outcomes.append(store.enqueue(ladder_id, "ladder", planned, target=7))

    threads = [threading.Thread(target=enqueue, args=(seed,)) for seed in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(True) == 3 and store.waiting(ladder_id) == 6, "sets of 2 within 7"


def test_claims_hold_the_ladder_concurrency(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    config = ladder_config(concurrency=2)
    config.max_matches_per_bot = 40
    ladder_id = store.create_ladder(config)
    for seed in range(6):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, tuple(ids))])
    claims = []

    def claim(name: str) -> None:
        claims.append(store.claim(name, 60))

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = [c for c in claims if c is not None]
    assert len(taken) == 2, "two matches of a ladder of concurrency 2 at once"
    store.release(taken[0].match_id, "w-none")  # not its worker: nothing happens
    assert store.claim("w9", 60) is None


def test_racing_validation_enqueues_queue_one_set(store: Store) -> None:
    bot, _ = store.register_bot("carol", None, "v", "oh-hell", "127.0.0.1:1", "1")
    seats = (bot.bot_id, HOUSE_RANDOM, HOUSE_RANDOM)
    outcomes: list[bool] = []

    def enqueue(seed: int) -> None:
        planned = [PlannedMatch(seed, seats), PlannedMatch(seed + 1, seats)]
        outcomes.append(store.enqueue_validation(bot.bot_id, planned))

    threads = [threading.Thread(target=enqueue, args=(10 * i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(True) == 1 and store.waiting() == 2


def test_takeover_requeues_only_the_matches_of_workers_that_are_gone(store: Store) -> None:
    ids, _ = active_bots(store, 3)
    config = ladder_config()
    config.max_matches_per_bot = 40
    ladder_id = store.create_ladder(config)
    for seed in range(3):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, tuple(ids))])
    workers = coordination(store)
    workers.register("alive", ("referee",), "", 30)
    workers.register("dying", ("referee",), "", 0.05)
    alive = store.claim("alive", -1)  # its match's own lease is past: the worker's counts
    dying = store.claim("dying", -1)
    unregistered = store.claim("old-version", 60)  # no registration: its match lease counts
    assert alive and dying and unregistered
    time.sleep(0.1)
    assert store.recover(None) == 1, "only the match of the worker whose lease ran out"
    assert store.release(alive.match_id, "alive") is not None, "still the live worker's"
    assert store.release(dying.match_id, "dying") is None, "requeued under a new id"
    assert store.release(unregistered.match_id, "old-version") is not None
