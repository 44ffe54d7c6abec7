"""Several claims in one transaction (``Store.claim_many``), for workers freed together."""

from __future__ import annotations

from arena.matchmaking import PlannedMatch
from arena.store.repository import HOUSE_RANDOM, Store
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
