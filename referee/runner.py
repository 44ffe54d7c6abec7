"""Plays one match between bots at gRPC addresses: the trio shell around ``Match``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import trio

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import record_pb2
from referee import __version__
from referee.bot_client import BotEndpoint, BotPool, CallResult, Refused, malformed
from referee.codec import GameCodec
from referee.codec.common import game_settings
from referee.codec.record import match_record
from referee.codec.requests import RequestEncoder
from referee.codec.untrusted import MalformedResponseError
from referee.games.api import Game
from referee.games.registry import codec_for
from referee.match import FaultPolicy, Match, MoveLog, TimeControl
from referee.metrics import GameMetrics, MatchMetrics

NOTIFY_TIMEOUT_S = 5.0
"""Time a bot has to answer GetInfo, StartMatch and EndMatch."""


@dataclass(frozen=True)
class MatchSpec:
    """What to play: a game, one bot address per seat (or a seat the caller refused to
    connect to), a seed, the clock and the fault policy."""

    game: Game
    endpoints: Sequence[str | Refused]
    seed: int
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = field(default_factory=FaultPolicy)

    def __post_init__(self) -> None:
        if len(self.endpoints) != self.game.num_seats:
            raise ValueError(
                f"{self.game.type.title} with {self.game.num_seats} seats needs "
                f"{self.game.num_seats} bots, got {len(self.endpoints)}"
            )


MoveListener = Callable[[Match, MoveLog], None]


def _now_us() -> int:
    return time.time_ns() // 1000


async def _gather(calls: Sequence[Callable[[], Awaitable[CallResult]]]) -> list[CallResult]:
    """Run calls concurrently; results in call order."""
    results: list[CallResult | None] = [None] * len(calls)

    async def one(index: int) -> None:
        results[index] = await calls[index]()

    async with trio.open_nursery() as nursery:
        for index in range(len(calls)):
            nursery.start_soon(one, index)
    return [result for result in results if result is not None]


@dataclass(frozen=True)
class PlayedMatch:
    """A match played to its end whose result its bots have not been told yet.

    The ladder tells them (``announce_end``) only once the result is committed, so a match
    replayed after a crash never gets a second outcome for one id; paths with no store
    (``play_match``) tell them at once."""

    record: record_pb2.MatchRecord
    endpoints: tuple[str | Refused, ...]
    end_requests: tuple[bot_service_pb2.EndMatchRequest, ...]
    """One per seat; empty when the bots were never told the match started (voided at the
    start)."""


async def play_match(
    spec: MatchSpec,
    pool: BotPool,
    on_move: MoveListener | None = None,
    metrics: MatchMetrics | None = None,
    stop: trio.Event | None = None,
) -> record_pb2.MatchRecord:
    """Play ``spec`` to its end (or void it), tell the bots how it ended, return the record.

    For callers that keep no result (``arena match``, ``arena play``, tests): the outcome is
    final as soon as it is played. See ``play_unannounced`` for the rest."""
    played = await play_unannounced(spec, pool, on_move, metrics, stop)
    await announce_end(pool, played)
    return played.record


async def play_unannounced(
    spec: MatchSpec,
    pool: BotPool,
    on_move: MoveListener | None = None,
    metrics: MatchMetrics | None = None,
    stop: trio.Event | None = None,
) -> PlayedMatch:
    """Play ``spec`` to its end (or void it) without sending EndMatch: ``announce_end`` does.

    Every bot failure becomes a recorded fault; this never raises because of a bot. Cancelling
    the caller cancels the RPC in flight. ``metrics``, when given, counts the match, its
    decisions, call latencies and faults. Once ``stop`` is set the match is aborted at the next
    move boundary and its record (status ABORTED, moves so far) returned.
    """
    game_metrics = metrics.for_game(spec.game.type.name) if metrics is not None else None
    with pool.holding(spec.endpoints):  # no channel of the match closes while it plays
        if game_metrics is None:
            return await _play_match(spec, pool, on_move, None, stop)
        game_metrics.started.inc()
        game_metrics.in_flight.inc()
        started = time.perf_counter()
        try:
            played = await _play_match(spec, pool, on_move, game_metrics, stop)
        finally:
            game_metrics.in_flight.dec()
    game_metrics.duration.observe(time.perf_counter() - started)
    game_metrics.finished[_OUTCOME_NAMES[played.record.status]].inc()
    if played.record.status == record_pb2.MATCH_STATUS_FORFEITED:
        game_metrics.forfeits.inc()
    return played


async def announce_end(pool: BotPool, played: PlayedMatch) -> None:
    """Send each seat its EndMatch (at most once per match: call it once the result is final).

    A bot that does not answer within ``NOTIFY_TIMEOUT_S`` is not asked again."""
    if not played.end_requests:
        return  # never told the match started
    with pool.holding(played.endpoints) as bots:  # announced after the commit: still held
        await _gather(
            [
                partial(bot.end_match, request, NOTIFY_TIMEOUT_S)
                for bot, request in zip(bots, played.end_requests, strict=True)
            ]
        )


_OUTCOME_NAMES = {
    record_pb2.MATCH_STATUS_COMPLETED: "completed",
    record_pb2.MATCH_STATUS_FORFEITED: "forfeited",
    record_pb2.MATCH_STATUS_VOIDED: "voided",
    record_pb2.MATCH_STATUS_ABORTED: "aborted",
}


async def _play_match(
    spec: MatchSpec,
    pool: BotPool,
    on_move: MoveListener | None,
    game_metrics: GameMetrics | None,
    stop: trio.Event | None,
) -> PlayedMatch:
    started_at = _now_us()
    game, codec = spec.game, codec_for(spec.game)
    match = Match(game, spec.seed, spec.time_control, spec.policy)
    bots = [pool.get(target) for target in spec.endpoints]
    settings = game_settings(game)

    infos = await _gather([partial(bot.get_info, NOTIFY_TIMEOUT_S) for bot in bots])
    seats = [
        record_pb2.SeatAssignment(
            seat=seat,
            endpoint=bot.target,
            bot_name=info.response.name if info.response else "",
            bot_version=info.response.version if info.response else "",
        )
        for seat, (bot, info) in enumerate(zip(bots, infos, strict=True))
    ]
    unreachable = [seat for seat, info in enumerate(infos) if info.fault is not None]
    end_requests: list[bot_service_pb2.EndMatchRequest] = []
    if unreachable and spec.policy.void_if_unreachable_at_start:
        details = "; ".join(
            f"seat {seat} ({bots[seat].target}): {infos[seat].fault.detail}"  # type: ignore[union-attr]
            for seat in unreachable
        )
        match.void(f"unreachable at the start: {details}")
    else:
        control = bot_service_pb2.TimeControl(
            move_time_ms=spec.time_control.move_time_ms,
            time_bank_ms=spec.time_control.time_bank_ms,
        )
        await _gather(
            [
                partial(
                    bot.start_match,
                    bot_service_pb2.StartMatchRequest(
                        match_id=spec.match_id, settings=settings, seat=seat, time_control=control
                    ),
                    NOTIFY_TIMEOUT_S,
                )
                for seat, bot in enumerate(bots)
            ]
        )
        requests = RequestEncoder(codec, settings, spec.match_id)
        while not match.is_over:
            if stop is not None and stop.is_set():
                match.abort("the referee stopped before the end")
                break
            log = await _play_one_move(match, bots, codec, requests, game_metrics)
            if on_move is not None:
                on_move(match, log)
        end_requests = _end_requests(match, spec.match_id)
    record = match_record(
        match,
        codec,
        match_id=spec.match_id,
        seats=seats,
        started_at_us=started_at,
        finished_at_us=_now_us(),
        referee_version=__version__,
    )
    return PlayedMatch(record, tuple(spec.endpoints), tuple(end_requests))


async def _play_one_move(
    match: Match,
    bots: Sequence[BotEndpoint],
    codec: GameCodec,
    requests: RequestEncoder,
    game_metrics: GameMetrics | None,
) -> MoveLog:
    seat = match.to_act()
    request = requests.encode(match)  # bytes: see RequestEncoder
    result = await bots[seat].choose_action(request, match.deadline_ms(seat) / 1000)
    log = record_answer(match, codec, result)
    if game_metrics is not None:
        result_name = log.fault.kind.name.lower() if log.fault else "ok"
        game_metrics.decisions.inc()
        game_metrics.call_duration[result_name].observe(log.elapsed_us / 1e6)
        if log.fault:
            game_metrics.faults[result_name].inc()
    return log


def record_answer(match: Match, codec: GameCodec, result: CallResult) -> MoveLog:
    """Apply what the seat to act answered: its action if the bytes hold one of this game (a
    legal one, else ``ILLEGAL_ACTION``), else the fault they are. Pure; never raises for any
    answer a bot can send."""
    raw, elapsed_us = result.response, result.elapsed_us  # the answer's bytes (or None)
    if result.fault is not None:
        return match.fault(result.fault, elapsed_us)
    action = codec.cached_answer(raw)  # the usual case: a legal action's bytes, copied
    if action is not None:
        return match.play(action, elapsed_us)
    try:
        action = codec.decode_answer(raw)  # parsed strictly
    except MalformedResponseError as error:
        return match.fault(malformed(error), elapsed_us)
    log = match.play(action, elapsed_us)
    if log.fault is None:
        codec.remember_answer(raw, action)
    return log


def _end_requests(match: Match, match_id: str) -> list[bot_service_pb2.EndMatchRequest]:
    outcome = match.outcome()
    wire_outcome = record_pb2.MatchOutcome(
        scores=outcome.scores if outcome else (), ranks=outcome.ranks if outcome else ()
    )
    return [
        bot_service_pb2.EndMatchRequest(
            match_id=match_id,
            seat=seat,
            status=match.status.value,  # type: ignore[arg-type]
            outcome=wire_outcome,
        )
        for seat in range(match.game.num_seats)
    ]
