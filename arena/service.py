"""The ArenaService gRPC API: validates every request, then asks the store or the arena.

Handlers are ``grpc.aio`` coroutines on the asyncio host loop; store calls run on the
database's own thread(s). Tokens arrive as ``authorization: Bearer <token>`` metadata. Every
refusal is a gRPC status with a detail that says what to fix.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio

from arena.endpoint_guard import EndpointRefused, GuardedTarget
from arena.ladder import Arena
from arena.store.calls import call_store
from arena.store.repository import (
    DEFAULT_MAX_MATCHES_PER_BOT,
    MAX_MATCHES_PER_BOT_LIMIT,
    Store,
    StoreError,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.arena.v1 import arena_service_pb2_grpc
from referee.codec.common import game_description, option_value, options_from_wire
from referee.games.api import RulesError
from referee.games.registry import STATE_CLASSES, game_types, make_game

log = logging.getLogger("arena.service")
Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
STATE_NAMES = {
    pb.BOT_STATE_ACTIVE: "active",
    pb.BOT_STATE_PAUSED: "paused",
    pb.BOT_STATE_RETIRED: "retired",
}


async def _abort(context: Context, code: grpc.StatusCode, detail: str) -> NoReturn:
    await context.abort(code, detail)
    raise AssertionError("abort returned")


def _token(context: Context) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value.removeprefix("Bearer ").strip()
    return None


class ArenaServicer(arena_service_pb2_grpc.ArenaServiceServicer):
    """Implements ``cardarena.arena.v1.ArenaService``."""

    def __init__(self, store: Store, arena: Arena, admin_token: str) -> None:
        self.store = store
        self.arena = arena
        self.admin_token = admin_token

    async def _call(self, context: Context, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await call_store(self.store, self.arena.metrics, fn, *args)
        except StoreError as error:
            await _abort(context, grpc.StatusCode[error.code], str(error))

    async def _guarded(self, context: Context, endpoint: str) -> GuardedTarget:
        """The endpoint checked by the guard (parsed, resolved, every address allowed), or
        INVALID_ARGUMENT with a reason that says nothing about the target."""
        try:
            target = await self.arena.guard.check(endpoint)
        except EndpointRefused as refused:
            log.debug("endpoint refused: %s", refused.detail)
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, refused.public)
        return target

    async def ListGames(
        self, request: pb.ListGamesRequest, context: Context
    ) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[game_description(t) for t in game_types()])

    async def RegisterBot(
        self, request: pb.RegisterBotRequest, context: Context
    ) -> pb.RegisterBotResponse:
        for field, value in (("owner", request.owner), ("name", request.name)):
            if not NAME.match(value):
                await _abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"{field} must be 1-64 letters, digits, '_', '.' or '-' (got {value!r})",
                )
        if request.game not in STATE_CLASSES:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown game {request.game!r}; known: {', '.join(STATE_CLASSES)}",
            )
        target = await self._guarded(context, request.endpoint)
        bot, token = await self._call(
            context,
            self.store.register_bot,
            request.owner,
            _token(context),
            request.name,
            request.game,
            request.endpoint,
            request.version or "0",
            target.address_key,
        )
        return pb.RegisterBotResponse(bot=bot.to_proto(), owner_token=token or "")

    async def UpdateBot(
        self, request: pb.UpdateBotRequest, context: Context
    ) -> pb.UpdateBotResponse:
        address = None
        if request.endpoint:
            address = (await self._guarded(context, request.endpoint)).address_key
        bot = await self._call(
            context,
            self.store.update_bot,
            request.bot_id,
            _token(context),
            request.endpoint,
            request.version,
            address,
        )
        return pb.UpdateBotResponse(bot=bot.to_proto())

    async def SetBotState(
        self, request: pb.SetBotStateRequest, context: Context
    ) -> pb.SetBotStateResponse:
        state = STATE_NAMES.get(request.state)
        if state is None:
            await _abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "state must be PAUSED, ACTIVE or RETIRED"
            )
        bot = await self._call(
            context, self.store.set_bot_state, request.bot_id, _token(context), state
        )
        if state == "retired":  # its channel closes now (once no match holds it)
            self.arena.forget_endpoint(bot.endpoint)
        return pb.SetBotStateResponse(bot=bot.to_proto())

    async def CreateLadder(
        self, request: pb.CreateLadderRequest, context: Context
    ) -> pb.CreateLadderResponse:
        token = _token(context) or ""
        if not hmac.compare_digest(token, self.admin_token):
            await _abort(
                context, grpc.StatusCode.PERMISSION_DENIED, "creating ladders needs the admin token"
            )
        config = request.config
        if not NAME.match(config.name):
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"ladder name must be 1-64 letters, digits, '_', '.' or '-' (got {config.name!r})",
            )
        try:
            game = make_game(
                config.settings.game,
                config.settings.num_seats,
                options_from_wire(config.settings.options),
            )
        except (RulesError, ValueError) as error:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"settings: {error}")
        if config.move_time_ms <= 0 or config.move_time_ms > 600_000:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "move_time_ms must be between 1 and 600000",
            )
        if config.concurrency > 10_000:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "concurrency must be <= 10000")
        if config.max_matches_per_bot > MAX_MATCHES_PER_BOT_LIMIT:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"max_matches_per_bot must be <= {MAX_MATCHES_PER_BOT_LIMIT} (0: the default, "
                f"{DEFAULT_MAX_MATCHES_PER_BOT})",
            )
        stored = pb.LadderConfig()
        stored.CopyFrom(config)
        stored.settings.options.clear()
        for name, value in game.options.items():
            stored.settings.options[name].CopyFrom(option_value(value))
        ladder_id = await self._call(context, self.store.create_ladder, stored)
        ladder = await self._call(context, self.store.ladder, ladder_id)
        return pb.CreateLadderResponse(ladder=ladder)

    async def ListLadders(
        self, request: pb.ListLaddersRequest, context: Context
    ) -> pb.ListLaddersResponse:
        return pb.ListLaddersResponse(ladders=await self._call(context, self.store.ladders))

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: Context
    ) -> pb.GetStandingsResponse:
        ladder = await self._call(context, self.store.ladder, request.ladder)
        standings = await self._call(
            context, self.store.standings, ladder.ladder_id, request.limit, request.offset
        )
        total = await self._call(context, self.store.count_entrants, ladder.ladder_id)
        return pb.GetStandingsResponse(ladder=ladder, standings=standings, total=total)

    async def GetBotProfile(
        self, request: pb.GetBotProfileRequest, context: Context
    ) -> pb.GetBotProfileResponse:
        recent = request.recent_matches or 20
        return await self._call(context, self.store.profile, request.bot_id, min(recent, 500))

    async def GetMatchRecord(
        self, request: pb.GetMatchRecordRequest, context: Context
    ) -> pb.GetMatchRecordResponse:
        record = await self._call(context, self.store.match_record, request.match_id)
        return pb.GetMatchRecordResponse(record=record)

    async def WatchMatch(
        self, request: pb.WatchMatchRequest, context: Context
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        live = self.arena.live.get(request.match_id)
        if live is None:
            record = await self._call(context, self.store.match_record, request.match_id)
            yield pb.WatchMatchResponse(finished=record)
            return
        queue: asyncio.Queue[pb.WatchMatchResponse | None] = asyncio.Queue()
        backlog = list(live.events)
        live.subscribers.append(queue)
        try:
            for event in backlog:
                yield event
            while (next_event := await queue.get()) is not None:
                yield next_event
        finally:
            live.subscribers.remove(queue)
