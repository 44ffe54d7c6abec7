"""A scheduler's tick of sets queued in one transaction (``Store.enqueue_sets``): the lease and
the queue's target checked once for them all, each set's bots on its own."""

from __future__ import annotations

from arena.matchmaking import PlannedMatch
from arena.store.coordination import Coordination
from arena.store.repository import Store
from tests.test_store import active_bots, ladder_config


def test_a_ticks_sets_are_queued_together_unless_their_bot_left_or_the_target_is_passed(
    store: Store,
) -> None:
    ids, _ = active_bots(store, 9)
    ladder_id = store.create_ladder(ladder_config())
    lease = Coordination(store.db)
    epoch = lease.lead(f"ladder:{ladder_id}", "w", 60)
    assert epoch is not None
    authority = (f"ladder:{ladder_id}", "w", epoch)
    sets = [[PlannedMatch(seed, tuple(ids[3 * seed : 3 * seed + 3]))] for seed in range(3)]
    store.set_state_by_arena(ids[4], "paused", "", 0)
    assert store.enqueue_sets(ladder_id, "ladder", sets, 3, authority) == [True, False, True]
    assert store.waiting(ladder_id) == 2, "the set of the paused bot alone is refused"
    store.set_state_by_arena(ids[4], "active", "", 0)
    assert store.enqueue_sets(ladder_id, "ladder", sets[:2], 3, authority) == [False, False]
    assert store.waiting(ladder_id) == 2, "together past the target: none"
    assert store.enqueue_sets(ladder_id, "ladder", sets[1:2], 3, authority) == [True]
    assert store.waiting(ladder_id) == 3
    deposed = (f"ladder:{ladder_id}", "w", epoch + 1)
    assert store.enqueue_sets(ladder_id, "ladder", sets, None, deposed) == [False] * 3
    assert store.waiting(ladder_id) == 3, "a lease not held: none"
    assert store.enqueue_sets(ladder_id, "ladder", sets, None, authority) == [True] * 3
    assert store.waiting(ladder_id) == 6
    seats = sorted(claim.seats for claim in iter(lambda: store.claim("w", 60), None))
    assert seats == sorted(tuple(ids[3 * s : 3 * s + 3]) for s in (0, 0, 1, 1, 2, 2))
