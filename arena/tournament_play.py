"""``arena serve`` playing the tournaments an admin created (``CreateTournament``).

One process at a time plays them: the one holding the ``tournaments`` leadership lease (a
process with the referee role). It plans each running tournament from its seed
(``arena.tournament``), skips the sets already stored and plays the others through the
referee as ladder matches are played (the bots' registered endpoints, checked by the endpoint
guard when dialled, the tournament's time control), storing each set as it completes
(``arena.store.tournaments``). A set counts only once every rotation has been played; one cut
short (the arena stopping, the lease lost, the deadline) is dropped and played again on
resume, under new match ids, so no match is recorded twice. Once every set is stored the
tournament is FINISHED; at its deadline, STOPPED with the sets played.

A set's rotations are played one after another, each a row of the match queue while its set
is played (``Tournaments.add_set``): listed by ListMatches, watched live through any process
as ladder matches are (``LiveMatch``, the same public move events), and counted against its
bots' limits of matches at once together with their ladder matches. A rotation whose bot is
at its limit waits (``START_POLL_S``) rather than exceed it, with a reservation of its bots'
slots that ladder claims respect (``Tournaments.start_match``), so a busy ladder cannot
starve it. The last rotation of a deal can be
watched from its first move; the others are withheld while another rotation is unfinished.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import trio

from arena.ladder import Arena, LiveMatch, cancel_when_set
from arena.matchmaking import PlannedMatch
from arena.store.repository import BotRow
from arena.store.tournaments import TournamentRow, Tournaments, TournamentState
from arena.tournament import PlannedSet, SetResult, Tournament
from arena.tournament_api import label, plan_of, rotations_of
from cardarena.game.v1 import record_pb2
from referee.games.api import Game
from referee.games.registry import game_from_settings
from referee.match import FaultPolicy, TimeControl
from referee.runner import MatchSpec, play_match

log = logging.getLogger("arena.tournaments")
LEASE = "tournaments"
"""The leadership lease of the process that plays the tournaments."""
MAX_BACKOFF_S = 300.0
"""The longest wait before a tournament that keeps failing is tried again."""
START_POLL_S = 0.5
"""How often a rotation whose bot is at its limit of matches at once looks again."""
T = TypeVar("T")


@dataclass(frozen=True)
class _Playing:
    """A tournament as this process plays it: its entrants by label, its limit of matches at
    once and the cap of matches at once per bot (its ladder's, else the default)."""

    row: TournamentRow
    game: Game
    entrants: dict[str, BotRow]
    limiter: trio.CapacityLimiter
    tournament: Tournament
    ladder_cap: int


class TournamentRunner:
    """Plays every running tournament while this process holds the ``tournaments`` lease."""

    def __init__(self, arena: Arena, tournaments: Tournaments, poll_s: float = 1.0) -> None:
        self.arena = arena
        self.tournaments = tournaments
        self.poll_s = poll_s
        self._playing: dict[str, trio.CancelScope] = {}
        self._failures: dict[str, tuple[int, float]] = {}
        """Per tournament: failures in a row and when to try it again (trio time)."""

    async def _db(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.arena.db(fn, *args)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Look for running tournaments every ``poll_s`` and play them, until the arena
        stops (what is in flight then is dropped and resumed at the next start)."""
        async with trio.open_nursery() as nursery:
            task_status.started()
            while not self.arena.stop.is_set():
                try:
                    await self._tick(nursery)
                except Exception:
                    log.warning("tournaments not checked (retrying)", exc_info=True)
                with trio.move_on_after(self.poll_s):
                    await self.arena.stop.wait()
            nursery.cancel_scope.cancel()

    async def _tick(self, nursery: trio.Nursery) -> None:
        if await self.arena.leadership.lead(LEASE) is None:
            for scope in self._playing.values():  # another process plays them now
                scope.cancel()
            return
        dropped = await self._db(
            self.tournaments.drop_stale_matches, self.arena.config.worker_id, list(self._playing)
        )
        if dropped:
            log.info("dropped %d tournament matches left by an earlier run", dropped)
        now = trio.current_time()
        for row in await self._db(self.tournaments.listed, TournamentState.RUNNING):
            _, retry_at = self._failures.get(row.tournament_id, (0, 0.0))
            if row.tournament_id not in self._playing and now >= retry_at:
                self._playing[row.tournament_id] = trio.CancelScope()
                nursery.start_soon(self._play_guarded, row)

    async def _play_guarded(self, row: TournamentRow) -> None:
        """``play``; a failure is logged and the tournament resumed after a back-off that
        doubles with each failure in a row (from ``poll_s``, at most ``MAX_BACKOFF_S``)."""
        try:
            with self._playing[row.tournament_id]:
                await self.play(row)
            self._failures.pop(row.tournament_id, None)
        except Exception:
            failures = self._failures.get(row.tournament_id, (0, 0.0))[0] + 1
            wait = min(MAX_BACKOFF_S, self.poll_s * 2**failures)
            self._failures[row.tournament_id] = (failures, trio.current_time() + wait)
            log.exception("tournament %s failed; resuming it in %.0f s", row.tournament_id, wait)
        finally:
            self._playing.pop(row.tournament_id, None)

    async def play(self, row: TournamentRow) -> None:
        """Play a tournament's unplayed sets, round by round, until done or its deadline."""
        config = row.config
        bots: list[BotRow] = [await self._db(self.arena.store.bot, b) for b in config.entrants]
        labels = [label(bot) for bot in bots]
        tournament = Tournament(plan_of(config, labels))
        ladder_cap = 0
        if config.ladder:
            ladder = await self._db(self.arena.store.ladder, config.ladder)
            ladder_cap = ladder.config.max_matches_per_bot
        playing = _Playing(
            row,
            game_from_settings(config.settings),
            dict(zip(labels, bots, strict=True)),
            trio.CapacityLimiter(config.concurrency),
            tournament,
            ladder_cap,
        )
        stored = {
            (r.round, r.table, r.index): r
            for r in await self._db(self.tournaments.played_sets, row.tournament_id)
        }
        left_s = (config.deadline_us - self.tournaments.clock()) / 1e6
        with trio.move_on_after(max(0.0, left_s)) as deadline:
            while sets := tournament.next_round():
                await self._db(self.tournaments.planned, row.tournament_id, tournament.sets_planned)
                async with trio.open_nursery() as nursery:
                    for planned in sets:
                        done = stored.get((planned.round, planned.table, planned.index))
                        if done is not None:
                            tournament.record(done)
                        else:
                            nursery.start_soon(self._play_set, playing, planned)
                if self.arena.stop.is_set():
                    return  # sets cut short: resumed at the next start
            await self._end(row, TournamentState.FINISHED)
        if deadline.cancelled_caught:
            await self._end(row, TournamentState.STOPPED)

    async def _end(self, row: TournamentRow, state: TournamentState) -> None:
        with trio.CancelScope(shield=True):
            if await self._db(self.tournaments.end, row.tournament_id, state):
                log.info("tournament %s %s", row.config.name, state)

    async def _play_set(self, playing: _Playing, planned: PlannedSet) -> None:
        """Play the rotations of one set one after another and store the set (unless the
        arena stopped meanwhile: an aborted rotation is not a result). Its rows leave the
        match queue as each rotation ends, and all of them whatever happens."""
        row = playing.row
        attempt = uuid.uuid4().hex[:6]
        where = f"{planned.round}.{planned.table}.{planned.index}"
        rotations = range(len(planned.matches))
        match_ids = [f"{row.tournament_id}-{where}.{index}-{attempt}" for index in rotations]
        seats = [[playing.entrants[e].bot_id for e in match.seats] for match in planned.matches]
        await self._db(
            self.tournaments.add_set,
            row.tournament_id,
            self.arena.config.worker_id,
            [(i, s, m.seed) for i, s, m in zip(match_ids, seats, planned.matches, strict=True)],
        )
        records: list[record_pb2.MatchRecord] = []
        try:
            for match_id, match in zip(match_ids, planned.matches, strict=True):
                record = await self._play_rotation(playing, match_id, match)
                await self._db(self.tournaments.end_matches, [match_id])
                if record is None or record.status == record_pb2.MATCH_STATUS_ABORTED:
                    return
                records.append(record)
        finally:
            with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._db(self.tournaments.end_matches, match_ids[len(records) :])
        if self.arena.stop.is_set():
            return
        result = SetResult(
            planned.round, planned.table, planned.index, rotations_of(planned, list(records))
        )
        with trio.CancelScope(shield=True):  # played: store it even if the deadline just passed
            recorded = await self._db(self.tournaments.record_set, row.tournament_id, result)
        if recorded:
            playing.tournament.record(result)

    async def _play_rotation(
        self, playing: _Playing, match_id: str, match: PlannedMatch
    ) -> record_pb2.MatchRecord | None:
        """Play one rotation once the tournament has a free slot and each of its bots is
        below its limit of matches at once, watchable while it is played; None if it was not
        started (the arena stopping, its set dropped)."""
        config = playing.row.config
        seats = [await self.arena.connect_target(playing.entrants[e].endpoint) for e in match.seats]
        spec = MatchSpec(
            playing.game,
            seats,
            match.seed,
            match_id,
            TimeControl(config.move_time_ms, config.time_bank_ms),
            FaultPolicy(max_faults=config.max_faults),
        )
        async with playing.limiter:
            if not await self._start_when_free(match_id, playing.ladder_cap):
                return None
            return await self._play_watched(spec)

    async def _play_watched(self, spec: MatchSpec) -> record_pb2.MatchRecord | None:
        """Play a started rotation, its public moves published to watchers (``arena.live``);
        None if this process's registration ran out meanwhile (it is stopped: the next
        holder of the lease plays its set again)."""
        lost = self.arena.registration_lost
        live = self.arena.live[spec.match_id] = LiveMatch()
        record = None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cancel_when_set, lost, nursery.cancel_scope)
                record = await play_match(
                    spec, self.arena.pool, live.publish_move, self.arena.metrics, self.arena.stop
                )
                nursery.cancel_scope.cancel()
        finally:
            live.publish(None)  # the stream ends: a tournament match keeps no record
            self.arena.live.pop(spec.match_id, None)
        return None if lost.is_set() else record

    async def _start_when_free(self, match_id: str, ladder_cap: int) -> bool:
        """Start the rotation in the store as soon as each of its bots may play one more
        match; False if it cannot be started (the arena stopping, its row gone)."""
        worker = self.arena.config.worker_id
        while not self.arena.stop.is_set():
            started = await self._db(self.tournaments.start_match, match_id, worker, ladder_cap)
            if started is not False:
                return bool(started)
            with trio.move_on_after(START_POLL_S):
                await self.arena.stop.wait()
        return False
