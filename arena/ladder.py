"""The ladder engine: matchmaking, validation, health sweeps and workers that play matches.

Runs under trio (on the asyncio host of ``referee.aio_bridge``). All state that another worker
process would need lives in the store; what is in memory here is only this process's view of
the matches it is playing right now (for live watching).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import trio

from arena.bot_transport import OUTBOUND, STREAM, address_part
from arena.endpoint_guard import EndpointRefused
from arena.endpoint_resolver import EndpointGuard
from arena.leadership import Leadership
from arena.matchmaking import MatchmakingPool, PlannedMatch, plan_set
from arena.metrics import LEASE_KINDS, Metrics
from arena.store.calls import call_store
from arena.store.claims import HOUSE_RANDOM, Claim
from arena.store.coordination import Coordination, WorkerIdInUse, default_worker_id
from arena.store.repository import (
    CHANGE_GRACE_US,
    FAILURE_KINDS,
    MAX_FAILURES,
    BotRow,
    BotState,
    ClaimLost,
    RecordOutcome,
    Store,
    now_us,
)
from cardarena.arena.v1 import arena_service_pb2
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import record_pb2
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool, CallResult, Refused
from referee.codec.watch import public_move_event
from referee.games.registry import STATE_CLASSES, game_from_settings, make_game
from referee.match import FaultPolicy, Match, MoveLog, TimeControl
from referee.runner import MatchSpec, PlayedMatch, announce_end, play_unannounced

log = logging.getLogger("arena.ladder")
T = TypeVar("T")

REFUSED_DETAIL = "the arena does not call this endpoint"
"""What a match record says of a seat whose endpoint the guard refused at connection time
(public: it says nothing about the address)."""


@dataclass(frozen=True)
class ArenaConfig:
    """How this arena process plays."""

    worker_id: str = field(default_factory=default_worker_id)
    """Unique among the live processes on one database (a duplicate refuses to start)."""
    roles: tuple[str, ...] = ("scheduler", "referee")
    """What this process runs besides the API: ``scheduler`` (matchmaking for the ladders whose
    lease it holds, validation scheduling, health sweeps), ``referee`` (plays matches); none:
    the API only. Every role but the API-only one takes over dead workers' matches."""
    advertise_address: str = ""
    """Where other arena processes reach this one's API (watching a match played here)."""
    workers: int = 16
    validation_workers: int | None = None
    """At most this many of the workers play validation matches at once (None:
    ``default_validation_workers(workers)``): a flood of registrations waits for these while
    the other workers go on with the ladders."""
    lease_s: float = 10.0
    """This process's registration lease, renewed every quarter of it: when it dies, its
    matches go back to the queue within ``lease_s + housekeeping_interval_s``."""
    leader_lease_s: float = 5.0
    """A leadership lease (one ladder's scheduling, validation, health sweeps): a dead
    leader's successor takes over within about this plus a second."""
    schedule_interval_s: float = 0.2
    pool_refresh_s: float = 5.0
    """How often each ladder's pool reads the bots whose state changed (new, validated,
    resumed, paused, pulled): such a change reaches matchmaking within this."""
    pool_catch_up_s: float = 60.0
    """How often each ladder's pool reads the entries whose rating or matches scheduled
    changed: other arena processes' results reach this one's matchmaking within this (its own
    at once)."""
    pool_rebuild_s: float = 600.0
    """How often each ladder's pool is rebuilt from every entrant (a safety net: a change whose
    commit came more than ``CHANGE_GRACE_US`` after its stamp, a clock step)."""
    health_interval_s: float = 30.0
    """How often active bots are probed (GetInfo)."""
    health_failures_to_pull: int = 3
    max_match_failures: int = MAX_FAILURES
    """Failed attempts in a row at a match, for a reason that is not a bot's fault (setting it
    up, the referee, storing its result, a worker that died with it), after which it is
    parked for an operator instead of going back to the queue."""
    housekeeping_interval_s: float = 2.0
    """How often this process requeues the matches whose lease ran out (their worker died)
    and reads how many matches are parked, for the metrics."""
    health_backoff_max_s: float = 3600.0
    """A pulled bot is probed again after twice the wait before its last failed probe (the
    first after two intervals), at most this long."""
    channel_idle_s: float = 300.0
    """A channel to a bot that no match holds and nothing used for this long is closed (at a
    health sweep); channels to bots no longer validating, active or pulled close at once."""
    validation_matches: int = 2
    validation_time_control: TimeControl = field(
        default_factory=lambda: TimeControl(move_time_ms=2000, time_bank_ms=10_000)
    )
    seed: int | None = None
    result_batch_max: int = 32
    """At most this many finished matches' results recorded in one transaction (group
    commit: the result writer takes the first waiting, then whatever else is waiting already,
    without waiting for more)."""


def queue_target(config: arena_service_pb2.LadderConfig) -> int:
    """How many of a ladder's matches may be waiting or playing at once: twice its concurrency
    (at least 2, and at least one whole set), so workers never wait on the scheduler."""
    set_size = config.settings.num_seats if config.duplicate_deals else 1
    return max(2, 2 * (config.concurrency or 1), set_size)


def default_validation_workers(workers: int) -> int:
    """A quarter of the workers (at least one) for validation matches."""
    return max(1, workers // 4)


class MatchFailed(Exception):
    """A match failed for a reason that is not a bot's fault; ``kind`` (one of
    ``FAILURE_KINDS``) says where, the exception's cause what."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _failure_of(error: BaseException) -> tuple[str, BaseException]:
    """Where a match failed and why: ``MatchFailed``'s kind and cause, else "play" (a failure
    of the lease renewal beside the match, say), through exception groups of one."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, MatchFailed) and error.__cause__ is not None:
        return error.kind, error.__cause__
    return "play", error


async def cancel_when_set(event: trio.Event, scope: trio.CancelScope) -> None:
    """Cancel ``scope`` once ``event`` is set (a task beside what the scope runs)."""
    await event.wait()
    scope.cancel()


@dataclass
class LiveMatch:
    """A match being played here, for spectators: public move events and subscriber queues."""

    events: list[arena_service_pb2.WatchMatchResponse] = field(default_factory=list)
    subscribers: list[asyncio.Queue[arena_service_pb2.WatchMatchResponse | None]] = field(
        default_factory=list
    )

    def publish(self, event: arena_service_pb2.WatchMatchResponse | None) -> None:
        """Send an event (None: the stream ends) to every subscriber; same thread as asyncio."""
        if event is not None:
            self.events.append(event)
        for queue in self.subscribers:
            queue.put_nowait(event)

    def publish_move(self, match: Match, move: MoveLog) -> None:
        """A referee's ``on_move``: the move as spectators may see it, if it is public (public
        moves only, numbered among themselves: ``events`` holds only move events until the
        match is over, the finished record coming last)."""
        event = public_move_event(match, move, len(self.events))
        if event is not None:
            self.publish(arena_service_pb2.WatchMatchResponse(move=event))


@dataclass
class LadderPool:
    """A ladder's matchmaking pool and when it was last rebuilt and brought up to date
    (``*_at``: trio clock; ``*_us``: the stamps still to be read, store clock)."""

    pool: MatchmakingPool
    built_at: float
    caught_up_at: float
    checked_at: float
    entries_since_us: int
    states_since_us: int


def with_waiting(first: T, channel: trio.MemoryReceiveChannel[T], limit: int) -> list[T]:
    """``first`` and whatever else already waits in ``channel``, at most ``limit`` in all,
    without waiting for more: a batch as large as the load makes it."""
    batch = [first]
    while len(batch) < limit:
        try:
            batch.append(channel.receive_nowait())
        except trio.WouldBlock:
            break
    return batch


@dataclass
class PendingResult:
    """A finished match's record handed to the result writer, and what recording it came to
    (``outcome``, once ``done`` is set)."""

    record: record_pb2.MatchRecord
    done: trio.Event = field(default_factory=trio.Event)
    outcome: RecordOutcome = None


@dataclass
class PendingClaim:
    """A free worker's request to the claimer (``ladder_only``: no validation match), and what
    it got (``claim``, or the store's ``error``, once ``done`` is set)."""

    ladder_only: bool
    done: trio.Event = field(default_factory=trio.Event)
    claim: Claim | None = None
    error: Exception | None = None


class Arena:
    """Ladders in motion: schedules matches into the store and plays them."""

    def __init__(
        self,
        store: Store,
        pool: BotPool,
        metrics: Metrics,
        house_endpoint: str,
        config: ArenaConfig | None = None,
        guard: EndpointGuard | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.metrics = metrics
        self.house_endpoint = house_endpoint
        self.config = config or ArenaConfig()
        self.guard = guard or EndpointGuard()
        self.live: dict[str, LiveMatch] = {}
        self.coordination = Coordination(store.db)
        self.leadership = Leadership(
            self.db, self.coordination, self.config.worker_id, self.config.leader_lease_s, 1.0
        )
        self.incarnation = ""
        """This process's current registration (``Coordination.register``)."""
        self._registration_lost = trio.Event()
        """Set when this process's registration ran out: its matches are not its own, and
        no match is claimed until it has registered again (a new event)."""
        self.stop = trio.Event()
        self.finished = trio.Event()
        self.serving = False
        self._rng = random.Random(self.config.seed)
        self._work_available = trio.Event()
        self._pools: dict[str, LadderPool] = {}
        self._ladders: dict[str, arena_service_pb2.LadderConfig] = {}
        share = self.config.validation_workers
        self.validation_share = min(
            self.config.workers,
            default_validation_workers(self.config.workers) if share is None else share,
        )
        """How many validation matches this process plays at once, at most."""
        self.validating = 0
        """Validation matches claimed or being claimed here right now."""
        self._announced: dict[str, int] = {}
        self._targets: dict[str, str] = {}
        """Each bot endpoint's channel target, as ``connect_target`` last resolved it."""
        """What each bot last announced as its limit of matches at once, as last stored."""
        self._results: trio.MemorySendChannel[PendingResult] | None = None
        """Where finished matches hand their records to the result writer (while ``run``
        runs; without it each match records its own)."""
        self._claims: trio.MemorySendChannel[PendingClaim] | None = None
        """Where free workers ask the claimer for a match (while ``run`` runs)."""

    @property
    def registration_lost(self) -> trio.Event:
        """Set once this process's current registration ran out: the matches it plays may be
        another's, so stop them (``_heartbeat_forever`` waits until ``live`` is empty)."""
        return self._registration_lost

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a store operation on the database's own thread(s), timing it."""
        return await await_aio(lambda: call_store(self.store, self.metrics, fn, *args))

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Register, recover, then run this process's roles until ``stop`` is set.

        After ``stop`` no new match is claimed and the leadership leases are given up; matches
        in flight end at their next move and go back to the queue; ``run`` returns once every
        worker is idle (``finished`` is set), having removed this process's registration.
        Cancel the caller to abandon them sooner (the registration's lease runs out and any
        live process requeues them). ``WorkerIdInUse`` if a live process has this worker id.
        """
        config = self.config
        await self._register()
        roles = set(config.roles)
        try:
            async with trio.open_nursery() as background:
                background.start_soon(self._heartbeat_forever)
                results, to_record = trio.open_memory_channel[PendingResult](math.inf)
                background.start_soon(self._write_results_forever, to_record)
                self._results = results
                claims, to_claim = trio.open_memory_channel[PendingClaim](math.inf)
                background.start_soon(self._claim_forever, to_claim)
                self._claims = claims
                if roles & {"scheduler", "referee"}:
                    background.start_soon(self._housekeep_forever)
                    background.start_soon(self._sweep_forever)
                if "scheduler" in roles:
                    background.start_soon(self._schedule_forever)
                async with trio.open_nursery() as workers:
                    if "referee" in roles:
                        for _ in range(config.workers):
                            workers.start_soon(self._work_forever)
                    self.serving = True
                    task_status.started()
                    await self.stop.wait()
                background.cancel_scope.cancel()
        finally:
            self.serving = False
            self._results = self._claims = None
            with trio.CancelScope(shield=True):  # cancelled too: its matches are free at once
                await self._retire()
            self.finished.set()

    # -- registration ---------------------------------------------------------------------------

    async def _register(self) -> None:
        """Register this process and requeue what an earlier process of this id left."""
        config = self.config
        self.incarnation = await self.db(
            self.coordination.register,
            config.worker_id,
            config.roles,
            config.advertise_address,
            config.lease_s,
        )
        self._registration_lost = trio.Event()
        recovered = await self.db(self.store.recover, config.worker_id, config.max_match_failures)
        if recovered:
            log.info("requeued %d matches left in flight by an earlier run", recovered)

    async def _retire(self) -> None:
        """Give up the leadership leases and the registration (a clean stop)."""
        with contextlib.suppress(Exception):
            await self.leadership.resign_all()
            await self.db(self.coordination.retire, self.config.worker_id, self.incarnation)

    async def _heartbeat_forever(self) -> None:
        """Renew the registration every quarter of its lease. If it ran out (a stall, the
        database out of reach for longer than the lease), this process's matches may be
        another's: stop them, wait for them to end, register again and go on."""
        config = self.config
        while True:
            await trio.sleep(config.lease_s / 4)
            try:
                renewed = await self.db(
                    self.coordination.heartbeat,
                    config.worker_id,
                    self.incarnation,
                    config.lease_s,
                    self.stop.is_set(),
                )
            except Exception:
                log.warning("registration not renewed (retrying)", exc_info=True)
                continue
            if renewed:
                continue
            log.error(
                "worker %s: registration ran out before it was renewed; stopping its %d "
                "matches and registering again",
                config.worker_id,
                len(self.live),
            )
            self._registration_lost.set()
            self.leadership.lost_all()
            while self.live:
                await trio.sleep(0.05)
            await self._register_again()

    async def _register_again(self) -> None:
        """Register after the registration ran out, retrying while the database is out of
        reach; ``WorkerIdInUse`` (another process took the id meanwhile) stops the arena."""
        while True:
            try:
                await self._register()
                return
            except WorkerIdInUse:
                raise
            except Exception:
                log.warning("registering again failed (retrying)", exc_info=True)
                await trio.sleep(self.config.lease_s / 4)

    # -- scheduling -----------------------------------------------------------------------------

    async def _schedule_forever(self) -> None:
        while not self.stop.is_set():
            await self.schedule_once()
            await trio.sleep(self.config.schedule_interval_s)
        await self.leadership.resign_all()  # draining: let another scheduler take over now

    async def _housekeep_forever(self) -> None:
        while True:
            try:
                await self.housekeep_once()
            except Exception:
                log.warning("housekeeping failed (retrying)", exc_info=True)
            await trio.sleep(self.config.housekeeping_interval_s)

    async def housekeep_once(self) -> None:
        """Requeue (under new ids) the matches of workers whose registration ran out (they
        died, or lost the database for longer than their lease), and count the parked ones."""
        recovered = await self.db(self.store.recover, None, self.config.max_match_failures)
        if recovered:
            self.metrics.matches_taken_over.inc(recovered)
            log.warning("requeued %d matches of workers that are gone", recovered)
        workers = await self.db(self.coordination.workers)
        self.metrics.workers_alive.set(sum(worker.alive for worker in workers))
        held = Counter(name.split(":", 1)[0] for name in self.leadership.holding())
        for kind in LEASE_KINDS:
            self.metrics.leases_held.labels(kind).set(held[kind])
        parked = await self.db(self.store.parked_counts)
        for kind in FAILURE_KINDS:
            self.metrics.matches_parked.labels(kind).set(parked[kind])

    async def schedule_once(self) -> None:
        """Queue validation matches for new bots and keep every ladder's queue topped up: the
        parts whose leadership lease this process holds (one scheduler each, whatever the
        number of processes)."""
        validation = await self.leadership.lead("validation")
        if validation is not None:
            authority = ("validation", self.config.worker_id, validation)
            for bot in await self.db(self.store.bots, (BotState.VALIDATING,)):
                if not await self.db(self.store.has_validation, bot.bot_id):
                    planned = self._validation_set(bot)
                    await self.db(self.store.enqueue_validation, bot.bot_id, planned, authority)
        self._ladders = await self.db(self.store.ladder_configs)
        for ladder_id, config in self._ladders.items():
            await self._schedule_ladder(ladder_id, config)
        self._work_available.set()
        self._work_available = trio.Event()

    async def _schedule_ladder(
        self, ladder_id: str, config: arena_service_pb2.LadderConfig
    ) -> None:
        """Top up one ladder's queue to its target if this process is its scheduler."""
        lease = f"ladder:{ladder_id}"
        epoch = await self.leadership.lead(lease)
        if epoch is None:
            self._pools.pop(ladder_id, None)  # another process schedules it
            return
        target = queue_target(config)
        queued = await self.db(self.store.waiting, ladder_id)
        self.metrics.matches_waiting.labels(config.settings.game).set(queued)
        if queued >= target:
            return
        pool = await self._pool(ladder_id, config.settings.game)
        authority = (lease, self.config.worker_id, epoch)
        sets: list[list[PlannedMatch]] = []
        while queued < target:
            players = pool.pick(config.settings.num_seats, config.allow_self_play)
            if not players:
                break
            planned = plan_set(players, self._rng, config.duplicate_deals)
            if queued + len(planned) > target:
                break
            pool.scheduled([bot for match in planned for bot in match.seats])  # for the next
            sets.append(planned)
            queued += len(planned)
        if not sets:
            return
        # The tick's sets in one transaction (one commit, the checks done once).
        queued_sets = await self.db(
            self.store.enqueue_sets, ladder_id, "ladder", sets, target, authority
        )
        if not all(queued_sets):
            # A bot left unseen, the lease moved on, or the queue filled meanwhile: read the
            # pool (it counted the refused sets as scheduled) and the lease again next tick.
            self._pools.pop(ladder_id, None)
            self.leadership.lost(lease)

    async def _pool(self, ladder_id: str, game: str) -> MatchmakingPool:
        """The ladder's matchmaking pool, kept across ticks: it takes this process's new
        ratings as they come, reads the bots whose state changed every ``pool_refresh_s``, the
        entries that changed every ``pool_catch_up_s``, and is rebuilt every
        ``pool_rebuild_s``."""
        kept = self._pools.get(ladder_id)
        now = trio.current_time()
        config = self.config
        if kept is None or now - kept.built_at >= config.pool_rebuild_s:
            since = now_us() - CHANGE_GRACE_US
            await self.db(self.store.enter_active_bots, ladder_id, game)
            pool = MatchmakingPool(await self.db(self.store.entrants, ladder_id), self._rng)
            kept = self._pools[ladder_id] = LadderPool(pool, now, now, now, since, since)
        if now - kept.caught_up_at >= config.pool_catch_up_s:
            since = now_us() - CHANGE_GRACE_US
            changed = await self.db(self.store.entrants, ladder_id, kept.entries_since_us)
            kept.pool.update(changed)
            kept.caught_up_at, kept.entries_since_us = now, since
        if now - kept.checked_at >= config.pool_refresh_s:
            changes = await self.db(
                self.store.entrant_changes, ladder_id, game, kept.states_since_us
            )
            kept.pool.remove(changes.gone)
            kept.pool.update(changes.active)
            kept.checked_at, kept.states_since_us = now, changes.next_since_us
        return kept.pool

    def _validation_set(self, bot: Any) -> list[PlannedMatch]:
        seats = STATE_CLASSES[bot.game].game_type.min_seats
        matches = []
        for _ in range(self.config.validation_matches):
            order = [bot.bot_id] + [HOUSE_RANDOM] * (seats - 1)
            self._rng.shuffle(order)
            matches.append(PlannedMatch(self._rng.getrandbits(48), tuple(order)))
        return matches

    # -- playing --------------------------------------------------------------------------------

    async def _work_forever(self) -> None:
        """Claim and play matches until ``stop``. A worker takes the oldest match of any kind
        while a validation slot is free (it holds the slot while it claims, and keeps it if it
        got a validation match), else the oldest ladder match: at most ``validation_share``
        validation matches play here at once, whatever waits in the queue."""
        while not self.stop.is_set():
            if self._registration_lost.is_set():  # registering again: claim nothing
                await trio.sleep(0.1)
                continue
            reserve = self.validating < self.validation_share
            self.validating += reserve  # held while claiming: two workers cannot both take it
            claim = None
            try:
                claim = await self._claim(ladder_only=not reserve)
            finally:
                if claim is None or claim.kind != "validation":
                    self.validating -= reserve
            if claim is None:
                with trio.move_on_after(0.5):
                    await self._work_available.wait()
                continue
            try:
                await self._play_or_fail(claim)
            finally:
                if claim.kind == "validation":
                    self.validating -= 1

    async def _claim(self, ladder_only: bool) -> Claim | None:
        """A match for this worker to play, or None (through the claimer while ``run``
        runs)."""
        if self._claims is None:
            return await self.db(
                self.store.claim, self.config.worker_id, self.config.lease_s, ladder_only
            )
        pending = PendingClaim(ladder_only)
        self._claims.send_nowait(pending)
        await pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return pending.claim

    async def _claim_forever(self, to_claim: trio.MemoryReceiveChannel[PendingClaim]) -> None:
        """The claimer: take the first free worker's request, then every other one already
        waiting (at most ``result_batch_max``), claim for them in one transaction
        (``Store.claim_many``), answer each; again. The result writer frees workers together
        (a batch's matches end at once), so they claim together: one round trip for them."""
        async with to_claim:
            async for first in to_claim:
                batch = with_waiting(first, to_claim, self.config.result_batch_max)
                try:
                    claims = await self.db(
                        self.store.claim_many,
                        self.config.worker_id,
                        self.config.lease_s,
                        [pending.ladder_only for pending in batch],
                    )
                except Exception as error:
                    for pending in batch:
                        pending.error = error
                        pending.done.set()
                    continue
                for pending, claim in zip(batch, claims, strict=True):
                    pending.claim = claim
                    pending.done.set()

    async def _play_or_fail(self, claim: Claim) -> None:
        """Play a claimed match (and remember the limits its bots announced); a failure that
        is not a bot's fault gives it back (or parks it) and must not take the arena down."""
        try:
            await self.play_claim(claim)
        except Exception as error:
            kind, cause = _failure_of(error)
            log.exception("match %s failed (%s)", claim.match_id, kind)
            with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._fail(claim, kind, f"{type(cause).__name__}: {cause}")
            await trio.sleep(1.0)
            return
        try:  # the match is over and stored: failing here is no failure of the match
            await self._remember_limits(self._announced_in(claim))
        except Exception:
            log.warning(
                "match %s: announced limits not stored (the next GetInfo tells them)",
                claim.match_id,
                exc_info=True,
            )

    async def _fail(self, claim: Claim, kind: str, detail: str) -> None:
        """Give a failed match back to the queue under a new id, or park it."""
        self.metrics.match_failures.labels(kind).inc()
        requeued = await self.db(
            self.store.fail,
            claim.match_id,
            self.config.worker_id,
            kind,
            detail,
            self.config.max_match_failures,
        )
        if requeued is None:
            return
        if requeued.status == "parked":
            log.warning(
                "match %s parked as %s after %d failed attempts (%s): see `arena parked`",
                claim.match_id,
                requeued.match_id,
                self.config.max_match_failures,
                kind,
            )
        else:
            log.info("match %s given back to the queue as %s", claim.match_id, requeued.match_id)

    async def play_claim(self, claim: Claim) -> None:
        """Play one claimed match, record it, then tell its bots how it ended (or give it back
        under a new id if the arena is stopping).

        The bots hear the outcome only once it is committed (a crash in between leaves them
        told nothing for this id, and the match is played again under another), and never if
        this worker lost the match meanwhile (its lease ran out). Failures that are not a bot's
        fault raise ``MatchFailed``."""
        # Watchable from the claim on: a spectator who saw it playing in the store finds it.
        live = self.live[claim.match_id] = LiveMatch()
        try:
            try:
                spec = await self._spec_for(claim)
            except Exception as error:
                raise MatchFailed("setup") from error
            played = await self._play_while_held(claim, spec, live)
            if played is None:
                log.warning("match %s: lease lost while playing; not recorded", claim.match_id)
                return
            record = played.record
            if record.status == record_pb2.MATCH_STATUS_ABORTED:
                new_id = await self.db(self.store.release, claim.match_id, self.config.worker_id)
                if new_id is not None:
                    log.info("match %s given back to the queue as %s", claim.match_id, new_id)
                    await announce_end(self.pool, played)  # final for this id: aborted
                return
            ratings = await self._record(record)
            if isinstance(ratings, ClaimLost):
                log.warning("match %s: lease lost before its result was stored", claim.match_id)
                return
            if isinstance(ratings, Exception):
                raise MatchFailed("record") from ratings
            if ratings is not None:
                self._count_result(claim, record)
                kept = self._pools.get(claim.ladder_id or "")
                if kept is not None:
                    kept.pool.rated(ratings)
            await self._publish_end(live, claim, record)
            await announce_end(self.pool, played)
        finally:
            live.publish(None)
            self.live.pop(claim.match_id, None)

    async def _record(self, record: record_pb2.MatchRecord) -> RecordOutcome:
        """Record a finished match (through the result writer while ``run`` runs): what it
        came to, an error included. Once this returns, the result is committed or refused."""
        if self._results is None:
            try:
                (outcome,) = await self.db(
                    self.store.record_results, [record], self.config.worker_id
                )
            except Exception as error:
                return error
            return outcome
        pending = PendingResult(record)
        self._results.send_nowait(pending)
        await pending.done.wait()
        return pending.outcome

    async def _write_results_forever(
        self, to_record: trio.MemoryReceiveChannel[PendingResult]
    ) -> None:
        """The result writer: take the first finished match waiting, then every other one
        already waiting (at most ``result_batch_max``; no wait for more), record them in one
        transaction (``Store.record_results``), tell each its own outcome; again.

        One commit's disk flush for every match that finished while the last batch was being
        written: a busy arena writes larger batches, an idle one writes each match at once.
        Each match's task announces its end only after its own outcome came back, so what a
        bot is told is committed (a kill in between tells nobody; the match is played again
        under a new id)."""
        async with to_record:
            async for first in to_record:
                batch = with_waiting(first, to_record, self.config.result_batch_max)
                self.metrics.result_batch_matches.observe(len(batch))
                try:
                    outcomes = await self.db(
                        self.store.record_results,
                        [pending.record for pending in batch],
                        self.config.worker_id,
                    )
                except Exception as error:
                    outcomes = [error] * len(batch)
                # (Cancelled, the writer leaves its batch waiting: only the nursery that holds
                # the workers too cancels it, so they are being cancelled as well.)
                for pending, outcome in zip(batch, outcomes, strict=True):
                    pending.outcome = outcome
                    pending.done.set()

    async def connect_target(self, endpoint: str) -> str | Refused:
        """What the referee connects to for a bot's endpoint: the endpoint checked by the guard
        again, now (its name may resolve elsewhere than at registration), as an IP target; or
        ``Refused``, which the referee turns into an UNREACHABLE fault without connecting.
        A bot that dials out (``outbound://``) has no address: its stream is its target; a
        ``stream://`` bot's address is checked as any other's."""
        if endpoint.startswith(OUTBOUND):
            self._targets[endpoint] = endpoint
            return endpoint
        scheme = STREAM if endpoint.startswith(STREAM) else ""
        try:
            checked = address_part(endpoint)
            target = scheme + (await await_aio(lambda: self.guard.check(checked))).target
        except EndpointRefused as refused:
            log.info("not connecting to a bot endpoint: %s", refused.detail)
            return Refused(REFUSED_DETAIL)
        self._targets[endpoint] = target
        return target

    def forget_endpoint(self, endpoint: str) -> None:
        """A bot endpoint no bot uses any more (its bot retired): close its channel now, or as
        soon as no match holds it."""
        target = self._targets.pop(endpoint, None)
        if target is not None:
            self.pool.forget(target)

    async def _play_while_held(
        self, claim: Claim, spec: MatchSpec, live: LiveMatch
    ) -> PlayedMatch | None:
        """Play the match while this process's registration holds; None if it ran out (the
        match may be someone else's now: stop playing it)."""
        lost = self._registration_lost
        played: PlayedMatch | None = None
        failure: Exception | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_when_set, lost, nursery.cancel_scope)
            try:
                played = await play_unannounced(
                    spec, self.pool, partial(self._on_move, live), self.metrics, self.stop
                )
            except Exception as error:  # raised outside the nursery: not in an exception group
                failure = error
            nursery.cancel_scope.cancel()
        if failure is not None:
            raise MatchFailed("play") from failure
        return None if lost.is_set() else played

    async def _publish_end(
        self, live: LiveMatch, claim: Claim, record: record_pb2.MatchRecord
    ) -> None:
        """Send spectators the record, unless another rotation of its deal is unfinished (then
        the stream just ends: the record would show that rotation's cards)."""
        if live.subscribers and claim.kind == "ladder":
            unfinished = await self.db(self.store.rotations_unfinished, claim.match_id)
            if unfinished:
                return
        live.publish(arena_service_pb2.WatchMatchResponse(finished=record))

    async def _spec_for(self, claim: Claim) -> MatchSpec:
        endpoints = [
            await self.connect_target(endpoint) if endpoint else self.house_endpoint
            for endpoint in claim.endpoints
        ]
        if claim.ladder_id is None:
            bot = next(b for b in claim.seats if b != HOUSE_RANDOM)
            game_name = (await self.db(self.store.bot, bot)).game
            game = make_game(game_name, len(claim.seats))
            return MatchSpec(
                game,
                endpoints,
                claim.seed,
                claim.match_id,
                self.config.validation_time_control,
                FaultPolicy(max_faults=3),
            )
        config = self._ladders.get(claim.ladder_id)
        if config is None:  # new since the last scheduling tick, or this process schedules none
            config = (await self.db(self.store.ladder, claim.ladder_id)).config
            self._ladders[claim.ladder_id] = config  # a ladder's config never changes
        game = game_from_settings(config.settings, len(claim.seats))
        return MatchSpec(
            game,
            endpoints,
            claim.seed,
            claim.match_id,
            TimeControl(config.move_time_ms or 1000, config.time_bank_ms),
            FaultPolicy(max_faults=config.max_faults),
        )

    def _on_move(self, live: LiveMatch, match: Match, move: MoveLog) -> None:
        live.publish_move(match, move)

    def _count_result(self, claim: Claim, record: record_pb2.MatchRecord) -> None:
        game = record.settings.game
        if claim.kind == "validation":
            bad = record.status != record_pb2.MATCH_STATUS_COMPLETED or any(
                m.fault for m in record.moves if claim.seats[m.seat] != HOUSE_RANDOM
            )
            self.metrics.validations.labels(game, "failed" if bad else "passed").inc()
        elif record.status in (
            record_pb2.MATCH_STATUS_COMPLETED,
            record_pb2.MATCH_STATUS_FORFEITED,
        ):
            self.metrics.rating_updates.labels(game).inc()

    # -- what bots announce -------------------------------------------------------------------

    def _announced_in(self, claim: Claim) -> dict[str, int]:
        """The limits of matches at once that a claim's bots announced at its start (GetInfo)."""
        announced = {}
        for bot_id, endpoint in zip(claim.seats, claim.endpoints, strict=True):
            target = self._targets.get(endpoint)
            info = self.pool.last_info(target) if target and bot_id != HOUSE_RANDOM else None
            if info is not None:
                announced[bot_id] = info.max_concurrent_matches
        return announced

    async def _remember_limits(self, announced: dict[str, int]) -> None:
        """Store announced limits that differ from what this process last stored."""
        changed = {b: n for b, n in announced.items() if self._announced.get(b) != n}
        if changed:
            await self.db(self.store.set_announced_limits, changed)
            self._announced.update(changed)

    # -- health ---------------------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        """Every health interval: probe the bots if this process is the sweeper (a lease
        that outlasts the interval, so its holder keeps it), and close idle channels."""
        interval = self.config.health_interval_s
        while True:
            await trio.sleep(interval)
            probe = "scheduler" in self.config.roles and (
                await self.leadership.lead("sweep", 1.5 * interval) is not None
            )
            await self.sweep_once(probe=probe)

    def probe_delay_s(self, failures: int) -> float:
        """How long after a failed probe a bot with ``failures`` failures in a row is probed
        again: the sweep interval while it is active, then doubling from two intervals at the
        pull, up to ``health_backoff_max_s``."""
        config = self.config
        beyond = failures - config.health_failures_to_pull
        if beyond < 0:
            return config.health_interval_s
        return float(min(config.health_backoff_max_s, config.health_interval_s * 2 ** (beyond + 1)))

    async def sweep_once(self, now: int | None = None, probe: bool = True) -> None:
        """Probe (``probe``) every active bot, and every pulled bot whose back-off has run out
        (``now``, µs: the store's clock unless given); pull or restore by consecutive failures;
        store the limits the bots announce; close the channels no bot needs any more."""
        now = now_us() if now is None else now
        bots = await self.db(
            self.store.bots, (BotState.ACTIVE, BotState.UNHEALTHY, BotState.VALIDATING)
        )
        if probe:
            await self._probe(bots, now)
        live = {bot.endpoint for bot in bots}
        self._targets = {e: target for e, target in self._targets.items() if e in live}
        self.pool.keep_only([self.house_endpoint, *self._targets.values()])
        self.pool.sweep(self.config.channel_idle_s)

    async def _probe(self, bots: list[BotRow], now: int) -> None:
        """Probe the bots due, and store what the probes found."""
        due_at = await self.db(self.store.probe_schedule)
        slack = int(self.config.health_interval_s * 1e6) // 2  # a sweep comes late, not early
        probed = [
            bot
            for bot in bots
            if bot.state == BotState.ACTIVE
            or (bot.state == BotState.UNHEALTHY and due_at.get(bot.bot_id, 0) - now <= slack)
        ]
        results: dict[str, CallResult] = {}

        async def probe(bot_id: str, endpoint: str) -> None:
            target = await self.connect_target(endpoint)
            with self.pool.holding([target]) as (bot,):
                results[bot_id] = await bot.get_info(5.0)

        async with trio.open_nursery() as nursery:
            for bot in probed:
                nursery.start_soon(probe, bot.bot_id, bot.endpoint)
        pulled = sum(bot.state == BotState.UNHEALTHY for bot in bots)
        announced = {}
        for bot in probed:
            result = results[bot.bot_id]
            ok = result.fault is None
            self.metrics.health_probes.labels("ok" if ok else "failed").inc()
            if ok and isinstance(result.response, bot_service_pb2.GetInfoResponse):
                announced[bot.bot_id] = result.response.max_concurrent_matches
            failures = 0 if ok else bot.health_failures + 1
            state, detail = bot.state, bot.state_detail
            if ok and bot.state == BotState.UNHEALTHY:
                state, detail = BotState.ACTIVE, "answering again"
            elif failures >= self.config.health_failures_to_pull:
                state, detail = (
                    BotState.UNHEALTHY,
                    f"no answer to {failures} health probes in a row",
                )
            next_probe = now + int(self.probe_delay_s(failures) * 1e6) if failures else 0
            if (state, failures) != (bot.state, bot.health_failures):
                await self.db(
                    self.store.set_state_by_arena, bot.bot_id, state, detail, failures, next_probe
                )
            pulled += (state == BotState.UNHEALTHY) - (bot.state == BotState.UNHEALTHY)
        self.metrics.bots_pulled.set(pulled)
        await self._remember_limits(announced)
