"""The ArenaService gRPC API: validates every request, then asks the store or the arena.

Handlers are ``grpc.aio`` coroutines on the asyncio host loop; store calls run on the
database's own thread(s). Tokens arrive as ``authorization: Bearer <token>`` metadata. Every
refusal is a gRPC status with a detail that says what to fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio

from arena import fields
from arena.bot_transport import (
    OUTBOUND,
    OUTBOUND_UNNAMED,
    address_part,
    stored_endpoint,
    updated_endpoint,
)
from arena.endpoint_guard import EndpointRefused, GuardedTarget
from arena.ladder import Arena
from arena.limits import (
    RETRY_AFTER,
    ApiLimits,
    bearer_token,
    is_admin_token,
    peer_key,
    whole_seconds,
)
from arena.peers import PeerChannels
from arena.public import (
    STRANGER,
    Viewer,
    bot_view,
    profile_view,
    record_view,
    standings_view,
)
from arena.ratings import INITIAL_SIGMA
from arena.store.calls import call_store
from arena.store.claims import MAX_MATCHES_PER_BOT_LIMIT
from arena.store.listings import MAX_PAGE, TOKEN_CHARS, Listings, MatchQuery
from arena.store.repository import (
    DETAIL_LIMIT,
    SEARCH_CHARS,
    BotRow,
    BotState,
    OwnerLimits,
    Store,
    StoreError,
    withheld_message,
)
from arena.store.tournaments import TournamentRow, Tournaments
from arena.tournament import MAX_ENTRANTS, TournamentError
from arena.tournament_api import (
    config_problem,
    crosstable_of,
    label,
    plan_of,
    tournament_message,
    with_defaults,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.arena.v1 import arena_service_pb2_grpc
from cardarena.game.v1 import options_pb2, record_pb2
from referee.bot_stream import StreamBot
from referee.codec.common import game_description, option_value
from referee.games.api import RulesError
from referee.games.registry import (
    STATE_CLASSES,
    duplicate_settings,
    game_from_settings,
    game_types,
)

log = logging.getLogger("arena.service")
Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")

STATE_NAMES = {
    pb.BOT_STATE_ACTIVE: BotState.ACTIVE,
    pb.BOT_STATE_PAUSED: BotState.PAUSED,
    pb.BOT_STATE_RETIRED: BotState.RETIRED,
}


PHASE_FILTERS = {
    pb.MATCH_PHASE_UNSPECIFIED: ("playing", "finished"),
    pb.MATCH_PHASE_PLAYING: ("playing",),
    pb.MATCH_PHASE_FINISHED: ("finished",),
}
"""What each ListMatchesRequest.phase lists."""

RELAYED_BY = "cardarena-relayed-by"
"""Metadata of a WatchMatch relayed from another arena process (its worker id): the process
asked never relays it again, so a relay is one hop whatever the workers table says."""
RELAY_CONNECT_S = 3.0
"""How long a relay waits for the playing process's API before answering from the store."""
RELAY_CHECK_S = 10.0
"""A relayed stream quiet for this long checks that its process still plays the match; two
checks in a row that find it does not end the relay (the store tells the end)."""

LADDER_BOUNDS = {
    "move_time_ms": (1, 600_000),
    "time_bank_ms": (0, 3_600_000),
    "max_faults": (0, 1_000),
    "concurrency": (1, 10_000),
    "max_matches_per_bot": (0, MAX_MATCHES_PER_BOT_LIMIT),
}
"""Each numeric LadderConfig field's accepted range (inclusive); ``max_matches_per_bot`` 0 is
the default (``DEFAULT_MAX_MATCHES_PER_BOT``)."""

LADDER_REAL_BOUNDS = {
    "min_sigma": (0.0, INITIAL_SIGMA),
    "sigma_growth_per_day": (0.0, INITIAL_SIGMA),
}
"""Each real-valued LadderConfig field's accepted range (inclusive): rating options."""


async def _abort(context: Context, code: grpc.StatusCode, detail: str) -> NoReturn:
    await context.abort(code, detail)
    raise AssertionError("abort returned")


async def _require(context: Context, *problems: str | None) -> None:
    """INVALID_ARGUMENT with the first problem of ``fields`` checks, if any."""
    problem = fields.first(*problems)
    if problem is not None:
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, problem)


def _token(context: Context) -> str | None:
    return bearer_token(context.invocation_metadata())


@dataclass
class _Relayed:
    """How a relayed watch went: move events relayed, and whether the playing process ended
    the stream itself."""

    moves: int = 0
    ended: bool = False


class ArenaServicer(arena_service_pb2_grpc.ArenaServiceServicer):
    """Implements ``cardarena.arena.v1.ArenaService``."""

    def __init__(
        self,
        store: Store,
        arena: Arena,
        admin_token: str,
        limits: ApiLimits | None = None,
        peers: PeerChannels | None = None,
    ) -> None:
        self.store = store
        self.arena = arena
        self.admin_token = admin_token
        self.limits = limits or ApiLimits()
        self.peers = PeerChannels() if peers is None else peers  # empty is falsy: no `or`
        self.listings = Listings(store.db)
        self.tournaments = Tournaments(store.db, store.clock)

    async def _call(self, context: Context, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await call_store(self.store, self.arena.metrics, fn, *args)
        except StoreError as error:
            trailing: tuple[tuple[str, str], ...] = ()
            if error.code == "RESOURCE_EXHAUSTED":
                seconds = whole_seconds(error.retry_after_s or 60.0)
                trailing = ((RETRY_AFTER, str(seconds)),)
            await context.abort(grpc.StatusCode[error.code], str(error), trailing)
            raise AssertionError("abort returned") from None

    async def _bot_id(self, context: Context, reference: str) -> str:
        """The id of the bot a request names: its id, or ``OWNER/NAME``."""
        if "/" not in reference:
            return reference
        return await self._call(context, self.store.bot_id_of, reference)

    def _is_admin(self, context: Context) -> bool:
        return is_admin_token(_token(context), self.admin_token)

    async def _viewer(self, context: Context) -> Viewer:
        """Who is asking, decided once per read: what ``arena.public`` lets it see."""
        if self._is_admin(context):
            return Viewer(admin=True)
        token = _token(context)
        if not token:
            return STRANGER
        return Viewer(owner=await self._call(context, self.store.token_owner, token))

    async def _record_for(
        self, context: Context, record: record_pb2.MatchRecord, viewer: Viewer
    ) -> record_pb2.MatchRecord:
        """A match record as ``viewer`` may see it."""
        if viewer.admin:
            return record
        owners = await self._call(context, self.store.seat_owners, record.match_id)
        return record_view(record, owners, viewer)

    async def _require_admin(self, context: Context, what: str) -> None:
        if not self._is_admin(context):
            detail = f"{what} needs the admin token"
            await _abort(context, grpc.StatusCode.PERMISSION_DENIED, detail)

    def _owner_limits(self, context: Context) -> OwnerLimits:
        """What this caller's registration may do: the admin is not limited."""
        if self._is_admin(context):
            return OwnerLimits()
        config = self.limits.config
        peer = peer_key(context.peer())

        def new_owner() -> None:
            if not config.registration_open:
                raise StoreError(
                    "PERMISSION_DENIED",
                    "registration is closed on this arena: its operator creates owners "
                    "(arena create-owner); register with the token you were given",
                )
            wait = self.limits.peer_new_owners.acquire(peer)
            if wait:
                raise StoreError(
                    "RESOURCE_EXHAUSTED",
                    f"too many new owners from your address (limit {config.peer_new_owners})",
                    retry_after_s=wait,
                )

        return OwnerLimits(
            new_owner=new_owner,
            max_bots=config.owner_bots,
            per_hour=config.owner_registrations_per_hour,
        )

    async def _guarded(self, context: Context, endpoint: str) -> GuardedTarget:
        """The endpoint checked by the guard (parsed, resolved, every address allowed), or
        INVALID_ARGUMENT with a reason that says nothing about the target."""
        try:
            target = await self.arena.guard.check(address_part(endpoint))
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
        await _require(
            context,
            fields.name("owner", request.owner),
            fields.name("name", request.name),
            fields.version(request.version),
            fields.endpoint_length(request.endpoint),
        )
        if request.game not in STATE_CLASSES:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown game {fields.shown(request.game)}; known: {', '.join(STATE_CLASSES)}",
            )
        try:
            endpoint = stored_endpoint(request.transport, request.endpoint)
        except ValueError as error:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        address_key = None
        if endpoint != OUTBOUND_UNNAMED:  # an outbound bot has no address to check
            address_key = (await self._guarded(context, endpoint)).address_key
        bot, token = await self._call(
            context,
            self.store.register_bot,
            request.owner,
            _token(context),
            request.name,
            request.game,
            endpoint,
            request.version or "0",
            address_key,
            self._owner_limits(context),
        )
        return pb.RegisterBotResponse(bot=bot.to_proto(), owner_token=token or "")

    async def UpdateBot(
        self, request: pb.UpdateBotRequest, context: Context
    ) -> pb.UpdateBotResponse:
        await _require(
            context,
            fields.bot_reference("bot_id", request.bot_id),
            fields.version(request.version),
            fields.endpoint_length(request.endpoint),
        )
        if request.transport not in pb.BotTransport.values():
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "unknown transport")
        bot_id = await self._bot_id(context, request.bot_id)
        endpoint = None
        if request.endpoint or request.transport:
            current = await self._call(context, self.store.bot, bot_id)
            try:
                endpoint = updated_endpoint(current.endpoint, request.transport, request.endpoint)
            except ValueError as error:
                await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        address = None
        if endpoint and endpoint != OUTBOUND_UNNAMED:  # an outbound bot has no address
            address = (await self._guarded(context, endpoint)).address_key
        bot = await self._call(
            context,
            self.store.update_bot,
            bot_id,
            _token(context),
            endpoint or "",
            request.version,
            address,
        )
        return pb.UpdateBotResponse(bot=bot.to_proto())

    async def CreateBotKey(
        self, request: pb.CreateBotKeyRequest, context: Context
    ) -> pb.CreateBotKeyResponse:
        await _require(context, fields.bot_reference("bot_id", request.bot_id))
        bot_id = await self._bot_id(context, request.bot_id)
        key = await self._call(context, self.store.create_bot_key, bot_id, _token(context))
        return pb.CreateBotKeyResponse(bot_key=key)

    async def RevokeBotKey(
        self, request: pb.RevokeBotKeyRequest, context: Context
    ) -> pb.RevokeBotKeyResponse:
        await _require(context, fields.bot_reference("bot_id", request.bot_id))
        bot_id = await self._bot_id(context, request.bot_id)
        await self._call(context, self.store.revoke_bot_key, bot_id, _token(context))
        return pb.RevokeBotKeyResponse()

    async def SetBotState(
        self, request: pb.SetBotStateRequest, context: Context
    ) -> pb.SetBotStateResponse:
        await _require(context, fields.bot_reference("bot_id", request.bot_id))
        state = STATE_NAMES.get(request.state)
        if state is None:
            await _abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "state must be PAUSED, ACTIVE or RETIRED"
            )
        bot = await self._call(
            context,
            self.store.set_bot_state,
            await self._bot_id(context, request.bot_id),
            _token(context),
            state,
        )
        if state == BotState.RETIRED:  # its channel closes now (once no match holds it)
            self.arena.forget_endpoint(bot.endpoint)
        return pb.SetBotStateResponse(bot=bot.to_proto())

    async def CreateLadder(
        self, request: pb.CreateLadderRequest, context: Context
    ) -> pb.CreateLadderResponse:
        await self._require_admin(context, "creating ladders")
        config = request.config
        await _require(
            context,
            fields.name("ladder name", config.name),
            fields.identifier("settings.game", config.settings.game),
            fields.options(config.settings.options),
        )
        settings = config.settings
        if config.duplicate_deals:  # e.g. Mau-Mau's reshuffles seeded from the deal
            settings = duplicate_settings(settings)
        try:
            game = game_from_settings(settings)
        except (RulesError, ValueError) as error:
            await _abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, f"settings: {fields.clipped(str(error))}"
            )
        await _require(
            context,
            *(
                fields.whole(field, getattr(config, field), low, high)
                for field, (low, high) in LADDER_BOUNDS.items()
            ),
            *(
                fields.between(field, getattr(config, field), low, high)
                for field, (low, high) in LADDER_REAL_BOUNDS.items()
            ),
            None
            if config.new_version_rating in pb.NewVersionRating.values()
            else f"new_version_rating: unknown value {config.new_version_rating}",
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
        await _require(
            context,
            fields.identifier("ladder", request.ladder),
            fields.text("search", request.search, SEARCH_CHARS),
        )
        ladder = await self._call(context, self.store.ladder, request.ladder)
        standings = await self._call(
            context,
            self.store.standings,
            ladder.ladder_id,
            request.limit,
            request.offset,
            request.search,
        )
        total = await self._call(context, self.store.count_entrants, ladder.ladder_id)
        found = (
            await self._call(context, self.store.count_entrants, ladder.ladder_id, request.search)
            if request.search
            else total
        )
        await self._mark_connected(context, [standing.bot for standing in standings])
        response = pb.GetStandingsResponse(
            ladder=ladder, standings=standings, total=total, found=found
        )
        return standings_view(response, await self._viewer(context))

    async def _mark_connected(self, context: Context, bots: list[pb.Bot]) -> None:
        """Say which outbound bots have a stream open to a live arena process (any)."""
        outbound = [bot for bot in bots if bot.transport == pb.BOT_TRANSPORT_OUTBOUND]
        if not outbound:
            return
        ids = [bot.bot_id for bot in outbound]
        connected = await self._call(context, self.arena.coordination.connected_bots, ids)
        for bot in outbound:
            bot.connected = bot.bot_id in connected

    def is_admin(self, context: Context) -> bool:
        """Whether the call carries the admin token (what arena peers send)."""
        return self._is_admin(context)

    async def accept_bot_stream(self, bot_id: str, context: Context) -> StreamBot:
        """Whose ConnectBot stream this is (``referee.bot_stream.connect_bot_handler``): the
        bot's key or its owner's token, an outbound bot not retired; else the call is
        aborted."""
        token = _token(context)
        if not token:
            await _abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "ConnectBot needs the bot's key or its owner's token",
            )
        await _require(context, fields.identifier("bot_id", bot_id))
        bot = await self._call(context, self.store.connecting_bot, bot_id, token)
        if bot is None:
            await _abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "neither this bot's key nor its owner's token",
            )
        if not bot.endpoint.startswith(OUTBOUND):
            detail = "this bot is registered to be dialled; only outbound bots connect"
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, detail)
        if bot.state == "retired":
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "this bot is retired")
        stream_bot = self.arena.pool.get(bot.endpoint)
        assert isinstance(stream_bot, StreamBot)
        return stream_bot

    async def GetBotProfile(
        self, request: pb.GetBotProfileRequest, context: Context
    ) -> pb.GetBotProfileResponse:
        await _require(context, fields.bot_reference("bot_id", request.bot_id))
        recent = request.recent_matches or 20
        bot_id = await self._bot_id(context, request.bot_id)
        profile = await self._call(context, self.store.profile, bot_id, min(recent, 500))
        return profile_view(profile, await self._viewer(context))

    async def GetMatchRecord(
        self, request: pb.GetMatchRecordRequest, context: Context
    ) -> pb.GetMatchRecordResponse:
        await _require(context, fields.identifier("match_id", request.match_id))
        record = await self._call(context, self.store.match_record, request.match_id)
        shown = await self._record_for(context, record, await self._viewer(context))
        return pb.GetMatchRecordResponse(record=shown)

    async def ListMatches(
        self, request: pb.ListMatchesRequest, context: Context
    ) -> pb.ListMatchesResponse:
        await _require(
            context,
            fields.identifier("ladder", request.ladder, required=False),
            fields.bot_reference("bot_id", request.bot_id, required=False),
            fields.whole("page_size", request.page_size, 0, MAX_PAGE),
            fields.text("page_token", request.page_token, TOKEN_CHARS),
        )
        phases = PHASE_FILTERS.get(request.phase)
        if phases is None:
            await _abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "phase must be PLAYING or FINISHED"
            )
        bot_id = await self._bot_id(context, request.bot_id)
        query = MatchQuery(request.ladder, bot_id, phases, request.page_size, request.page_token)
        matches, token = await self._call(context, self.listings.matches, query)
        return pb.ListMatchesResponse(matches=matches, next_page_token=token)

    async def ConnectBot(
        self, request_iterator: Any, context: Context
    ) -> AsyncIterator[pb.ConnectBotResponse]:
        """Served in bytes by ``referee.bot_stream.connect_bot_handler`` (see arena/server.py,
        which registers it over this method); never reached."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "ConnectBot is not served here")
        yield pb.ConnectBotResponse()  # never reached: abort raises

    async def RelayBot(
        self, request_iterator: Any, context: Context
    ) -> AsyncIterator[pb.RelayBotResponse]:
        """Served in bytes by ``arena.bot_relay.relay_bot_handler`` (registered over this
        method in arena/server.py); never reached."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "RelayBot is not served here")
        yield pb.RelayBotResponse()  # never reached: abort raises

    async def WatchMatch(
        self, request: pb.WatchMatchRequest, context: Context
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        await _require(context, fields.identifier("match_id", request.match_id))
        match_id = request.match_id
        viewer = await self._viewer(context)
        live = self.arena.live.get(match_id)
        holder = None if live is not None else await self._remote_holder(context, match_id)
        if live is not None or holder is not None:
            # A rotation's moves show the cards of its deal, which other rotations still
            # play: no live watching until every other rotation of the deal has finished.
            unfinished = await self._call(context, self.store.rotations_unfinished, match_id)
            if unfinished:
                await _abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    withheld_message(match_id, unfinished),
                )
        if holder is not None:
            async for event in self._relay(context, match_id, holder, viewer):
                yield event
            return
        if live is None:
            record = await self._call(context, self.store.match_record, match_id)
            yield pb.WatchMatchResponse(finished=await self._record_for(context, record, viewer))
            return
        queue: asyncio.Queue[pb.WatchMatchResponse | None] = asyncio.Queue()
        backlog = list(live.events)
        live.subscribers.append(queue)
        try:
            for event in backlog:
                yield await self._event_for(context, event, viewer)
            while (next_event := await queue.get()) is not None:
                yield await self._event_for(context, next_event, viewer)
        finally:
            live.subscribers.remove(queue)

    async def _remote_holder(self, context: Context, match_id: str) -> tuple[str, str] | None:
        """The other live arena process playing ``match_id`` (worker id, API address), if
        any, unless this call is itself a relay."""
        if any(key == RELAYED_BY for key, _ in context.invocation_metadata() or ()):
            return None
        holder = await self._call(context, self.arena.coordination.address_of_holder, match_id)
        if holder is None or holder[0] == self.arena.config.worker_id or not holder[1]:
            return None  # here, it has just ended (not live any more), or it has no address
        return holder

    async def _still_held(self, match_id: str, worker_id: str) -> bool:
        """Whether ``worker_id`` is still alive and playing ``match_id`` (an unreadable store
        counts as yes: the relay goes on waiting)."""
        try:
            holder = await call_store(
                self.store, self.arena.metrics, self.arena.coordination.address_of_holder, match_id
            )
        except Exception:
            log.warning("relay of %s: cannot read who plays it", match_id, exc_info=True)
            return True
        return holder is not None and holder[0] == worker_id

    async def _relay(
        self, context: Context, match_id: str, holder: tuple[str, str], viewer: Viewer
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        """Follow a match another arena process plays: that process's move events, then the
        end from this process's store as the local path shows it to ``viewer`` (what a viewer
        sees does not depend on the process it reached)."""
        relayed = _Relayed()
        async for event in self._moves_from(match_id, holder, relayed):
            yield event
        end = await self._stored_end(match_id, viewer, context)
        if end is not None:
            yield end
        elif relayed.ended:
            return  # no record to show: given back to the queue, or withheld
        elif relayed.moves:  # it stopped answering mid-match; the match will be played again
            await _abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"the arena process playing match {match_id!r} stopped answering before its end",
            )
        elif await self._still_held(match_id, holder[0]):
            await _abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"match {match_id!r} is played by another arena process, which this one "
                "cannot reach now: try again",
            )
        else:  # it ended meanwhile: what the store says, as for any match not live
            record = await self._call(context, self.store.match_record, match_id)
            yield pb.WatchMatchResponse(finished=await self._record_for(context, record, viewer))

    async def _moves_from(
        self, match_id: str, holder: tuple[str, str], relayed: _Relayed
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        """The move events of the playing process's WatchMatch stream, counted in
        ``relayed``. The call carries the admin token, so that process does not count the
        relay against this one's address (this process counted the viewer's stream), and
        ``RELAYED_BY``, so it is never relayed again. Ends without an error when the process
        cannot be reached within ``RELAY_CONNECT_S``, fails, or stops playing the match."""
        worker_id, address = holder
        metadata = (
            ("authorization", f"Bearer {self.admin_token}"),
            (RELAYED_BY, self.arena.config.worker_id),
        )
        async with self.peers.holding(address) as peer:
            if not await peer.ready(RELAY_CONNECT_S):
                log.info("relay of %s: %s at %s not reachable", match_id, worker_id, address)
                return
            call = peer.stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id), metadata=metadata)
            read: asyncio.Future[Any] = asyncio.ensure_future(call.read())
            misses = 0
            try:
                while misses < 2:
                    done, _ = await asyncio.wait({read}, timeout=RELAY_CHECK_S)
                    if not done:  # quiet: is the match still that process's?
                        held = await self._still_held(match_id, worker_id)
                        misses = 0 if held else misses + 1
                        continue
                    event = read.result()
                    if event is grpc.aio.EOF:
                        relayed.ended = True
                        return
                    if event.HasField("move"):  # the end comes from this process's store
                        relayed.moves += 1
                        yield event
                    read = asyncio.ensure_future(call.read())
            except grpc.aio.AioRpcError as error:
                detail = fields.clipped(error.details() or "")
                log.info("relay of %s from %s: %s %s", match_id, worker_id, error.code(), detail)
            finally:
                call.cancel()
                read.cancel()
                with contextlib.suppress(BaseException):
                    await read

    async def _stored_end(
        self, match_id: str, viewer: Viewer, context: Context
    ) -> pb.WatchMatchResponse | None:
        """The ``finished`` event of a match as ``viewer`` may see it, from the store; None if
        it has no record to show (not finished, or withheld while its deal is unfinished)."""
        try:
            record = await call_store(
                self.store, self.arena.metrics, self.store.match_record, match_id
            )
        except StoreError:
            return None
        return pb.WatchMatchResponse(finished=await self._record_for(context, record, viewer))

    async def _event_for(
        self, context: Context, event: pb.WatchMatchResponse, viewer: Viewer
    ) -> pb.WatchMatchResponse:
        """A watch event as ``viewer`` may see it: moves are public; the final record is
        shown like ``GetMatchRecord`` shows it (the event itself is shared by every watcher)."""
        if not event.HasField("finished"):
            return event
        return pb.WatchMatchResponse(
            finished=await self._record_for(context, event.finished, viewer)
        )

    # -- identity and operator controls ---------------------------------------------------------

    async def CreateOwner(
        self, request: pb.CreateOwnerRequest, context: Context
    ) -> pb.CreateOwnerResponse:
        await self._require_admin(context, "creating owners")
        await _require(context, fields.name("owner", request.owner))
        token = await self._call(context, self.store.create_owner, request.owner)
        return pb.CreateOwnerResponse(owner=request.owner, owner_token=token)

    async def RotateToken(
        self, request: pb.RotateTokenRequest, context: Context
    ) -> pb.RotateTokenResponse:
        await _require(context, fields.name("owner", request.owner))
        token = await self._call(
            context,
            self.store.rotate_token,
            request.owner,
            _token(context),
            self._is_admin(context),
        )
        return pb.RotateTokenResponse(owner_token=token)

    async def RevokeToken(
        self, request: pb.RevokeTokenRequest, context: Context
    ) -> pb.RevokeTokenResponse:
        await self._require_admin(context, "revoking a token")
        await _require(context, fields.name("owner", request.owner))
        await self._call(context, self.store.revoke_token, request.owner)
        return pb.RevokeTokenResponse()

    async def AdminSetBotState(
        self, request: pb.AdminSetBotStateRequest, context: Context
    ) -> pb.AdminSetBotStateResponse:
        await self._require_admin(context, "the operator's controls")
        state = STATE_NAMES.get(request.state)
        resume = state == BotState.ACTIVE
        await _require(
            context,
            fields.bot_reference("bot_id", request.bot_id),
            fields.text("reason", request.reason, fields.REASON_CHARS)
            if resume  # a reason is asked for taking a bot out, not for letting it back
            else fields.reason(request.reason),
        )
        if state is None:
            await _abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "state must be PAUSED, ACTIVE or RETIRED"
            )
        reason = request.reason or ("released" if resume else "")
        bot = await self._call(
            context,
            self.store.admin_set_bot_state,
            await self._bot_id(context, request.bot_id),
            state,
            reason,
        )
        return pb.AdminSetBotStateResponse(bot=bot.to_proto())

    async def BanOwner(self, request: pb.BanOwnerRequest, context: Context) -> pb.BanOwnerResponse:
        await self._require_admin(context, "banning an owner")
        await _require(context, fields.name("owner", request.owner), fields.reason(request.reason))
        paused = await self._call(context, self.store.ban_owner, request.owner, request.reason)
        return pb.BanOwnerResponse(bots_paused=paused)

    async def UnbanOwner(
        self, request: pb.UnbanOwnerRequest, context: Context
    ) -> pb.UnbanOwnerResponse:
        await self._require_admin(context, "lifting a ban")
        await _require(context, fields.name("owner", request.owner))
        released = await self._call(context, self.store.unban_owner, request.owner)
        return pb.UnbanOwnerResponse(bots_released=released)

    # -- parked matches --------------------------------------------------------------------------

    async def ListParkedMatches(
        self, request: pb.ListParkedMatchesRequest, context: Context
    ) -> pb.ListParkedMatchesResponse:
        await self._require_admin(context, "listing parked matches")
        limit = min(request.limit or 100, 1000)
        matches, total = await self._call(context, self.store.parked_matches, limit)
        return pb.ListParkedMatchesResponse(matches=matches, total=total)

    async def ListWorkers(
        self, request: pb.ListWorkersRequest, context: Context
    ) -> pb.ListWorkersResponse:
        await self._require_admin(context, "listing the arena's processes")
        workers = await self._call(context, self.arena.coordination.workers)
        leases = await self._call(context, self.arena.coordination.leaders)
        return pb.ListWorkersResponse(
            workers=[
                pb.Worker(
                    worker_id=w.worker_id,
                    roles=w.roles,
                    address=w.address,
                    host=w.host,
                    pid=w.pid,
                    started_at_us=w.started_at_us,
                    alive_until_us=w.alive_until_us,
                    draining=w.draining,
                    alive=w.alive,
                    matches_playing=w.matches_playing,
                )
                for w in workers
            ],
            leases=[
                pb.Lease(name=name, holder=holder, epoch=epoch, valid=valid)
                for name, (holder, epoch, valid) in sorted(leases.items())
            ],
        )

    async def RequeueMatch(
        self, request: pb.RequeueMatchRequest, context: Context
    ) -> pb.RequeueMatchResponse:
        await self._require_admin(context, "requeueing a match")
        await _require(context, fields.identifier("match_id", request.match_id))
        await self._call(context, self.store.requeue_parked, request.match_id)
        return pb.RequeueMatchResponse(match_id=request.match_id)

    async def VoidMatch(
        self, request: pb.VoidMatchRequest, context: Context
    ) -> pb.VoidMatchResponse:
        await self._require_admin(context, "voiding a match")
        await _require(context, fields.identifier("match_id", request.match_id))
        if len(request.reason) > DETAIL_LIMIT:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"reason must be at most {DETAIL_LIMIT} characters (got {len(request.reason)})",
            )
        await self._call(context, self.store.void_parked, request.match_id, request.reason)
        return pb.VoidMatchResponse(match_id=request.match_id)

    # -- tournaments -----------------------------------------------------------------------------

    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: Context
    ) -> pb.CreateTournamentResponse:
        await self._require_admin(context, "creating tournaments")
        config = with_defaults(request.config)
        await _require(context, config_problem(config, self.store.clock()))
        bots, settings = await self._tournament_entrants(context, config)
        await _require(
            context,
            fields.identifier("settings.game", settings.game),
            fields.options(settings.options),
        )
        if not settings.num_seats and settings.game in STATE_CLASSES:
            settings.num_seats = STATE_CLASSES[settings.game].game_type.min_seats
        try:
            game = game_from_settings(settings)
        except (RulesError, ValueError) as error:
            detail = f"settings: {fields.clipped(str(error))}"
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, detail)
        for bot in bots:
            if bot.game != settings.game:
                detail = f"entrant {label(bot)!r} plays {bot.game}, not {settings.game}"
                await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, detail)
            if bot.state not in (BotState.ACTIVE, BotState.PAUSED, BotState.UNHEALTHY):
                detail = f"entrant {label(bot)!r} is {bot.state}: it cannot play"
                await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, detail)
        stored = pb.TournamentConfig()
        stored.CopyFrom(config)
        del stored.entrants[:]
        stored.entrants.extend(bot.bot_id for bot in bots)
        stored.settings.CopyFrom(settings)
        stored.settings.options.clear()
        for name, value in game.options.items():
            stored.settings.options[name].CopyFrom(option_value(value))
        try:
            plan_of(stored, [label(bot) for bot in bots])
        except TournamentError as error:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        row = await self._call(context, self.tournaments.create, stored)
        return pb.CreateTournamentResponse(
            tournament=await self._tournament(context, row, full=True)
        )

    async def _tournament_entrants(
        self, context: Context, config: pb.TournamentConfig
    ) -> tuple[list[BotRow], options_pb2.GameSettings]:
        """The bots a configuration names (distinct) and the game settings it plays: its own,
        or the ladder's when it names a ladder and no game."""
        settings = options_pb2.GameSettings()
        settings.CopyFrom(config.settings)
        if config.ladder:
            ladder = await self._call(context, self.store.ladder, config.ladder)
            if not settings.game:
                settings.CopyFrom(ladder.config.settings)
            entrants = await self._call(context, self.store.entrants, ladder.ladder_id)
            if len(entrants) > MAX_ENTRANTS:
                detail = f"ladder {config.ladder!r} has more than {MAX_ENTRANTS} active bots"
                await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, detail)
            ids = sorted(entrant.bot_id for entrant in entrants)
        else:
            ids = [await self._bot_id(context, reference) for reference in config.entrants]
        if len(set(ids)) != len(ids):
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "an entrant is named twice")
        return [await self._call(context, self.store.bot, bot_id) for bot_id in ids], settings

    async def _tournament(self, context: Context, row: TournamentRow, full: bool) -> pb.Tournament:
        """A stored tournament on the wire, as a stranger sees its bots."""
        bots = [await self._call(context, self.store.bot, bot_id) for bot_id in row.config.entrants]
        entrants = [bot_view(bot.to_proto(), STRANGER) for bot in bots]
        played = await self._call(context, self.tournaments.played_sets, row.tournament_id)
        table = crosstable_of(row, [label(bot) for bot in entrants], played)
        return tournament_message(row, entrants, table, full)

    async def GetTournament(
        self, request: pb.GetTournamentRequest, context: Context
    ) -> pb.GetTournamentResponse:
        await _require(context, fields.identifier("tournament", request.tournament))
        row = await self._call(context, self.tournaments.get, request.tournament)
        return pb.GetTournamentResponse(tournament=await self._tournament(context, row, True))

    async def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: Context
    ) -> pb.ListTournamentsResponse:
        rows = await self._call(context, self.tournaments.listed)
        return pb.ListTournamentsResponse(
            tournaments=[await self._tournament(context, row, False) for row in rows]
        )
