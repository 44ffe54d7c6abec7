"""Validation can't starve ladders (issue 18): at most ``validation_share`` validation matches
play at once per process, and the other workers go on with ladder matches however many
validation matches wait ahead of them. A real store, the real workers, fake play and time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import trio
from prometheus_client import CollectorRegistry

from arena.ladder import Arena, ArenaConfig, default_validation_workers
from arena.matchmaking import PlannedMatch
from arena.metrics import Metrics
from arena.store.claims import HOUSE_RANDOM, Claim
from arena.store.repository import Store
from referee.bot_client import BotPool
from tests.stores import open_store
from tests.test_match_lifecycle import ladder_config

T = TypeVar("T")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store("sqlite", tmp_path) as opened:
        yield opened


class FakePlayArena(Arena):
    """The real claiming workers; each match "plays" for a fixed (trio) time."""

    def __init__(self, store: Store, config: ArenaConfig) -> None:
        metrics = Metrics(["oh-hell"], CollectorRegistry())
        super().__init__(store, BotPool(), metrics, "h:1", config)
        self.playing: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.played: list[tuple[float, str]] = []

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)  # no asyncio host in this test: the store, synchronously

    async def play_claim(self, claim: Claim) -> None:
        self.playing[claim.kind] += 1
        self.peak[claim.kind] = max(self.peak[claim.kind], self.playing[claim.kind])
        try:
            await trio.sleep(30 if claim.kind == "validation" else 1)  # a silent bot is slow
            self.played.append((trio.current_time(), claim.kind))
        finally:
            self.playing[claim.kind] -= 1
            with self.store.db.transaction() as tx:  # no longer counts as playing
                tx.execute("UPDATE matches SET status = 'finished' WHERE match_id = ?",
                           (claim.match_id,))  # fmt: skip


def flood(store: Store, validations: int, ladder_sets: int) -> None:
    """``validations`` validation matches queued first (the oldest), then ladder matches."""
    bots = []
    for index in range(3):
        row, _ = store.register_bot(f"o{index}", None, "b", "oh-hell", f"h{index}:1", "1")
        store.set_state_by_arena(row.bot_id, "active", "", 0)
        bots.append(row.bot_id)
    store.set_announced_limits(dict.fromkeys(bots, 0))  # no preference: the ladder's cap
    ladder_id = store.create_ladder(ladder_config())
    for index in range(validations):
        seats = (f"v{index}", HOUSE_RANDOM, HOUSE_RANDOM)
        store.enqueue(None, "validation", [PlannedMatch(index, seats)])
    for index in range(ladder_sets):
        assert store.enqueue(ladder_id, "ladder", [PlannedMatch(1000 + index, tuple(bots))])


async def work_for(arena: Arena, seconds: float) -> None:
    async with trio.open_nursery() as nursery:
        for _ in range(arena.config.workers):
            nursery.start_soon(arena._work_forever)
        await trio.sleep(seconds)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(("workers", "share"), [(4, None), (8, None), (4, 3), (16, None)])
async def test_validation_matches_take_at_most_their_share_and_ladders_go_on(
    store: Store, autojump_clock: trio.testing.MockClock, workers: int, share: int | None
) -> None:
    flood(store, validations=30, ladder_sets=20)
    arena = FakePlayArena(store, ArenaConfig(workers=workers, validation_workers=share))
    expected = default_validation_workers(workers) if share is None else share
    assert arena.validation_share == expected
    await work_for(arena, 25)  # one ladder worker plays the 20 in 20 s
    assert arena.peak["validation"] == expected, arena.peak
    ladder_done = [at for at, kind in arena.played if kind == "ladder"]
    assert len(ladder_done) == 20, "every ladder match played while validation waited"
    assert arena.validating == arena.playing["validation"] == 0  # cancelled: slots given back


async def test_without_a_share_a_flood_holds_every_worker(
    store: Store, autojump_clock: trio.testing.MockClock
) -> None:
    """What the share prevents (and that the test above can fail): with every worker allowed
    to validate, 30 slow validation matches ahead in the queue stop the ladder."""
    flood(store, validations=30, ladder_sets=20)
    arena = FakePlayArena(store, ArenaConfig(workers=4, validation_workers=4))
    await work_for(arena, 20)
    assert arena.peak["validation"] == 4
    assert not [kind for _, kind in arena.played if kind == "ladder"]


async def test_validation_still_runs_when_there_is_no_ladder(
    store: Store, autojump_clock: trio.testing.MockClock
) -> None:
    flood(store, validations=3, ladder_sets=0)
    arena = FakePlayArena(store, ArenaConfig(workers=4))
    await work_for(arena, 100)
    assert [kind for _, kind in arena.played] == ["validation"] * 3
    assert arena.peak["validation"] == 1
