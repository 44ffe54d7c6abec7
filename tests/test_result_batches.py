"""Several finished matches recorded in one transaction (``Store.record_results``): each gets
the outcome it would get alone, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import pytest
import trio
from openskill.models import PlackettLuce
from prometheus_client import CollectorRegistry

from arena.ladder import Arena, ArenaConfig, PendingResult
from arena.matchmaking import PlannedMatch
from arena.metrics import Metrics
from arena.store.repository import ClaimLost, Store
from referee.bot_client import BotPool
from tests.stores import rows_without_their_match
from tests.test_store import active_bots, finished_record, ladder_config


def claimed_duplicate_set(store: Store, bots: list[str], seed: int) -> tuple[str, str]:
    """A two-seat duplicate ladder of ``bots`` with one set queued and both rotations claimed
    by worker 'w'; the rotations' match ids."""
    ladder_id = store.create_ladder(ladder_config(f"dup-{bots[0]}", seats=2, duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    a, b = bots
    store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, (a, b)), PlannedMatch(seed, (b, a))])
    first, second = store.claim("w", 60), store.claim("w", 60)
    assert first and second and first.seed == second.seed == seed
    return first.match_id, second.match_id


def queued_three_seat_matches(store: Store, matches: int) -> tuple[list[str], str]:
    """``3 * matches`` active bots in an Oh Hell ladder, each three of them (in order) seated in
    one match queued alone: the bots and the ladder."""
    ids, _ = active_bots(store, 3 * matches)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    for index in range(matches):
        store.enqueue(
            ladder_id, "ladder", [PlannedMatch(index, tuple(ids[3 * index : 3 * index + 3]))]
        )
    return ids, ladder_id


def test_one_batch_gives_each_match_its_own_outcome_and_rates_a_set_once(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    ids, _ = active_bots(store, 13)
    ordinary = store.create_ladder(ladder_config("ordinary"))
    store.enter_active_bots(ordinary, "oh-hell")
    for index in range(3):
        store.enqueue(
            ordinary, "ladder", [PlannedMatch(index, tuple(ids[3 * index : 3 * index + 3]))]
        )
    played, already, lost = (store.claim("w", 60) for _ in range(3))
    assert played and already and lost
    assert store.record_result(finished_record(already.match_id, [1, 2, 3], [3, 2, 1]), "w")
    first, second = claimed_duplicate_set(store, ids[9:11], 7)
    alone_first, alone_second = claimed_duplicate_set(store, ids[11:13], 7)
    requeued = store.release(lost.match_id, "w")
    assert requeued is not None

    outcomes = store.record_results(
        [
            finished_record(second, [1, 2], [9, 1]),
            finished_record(lost.match_id, [1, 2, 3], [3, 2, 1]),
            finished_record(played.match_id, [2, 1, 3], [10, 20, 5]),
            finished_record(already.match_id, [1, 2, 3], [3, 2, 1]),
            finished_record(first, [1, 2], [5, 1]),
            finished_record(played.match_id, [2, 1, 3], [10, 20, 5]),
        ],
        "w",
    )

    assert "recording each alone" not in caplog.text, "one transaction, not one per match"
    set_rated, lost_claim, rated, recorded_before, set_done, delivered_twice = outcomes
    assert set_rated == {}, "the set's first rotation to arrive rates nothing"
    assert isinstance(lost_claim, ClaimLost)
    assert isinstance(rated, dict) and set(rated) == set(ids[:3])
    assert recorded_before is None and delivered_twice is None
    assert isinstance(set_done, dict) and set(set_done) == set(ids[9:11])
    # The same set recorded one transaction at a time rates the same.
    assert store.record_result(finished_record(alone_second, [1, 2], [9, 1]), "w") == {}
    alone = store.record_result(finished_record(alone_first, [1, 2], [5, 1]), "w")
    assert alone is not None
    assert alone[ids[12]].mu > alone[ids[11]].mu, "the wider margin won the set"
    in_batch = [set_done[bot] for bot in ids[9:11]]
    assert [x for r in in_batch for x in (r.mu, r.sigma)] == pytest.approx(
        [x for bot in ids[11:13] for x in (alone[bot].mu, alone[bot].sigma)]
    )

    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in range(3)], ranks=[2, 1, 3])
    standings = {s.bot.bot_id: s for s in store.standings(ordinary)}
    for bot_id, team in zip(ids[:3], expected, strict=True):
        assert standings[bot_id].mu == pytest.approx(team[0].mu), "from its own record"
        assert standings[bot_id].matches == 1, "rated once"
    assert all(standings[bot].matches == 1 for bot in ids[3:6]), "recorded before: not again"
    assert all(standings[bot].matches == 0 for bot in ids[6:9]), "the lost claim: not rated"
    for ladder in store.ladders():
        if ladder.config.name.startswith("dup"):
            played_in = {s.bot.bot_id: s.matches for s in store.standings(ladder.ladder_id)}
            assert sorted(played_in.values())[-2:] == [2, 2], "the set rated once"
            assert sum(played_in.values()) == 4
    for match_id in (played.match_id, first, second):
        assert store.match_record(match_id).match_id == match_id
    assert rows_without_their_match(store) == (0, 0), "nothing of the lost claim is written"
    claim = store.claim("w", 60)
    assert claim is not None and claim.match_id == requeued, "the lost match waits, replayable"


def test_a_batch_that_fails_records_each_match_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ids, ladder_id = queued_three_seat_matches(store, 2)
    bad, good = store.claim("w", 60), store.claim("w", 60)
    assert bad and good
    finish = store._finish

    def failing(tx: Any, writes: Any, record: Any, *args: Any, **kwargs: Any) -> Any:
        if record.match_id == bad.match_id:
            raise RuntimeError("a write the database refused")
        return finish(tx, writes, record, *args, **kwargs)

    monkeypatch.setattr(store, "_finish", failing)
    outcomes = store.record_results(
        [
            finished_record(bad.match_id, [1, 2, 3], [3, 2, 1]),
            finished_record(good.match_id, [1, 2, 3], [3, 2, 1]),
        ],
        "w",
    )
    assert "recording each alone" in caplog.text
    assert isinstance(outcomes[0], RuntimeError)
    assert isinstance(outcomes[1], dict) and set(outcomes[1]) == set(ids[3:])
    matches = {s.bot.bot_id: s.matches for s in store.standings(ladder_id)}
    assert [matches[bot] for bot in ids] == [0, 0, 0, 1, 1, 1]


def test_matches_sharing_bots_in_one_batch_rate_one_after_the_other(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    ids, _ = active_bots(store, 3)
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    for seed in range(2):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, tuple(ids))])
    first, second = store.claim("w", 60), store.claim("w", 60)
    assert first and second
    outcomes = store.record_results(
        [
            finished_record(first.match_id, [2, 1, 3], [10, 20, 5]),
            finished_record(second.match_id, [3, 1, 2], [1, 20, 5]),
        ],
        "w",
    )
    assert "recording each alone" not in caplog.text
    model = PlackettLuce()
    once = model.rate([[model.rating()] for _ in ids], ranks=[2, 1, 3])
    twice = model.rate(once, ranks=[3, 1, 2])
    final = outcomes[1]
    assert isinstance(final, dict)
    assert [final[bot].mu for bot in ids] == pytest.approx([team[0].mu for team in twice])
    standings = {s.bot.bot_id: s for s in store.standings(ladder_id)}
    assert [standings[bot].mu for bot in ids] == pytest.approx([team[0].mu for team in twice])
    assert all(standings[bot].matches == 2 for bot in ids)


def test_the_result_writer_records_what_is_waiting_together_and_answers_each(
    store: Store,
) -> None:
    queued_three_seat_matches(store, 5)
    claims = [store.claim("w", 60) for _ in range(5)]
    assert all(claims)
    registry = CollectorRegistry()
    arena = Arena(
        store,
        BotPool(),
        Metrics(["oh-hell"], registry),
        "h:1",
        ArenaConfig(worker_id="w", result_batch_max=3),
    )
    batches: list[int] = []

    async def db(fn: Callable[..., Any], *args: Any) -> Any:
        batches.append(len(args[0]))
        await trio.lowlevel.checkpoint()  # others finish meanwhile
        return fn(*args)

    arena.db = db  # type: ignore[method-assign]
    records = [finished_record(c.match_id, [1, 2, 3], [3, 2, 1]) for c in claims if c]
    records[2].match_id = "gone"  # a match this worker no longer holds
    pending = [PendingResult(record) for record in records]

    async def finish() -> None:
        results, to_record = trio.open_memory_channel[PendingResult](math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(arena._write_results_forever, to_record)
            results.send_nowait(pending[0])  # alone: written at once
            await pending[0].done.wait()
            for waiting in pending[1:]:  # four finish while nothing is being written
                results.send_nowait(waiting)
            for waiting in pending[1:]:
                await waiting.done.wait()
            nursery.cancel_scope.cancel()

    trio.run(finish)
    assert batches == [1, 3, 1], "what waits goes together, at most result_batch_max"
    outcomes = [waiting.outcome for waiting in pending]
    assert isinstance(outcomes[2], ClaimLost)
    assert all(isinstance(o, dict) and len(o) == 3 for i, o in enumerate(outcomes) if i != 2)
    assert registry.get_sample_value("cardarena_result_batch_matches_count") == 3
    assert registry.get_sample_value("cardarena_result_batch_matches_sum") == 5


def test_batches_racing_over_the_same_sets_rate_each_set_once(store: Store) -> None:
    """Two processes' writers with batches holding the two rotations of the same sets, in
    opposite orders: locks taken in one global order (no deadlock left to chance) and each
    set rated exactly once."""
    ids, _ = active_bots(store, 4)
    ladder_id = store.create_ladder(ladder_config(seats=2, duplicate=True))
    store.enter_active_bots(ladder_id, "oh-hell")
    sets = 4  # each bot in two sets: four matches at once, its limit
    for seed in range(sets):
        a, b = ids[2 * (seed % 2) : 2 * (seed % 2) + 2]
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, (a, b)), PlannedMatch(seed, (b, a))])
    claims = [store.claim("w", 60) for _ in range(2 * sets)]
    assert all(claims)
    firsts = [finished_record(c.match_id, [1, 2], [5, 1]) for c in claims[0::2] if c]
    seconds = [finished_record(c.match_id, [1, 2], [5, 1]) for c in claims[1::2] if c]
    barrier = threading.Barrier(2)
    outcomes: list[list[Any]] = []

    def write(batch: list[Any]) -> None:
        barrier.wait()
        outcomes.append(store.record_results(batch, "w"))

    threads = [
        threading.Thread(target=write, args=(firsts,)),
        threading.Thread(target=write, args=(list(reversed(seconds)),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [outcome for batch in outcomes for outcome in batch]
    assert not any(isinstance(outcome, Exception) for outcome in everything)
    assert sum(bool(outcome) for outcome in everything) == sets, "one rating per set"
    assert [s.matches for s in store.standings(ladder_id)] == [4] * 4
