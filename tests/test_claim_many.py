"""Several claims in one transaction (``Store.claim_many``), for workers freed together."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import trio
from prometheus_client import CollectorRegistry

from arena.ladder import Arena, ArenaConfig, PendingClaim
from arena.matchmaking import PlannedMatch
from arena.metrics import Metrics
from arena.store.claims import HOUSE_RANDOM
from arena.store.repository import Store
from referee.bot_client import BotPool
from tests.test_store import active_bots, ladder_config


def test_claims_in_one_call_take_distinct_matches_in_queue_order_within_the_limits(
    store: Store,
) -> None:
    ids, _ = active_bots(store, 9)
    validating, _ = store.register_bot("bob", None, "new", "oh-hell", "127.0.0.1:2", "1")
    store.enqueue_validation(
        validating.bot_id, [PlannedMatch(0, (validating.bot_id, HOUSE_RANDOM, HOUSE_RANDOM))]
    )
    ladder_id = store.create_ladder(ladder_config())
    for seed in range(3):
        store.enqueue(
            ladder_id, "ladder", [PlannedMatch(seed, tuple(ids[3 * seed : 3 * seed + 3]))]
        )
    claims = store.claim_many("w", 60, [True, False, True, True, False])
    kinds = [claim.kind if claim else None for claim in claims]
    assert kinds == ["ladder", "validation", "ladder", "ladder", None]
    assert [claim.seed for claim in claims if claim and claim.kind == "ladder"] == [0, 1, 2]
    assert len({claim.match_id for claim in claims if claim}) == 4, "each match once"
    assert store.claim("w", 60) is None, "every match claimed"
    assert claims[0] is not None and claims[0].endpoints == ("127.0.0.1:1",) * 3


def test_the_claimer_claims_for_the_workers_waiting_together(store: Store) -> None:
    ids, _ = active_bots(store, 9)
    ladder_id = store.create_ladder(ladder_config())
    for seed in range(3):
        store.enqueue(
            ladder_id, "ladder", [PlannedMatch(seed, tuple(ids[3 * seed : 3 * seed + 3]))]
        )
    arena = Arena(
        store,
        BotPool(),
        Metrics(["oh-hell"], CollectorRegistry()),
        "h:1",
        ArenaConfig(worker_id="w", result_batch_max=3),
    )
    calls: list[list[bool]] = []

    async def db(fn: Callable[..., Any], *args: Any) -> Any:
        calls.append(list(args[2]))
        await trio.lowlevel.checkpoint()
        return fn(*args)

    arena.db = db  # type: ignore[method-assign]
    pending = [PendingClaim(only) for only in (True, True, False, True, True)]

    async def free_workers() -> None:
        requests, to_claim = trio.open_memory_channel[PendingClaim](math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(arena._claim_forever, to_claim)
            for waiting in pending:  # five workers free at once
                requests.send_nowait(waiting)
            for waiting in pending:
                await waiting.done.wait()
            nursery.cancel_scope.cancel()

    trio.run(free_workers)
    assert calls == [[True, True, False], [True, True]], "together, at most result_batch_max"
    got = [waiting.claim.seed if waiting.claim else None for waiting in pending]
    assert got == [0, 1, 2, None, None]
