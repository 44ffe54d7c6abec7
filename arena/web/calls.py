"""The web's way into the arena: the gRPC API's handlers, called in-process as a stranger.

``ArenaServicer`` is the one place that validates a request, reads the store and decides what
a caller may see (``arena.public``, the duplicate-set secrecy of records and watches). The web
calls those same handlers with a ``WebContext`` in place of gRPC's: no token (the public view),
and ``abort`` raises ``ApiError`` instead of ending an RPC. Handlers are asyncio coroutines on
the host loop; the web runs on trio, its guest, so each call crosses through ``await_aio``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, NoReturn, TypeVar

import grpc
import trio

from arena import fields
from arena.service import ArenaServicer
from arena.store.calls import call_store
from arena.store.repository import StoreError, withheld_message
from cardarena.arena.v1 import arena_service_pb2 as pb
from referee.aio_bridge import await_aio

T = TypeVar("T")

HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.UNIMPLEMENTED: 501,
}
"""The HTTP status of each gRPC status a handler ends with (anything else: 500)."""


class ApiError(Exception):
    """A handler refused the request: its gRPC status and its one-line detail."""

    def __init__(self, code: grpc.StatusCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail

    @property
    def http_status(self) -> int:
        """The HTTP status that says the same."""
        return HTTP_STATUS.get(self.code, 500)


class WebContext:
    """What ``ArenaServicer`` handlers read of a ``grpc.aio.ServicerContext``, for a stranger
    reaching them over the web."""

    def __init__(self, peer: str = "web") -> None:
        self._peer = peer

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        """No token: the web shows the public view."""
        return ()

    def peer(self) -> str:
        """The browser's address, as gRPC would name it."""
        return self._peer

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        """End the call with ``ApiError``."""
        raise ApiError(code, details)


class ArenaCalls:
    """Read-only calls of the arena API, awaited from trio."""

    def __init__(self, servicer: ArenaServicer) -> None:
        self.servicer = servicer

    async def _unary(self, handler: Callable[[Any, Any], Awaitable[T]], request: Any) -> T:
        context: Any = WebContext()  # stands in for grpc.aio.ServicerContext
        return await await_aio(lambda: handler(request, context))

    async def ladders(self) -> pb.ListLaddersResponse:
        """``ListLadders``."""
        return await self._unary(self.servicer.ListLadders, pb.ListLaddersRequest())

    async def standings(self, request: pb.GetStandingsRequest) -> pb.GetStandingsResponse:
        """``GetStandings``."""
        return await self._unary(self.servicer.GetStandings, request)

    async def profile(self, request: pb.GetBotProfileRequest) -> pb.GetBotProfileResponse:
        """``GetBotProfile``."""
        return await self._unary(self.servicer.GetBotProfile, request)

    async def record(self, match_id: str) -> pb.GetMatchRecordResponse:
        """``GetMatchRecord``."""
        request = pb.GetMatchRecordRequest(match_id=match_id)
        return await self._unary(self.servicer.GetMatchRecord, request)

    async def matches(self, request: pb.ListMatchesRequest) -> pb.ListMatchesResponse:
        """``ListMatches``."""
        return await self._unary(self.servicer.ListMatches, request)

    async def listed_match(self, match_id: str) -> pb.ListedMatch:
        """One match as ``ListMatches`` lists it (``Listings.match``, the listing's own code)."""
        problem = fields.identifier("match_id", match_id)
        if problem is not None:
            raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, problem)
        servicer = self.servicer
        try:
            return await await_aio(
                lambda: call_store(
                    servicer.store, servicer.arena.metrics, servicer.listings.match, match_id
                )
            )
        except StoreError as error:
            raise ApiError(grpc.StatusCode[error.code], str(error)) from None

    async def withheld(self, match_id: str) -> str:
        """Why the live moves of match ``match_id`` may not be watched ('' if they may): another
        rotation of its duplicate deal is unfinished. The rule and message ``WatchMatch``
        refuses with (``Store.rotations_unfinished``), for pages to leave out what it would
        refuse rather than link to it."""
        servicer = self.servicer
        unfinished = await await_aio(
            lambda: call_store(
                servicer.store,
                servicer.arena.metrics,
                servicer.store.rotations_unfinished,
                match_id,
            )
        )
        return withheld_message(match_id, unfinished) if unfinished else ""

    async def tournaments(self) -> pb.ListTournamentsResponse:
        """``ListTournaments``."""
        return await self._unary(self.servicer.ListTournaments, pb.ListTournamentsRequest())

    async def tournament(self, key: str) -> pb.GetTournamentResponse:
        """``GetTournament``."""
        request = pb.GetTournamentRequest(tournament=key)
        return await self._unary(self.servicer.GetTournament, request)

    async def games(self) -> pb.ListGamesResponse:
        """``ListGames``."""
        return await self._unary(self.servicer.ListGames, pb.ListGamesRequest())

    async def watch(self, match_id: str) -> AsyncGenerator[pb.WatchMatchResponse]:
        """``WatchMatch``: its events one by one, relayed ones included (the handler relays a
        match another arena process plays); leaving the loop early closes the stream."""
        context: Any = WebContext()
        stream: Any = self.servicer.WatchMatch(pb.WatchMatchRequest(match_id=match_id), context)
        try:
            while True:
                try:
                    event = await await_aio(stream.__anext__)
                except StopAsyncIteration:
                    return
                yield event
        finally:
            # Cancelled mid-read, the read's asyncio task is cancelled and the stream ends by
            # itself (closing it then says it is still running); else close it here.
            with trio.CancelScope(shield=True), contextlib.suppress(RuntimeError):
                await await_aio(stream.aclose)
