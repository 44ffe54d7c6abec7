"""The web UI's ASGI app: pages, the read-only JSON API under ``/api/v1`` and live streams.

Routes only parse and bound their query parameters, ask ``ArenaCalls`` (the gRPC API's own
handlers) and hand the answer to ``arena.web.pages`` (HTML) or ``arena.web.wire`` (JSON). A
refusal by a handler (``ApiError``) is the same HTTP status for a page and for the API, with
the handler's one-line detail.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import Message
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.limits import ApiLimits, peer_key, whole_seconds
from arena.tournament_api import crosstable_from_message
from arena.web import pages, tournament_pages
from arena.web.calls import ApiError, ArenaCalls
from arena.web.openapi import openapi_document
from arena.web.operator import OperatorView, Panel
from arena.web.wire import to_json
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2

STATIC = Path(__file__).parent / "static"
PAGE_SIZE = 50
"""Standings lines and matches per page."""
MAX_OFFSET = 10_000_000
LIVE_PAGES = 20
"""At most this many pages of 100 live matches are read for ``/live`` and the ladder counts."""
EVENTS = "/api/v1/matches/{}/events"
EXPORTS = ("json", "csv")
"""The downloads of a tournament's crosstable."""
TOURNAMENT_END = (
    "the match is over: its result is its tournament's (a tournament match keeps no record)"
)
"""Why a tournament match's live table ends with no replay."""
MAX_STREAMS = 256
"""Live-table streams served at once by this process; more get 503."""


class BadQuery(ApiError):
    """A query parameter that is not what its route accepts."""

    def __init__(self, detail: str) -> None:
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, detail)


def whole(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as a whole number in [low, high]."""
    raw = request.query_params.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise BadQuery(f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def text(request: Request, name: str, limit: int = 256) -> str:
    """Query parameter ``name`` as text of at most ``limit`` characters."""
    value = request.query_params.get(name, "").strip()
    if len(value) > limit:
        raise BadQuery(f"{name} must be at most {limit} characters")
    return value


PHASES = {
    "": pb.MATCH_PHASE_UNSPECIFIED,
    "playing": pb.MATCH_PHASE_PLAYING,
    "finished": pb.MATCH_PHASE_FINISHED,
}


def phase(request: Request) -> pb.MatchPhase.ValueType:
    value = request.query_params.get("phase", "")
    if value not in PHASES:
        raise BadQuery("phase must be playing or finished")
    return PHASES[value]


@dataclass
class Streams:
    """How many live-table streams are open."""

    open: int = 0


class WebApp:
    """The routes, over one arena's ``ArenaCalls`` and ``OperatorView``."""

    def __init__(
        self,
        calls: ArenaCalls,
        operator: OperatorView,
        bots_active: Callable[[], Awaitable[int]],
    ) -> None:
        self.calls = calls
        self.operator = operator
        self.bots_active = bots_active
        self.streams = Streams()

    # -- shared reads ----------------------------------------------------------------------------

    async def ladder_names(self) -> dict[str, str]:
        return {lad.ladder_id: lad.config.name for lad in (await self.calls.ladders()).ladders}

    async def live_matches(self, ladder: str = "") -> list[pb.ListedMatch]:
        """The matches being played (of ``ladder``, or all), at most ``LIVE_PAGES`` pages."""
        found: list[pb.ListedMatch] = []
        token = ""
        for _ in range(LIVE_PAGES):
            listed = await self.calls.matches(
                pb.ListMatchesRequest(
                    ladder=ladder, phase=pb.MATCH_PHASE_PLAYING, page_size=100, page_token=token
                )
            )
            found.extend(listed.matches)
            token = listed.next_page_token
            if not token:
                break
        return found

    @staticmethod
    def watchable(matches: list[pb.ListedMatch]) -> list[pb.ListedMatch]:
        """``matches`` less the rotations in play whose moves are withheld (``WatchMatch``
        refuses them while another rotation of their deal is unfinished: the listing marks
        them, for duplicate ladders and tournaments alike): a page links each match in play
        to its live table, and leaves out what it would refuse."""
        return [m for m in matches if not m.withheld]

    async def tournament_names(self, matches: list[pb.ListedMatch]) -> dict[str, str]:
        """Id → name of the tournaments ``matches`` are played in (none read if none is)."""
        if not any(m.tournament_id for m in matches):
            return {}
        listed = (await self.calls.tournaments()).tournaments
        return {t.tournament_id: t.config.name for t in listed}

    async def settings_in_play(self, listed: pb.ListedMatch) -> options_pb2.GameSettings | None:
        """The game settings a match in play is played with: its tournament's or its
        ladder's; None for a validation match (no settings to draw it with)."""
        if listed.tournament_id:
            return (await self.calls.tournament(listed.tournament_id)).tournament.config.settings
        ladders = {lad.ladder_id: lad for lad in (await self.calls.ladders()).ladders}
        ladder = ladders.get(listed.ladder_id) if listed.ladder_id else None
        return ladder.config.settings if ladder is not None else None

    async def panel(self) -> Panel:
        return self.operator.panel(await self.bots_active())

    # -- pages -----------------------------------------------------------------------------------

    async def home(self, request: Request) -> str:
        ladders = (await self.calls.ladders()).ladders
        in_flight: dict[str, int] = {}
        for match in await self.live_matches():
            in_flight[match.ladder_id] = in_flight.get(match.ladder_id, 0) + 1
        return pages.ladders_page(ladders, in_flight)

    async def standings(self, request: Request) -> str:
        query = pages.StandingsQuery(
            offset=whole(request, "offset", 0, 0, MAX_OFFSET),
            limit=PAGE_SIZE,
            search=text(request, "q", 64),
        )
        response = await self.calls.standings(
            pb.GetStandingsRequest(
                ladder=request.path_params["ladder"],
                limit=query.limit,
                offset=query.offset,
                search=query.search,
            )
        )
        return pages.standings_page(response, query)

    async def ladder_matches(self, request: Request) -> str:
        ladder = (
            await self.calls.standings(
                pb.GetStandingsRequest(ladder=request.path_params["ladder"], limit=1)
            )
        ).ladder
        bot_id = text(request, "bot", 64)
        bot = None
        if bot_id:
            bot = (
                await self.calls.profile(pb.GetBotProfileRequest(bot_id=bot_id, recent_matches=1))
            ).bot
        token = text(request, "page", 256)
        listed = await self.calls.matches(
            pb.ListMatchesRequest(
                ladder=ladder.ladder_id, bot_id=bot_id, page_size=PAGE_SIZE, page_token=token
            )
        )
        next_url = pages.url(
            f"/ladders/{pages.seg(ladder.config.name)}/matches",
            bot=bot_id,
            page=listed.next_page_token,
        )
        return pages.matches_page(ladder, listed, bot, next_url.replace("&amp;", "&"))

    async def bot(self, request: Request) -> str:
        profile = await self.calls.profile(
            pb.GetBotProfileRequest(bot_id=request.path_params["bot"], recent_matches=50)
        )
        return pages.bot_page(profile, await self.ladder_names())

    async def match(self, request: Request) -> str:
        match_id = request.path_params["match_id"]
        listed = await self.calls.listed_match(match_id)
        if listed.tournament_id:
            ladder = (await self.calls.tournament(listed.tournament_id)).tournament.config.name
        else:
            ladder = (await self.ladder_names()).get(listed.ladder_id, listed.kind)
        if listed.phase == pb.MATCH_PHASE_PLAYING:
            if not listed.ladder_id and not listed.tournament_id:  # a validation match: no
                refusal = (  # settings to draw it with
                    f"a {listed.kind} match in play: its moves are at {EVENTS.format(match_id)}"
                )
                return pages.match_page(match_id, None, listed, ladder, refusal=refusal)
            # A rotation whose deal is unfinished: why, rather than a table WatchMatch refuses.
            refusal = await self.calls.withheld(match_id)
            return pages.match_page(match_id, None, listed, ladder, refusal=refusal)
        try:
            record = (await self.calls.record(match_id)).record
        except ApiError as error:
            if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return pages.match_page(match_id, None, listed, ladder, refusal=error.detail)
        return pages.match_page(match_id, record, listed, ladder)

    async def live(self, request: Request) -> str:
        shown = self.watchable(await self.live_matches())
        names = await self.tournament_names(shown)
        return pages.live_page(shown, await self.ladder_names(), names)

    async def operator_page(self, request: Request) -> str:
        return pages.operator_page(await self.panel())

    async def tournaments(self, request: Request) -> str:
        return tournament_pages.tournaments_page((await self.calls.tournaments()).tournaments)

    async def tournament(self, request: Request) -> str:
        tournament = (await self.calls.tournament(request.path_params["tournament"])).tournament
        in_play: list[pb.ListedMatch] = []
        if tournament.state == pb.TOURNAMENT_STATE_RUNNING:
            own = tournament.tournament_id
            in_play = [m for m in await self.live_matches() if m.tournament_id == own]
        return tournament_pages.tournament_page(
            tournament, crosstable_from_message(tournament), self.watchable(in_play)
        )

    async def tournament_export(self, request: Request, kind: str) -> Response:
        """``/tournaments/{id}.json`` or ``.csv``: the crosstable as a download."""
        tournament = (await self.calls.tournament(request.path_params["tournament"])).tournament
        table = crosstable_from_message(tournament)
        name = f"{tournament.config.name}.{kind}"
        disposition = {"content-disposition": f'attachment; filename="{name}"'}
        if kind == "json":
            return JSONResponse(table.to_json(), headers=disposition)
        out = io.StringIO()
        csv.writer(out).writerows(table.csv_rows())
        return Response(out.getvalue(), media_type="text/csv", headers=disposition)

    # -- the JSON API ----------------------------------------------------------------------------

    async def api_games(self, request: Request) -> Message:
        return await self.calls.games()

    async def api_ladders(self, request: Request) -> Message:
        return await self.calls.ladders()

    async def api_standings(self, request: Request) -> Message:
        return await self.calls.standings(
            pb.GetStandingsRequest(
                ladder=request.path_params["ladder"],
                limit=whole(request, "limit", PAGE_SIZE, 1, 1000),
                offset=whole(request, "offset", 0, 0, MAX_OFFSET),
                search=text(request, "q", 64),
            )
        )

    async def api_ladder_matches(self, request: Request) -> Message:
        return await self._list(request, request.path_params["ladder"])

    async def api_matches(self, request: Request) -> Message:
        return await self._list(request, "")

    async def _list(self, request: Request, ladder: str) -> Message:
        return await self.calls.matches(
            pb.ListMatchesRequest(
                ladder=ladder,
                bot_id=text(request, "bot", 64),
                phase=phase(request),
                page_size=whole(request, "page_size", 20, 1, 100),
                page_token=text(request, "page_token", 256),
            )
        )

    async def api_bot(self, request: Request) -> Message:
        return await self.calls.profile(
            pb.GetBotProfileRequest(
                bot_id=request.path_params["bot"],
                recent_matches=whole(request, "recent", 20, 1, 500),
            )
        )

    async def api_tournaments(self, request: Request) -> Message:
        return await self.calls.tournaments()

    async def api_tournament(self, request: Request) -> Message:
        return await self.calls.tournament(request.path_params["tournament"])

    async def api_record(self, request: Request) -> Message:
        return await self.calls.record(request.path_params["match_id"])

    async def api_frames(self, request: Request) -> Response:
        replay = _replay()
        if replay is None:
            return _error(501, "UNIMPLEMENTED", "the replay viewer is not installed")
        record = (await self.calls.record(request.path_params["match_id"])).record
        try:
            return JSONResponse(replay.frames_for_record(record))
        except ValueError as error:  # ReplayError: a record the engine cannot replay
            return _error(422, "UNPROCESSABLE", f"cannot draw this record: {error}")

    async def api_live_table(self, request: Request) -> Response:
        """Server-sent events of the replay viewer's live table (``arena.web.replay``'s
        ``LiveFeed``: the frames so far, one per public move, the whole replay at the end),
        made from the same public watch events as ``api_events``; 501 without the viewer."""
        replay = _replay()
        if replay is None:
            return _error(501, "UNIMPLEMENTED", "the replay viewer is not installed")
        live_feed, sse_message = replay.LiveFeed, replay.sse_message
        if self.streams.open >= MAX_STREAMS:
            return _error(503, "UNAVAILABLE", "too many live tables open: try again later")
        match_id = request.path_params["match_id"]
        events = self.calls.watch(match_id)
        try:
            first = await anext(events)
        except StopAsyncIteration:
            return _error(404, "NOT_FOUND", f"no match {match_id!r}")
        ending = ""  # the reason of an ``end`` sent once the events end with no record
        if first.HasField("finished"):
            settings, seats = (
                first.finished.settings,
                [
                    {"seat": s.seat, "name": s.bot_name, "version": s.bot_version}
                    for s in first.finished.seats
                ],
            )
        else:  # in play (WatchMatch, above, refused it if its moves are withheld)
            try:
                listed = await self.calls.listed_match(match_id)
                in_play = await self.settings_in_play(listed)
            except BaseException:  # it ended meanwhile (NOT_FOUND), or the reads failed
                await events.aclose()
                raise
            if in_play is None:
                await events.aclose()
                detail = f"match {match_id!r} is not a ladder's or a tournament's"
                return _error(404, "NOT_FOUND", detail)
            settings = in_play
            seats = [{"seat": s.seat, "name": s.bot_name, "version": ""} for s in listed.seats]
            if listed.tournament_id:  # its stream ends with no record: say so, or the
                ending = TOURNAMENT_END  # browser's EventSource would reconnect
        feed = live_feed(settings, seats, match_id)
        self.streams.open += 1

        async def stream() -> AsyncIterator[str]:
            try:
                yield sse_message(feed.start())
                for message in feed.on_response(first):
                    yield sse_message(message)
                async for event in events:
                    for message in feed.on_response(event):
                        yield sse_message(message)
                if ending:
                    yield sse_message(feed.end(ending))
            finally:
                self.streams.open -= 1
                await events.aclose()

        return _event_stream(stream())

    async def api_operator(self, request: Request) -> Response:
        return JSONResponse(asdict(await self.panel()))

    async def api_events(self, request: Request) -> Response:
        """Server-sent events of a match's public watch events (what ``WatchMatch`` sends a
        stranger): ``move`` events while it is played, then one ``finished`` event."""
        if self.streams.open >= MAX_STREAMS:
            return _error(503, "UNAVAILABLE", "too many live tables open: try again later")
        match_id = request.path_params["match_id"]
        events = self.calls.watch(match_id)
        try:  # a refusal is an HTTP status, before any stream starts
            first = await anext(events)
        except StopAsyncIteration:
            return _error(404, "NOT_FOUND", f"no match {match_id!r}")
        self.streams.open += 1

        async def stream() -> AsyncIterator[str]:
            try:
                yield _sse(first, match_id)
                async for event in events:
                    yield _sse(event, match_id)
            finally:
                self.streams.open -= 1
                await events.aclose()

        return _event_stream(stream())


def _event_stream(messages: AsyncIterator[str]) -> StreamingResponse:
    """Server-sent events, never cached nor buffered by a proxy on the way."""
    return StreamingResponse(
        messages,
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def _replay() -> Any:
    """``arena.web.replay`` (the replay viewer's frames), or None where it is not installed:
    imported when first asked for, so the rest of the web UI does not depend on it."""
    try:
        return importlib.import_module("arena.web.replay")
    except ModuleNotFoundError as missing:
        if missing.name != "arena.web.replay":
            raise
        return None


def event_json(event: pb.WatchMatchResponse, match_id: str) -> dict[str, Any]:
    """A watch event as the live table's JSON: a move with its public fields, or the end
    (its status and outcome, and where the replay's frames are: not the record itself)."""
    if event.HasField("move"):
        return {"type": "move", **to_json(event.move)}
    record = event.finished
    return {
        "type": "finished",
        "match_id": record.match_id or match_id,
        "status": to_json(record)["status"],
        "status_detail": record.status_detail,
        "outcome": to_json(record.outcome),
        "frames_url": f"/api/v1/matches/{pages.seg(match_id)}/frames",
    }


def _sse(event: pb.WatchMatchResponse, match_id: str) -> str:
    data = event_json(event, match_id)
    return f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _error(status: int, code: str, detail: str) -> JSONResponse:
    return JSONResponse({"error": detail, "code": code}, status_code=status)


Endpoint = Callable[[Request], Awaitable[Response]]


def _page(handler: Callable[[Request], Awaitable[str]]) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        try:
            return HTMLResponse(await handler(request))
        except ApiError as error:
            return HTMLResponse(
                pages.error_page(error.http_status, error.detail), error.http_status
            )

    return endpoint


def _download(handler: Callable[[Request, str], Awaitable[Response]], kind: str) -> Endpoint:
    """A file of a page (``kind``: ``json``, ``csv``): a refusal is the page's error, as HTML."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request, kind)
        except ApiError as error:
            return HTMLResponse(
                pages.error_page(error.http_status, error.detail), error.http_status
            )

    return endpoint


def _api(handler: Callable[[Request], Awaitable[Message | Response]]) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        try:
            answer = await handler(request)
        except ApiError as error:
            return _error(error.http_status, error.code.name, error.detail)
        if isinstance(answer, Response):
            return answer
        return JSONResponse(to_json(answer))

    return endpoint


class PerAddressLimit:
    """ASGI middleware: each page or API request takes one call from its address's bucket of
    the API's own per-address limit (``ApiLimits.peer_requests``: the web and gRPC share one
    budget); an empty bucket is 429 with ``retry-after``. Static files are not counted."""

    def __init__(self, app: ASGIApp, limits: ApiLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/static/"):
            host = (scope.get("client") or ("", 0))[0]
            peer = f"ipv6:[{host}]:0" if ":" in host else f"ipv4:{host}:0"
            wait = self.limits.peer_requests.acquire(peer_key(peer))
            if wait:
                limit = self.limits.config.peer_requests
                response = JSONResponse(
                    {
                        "error": f"too many calls from your address (limit {limit})",
                        "code": "RESOURCE_EXHAUSTED",
                    },
                    status_code=429,
                    headers={"retry-after": str(whole_seconds(wait))},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(web: WebApp) -> Starlette:
    """The ASGI app."""
    document = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return _error(404, "NOT_FOUND", "no such API path")
        return HTMLResponse(pages.error_page(404, "no such page"), 404)

    routes = [
        Route("/", _page(web.home)),
        Route("/ladders/{ladder}", _page(web.standings)),
        Route("/ladders/{ladder}/matches", _page(web.ladder_matches)),
        Route("/bots/{bot}", _page(web.bot)),
        Route("/matches/{match_id}", _page(web.match)),
        Route("/live", _page(web.live)),
        Route("/operator", _page(web.operator_page)),
        Route("/tournaments", _page(web.tournaments)),
        *(
            Route(f"/tournaments/{{tournament}}.{kind}", _download(web.tournament_export, kind))
            for kind in EXPORTS
        ),
        Route("/tournaments/{tournament}", _page(web.tournament)),
        Route("/api/v1/openapi.json", openapi),
        Route("/api/v1/games", _api(web.api_games)),
        Route("/api/v1/ladders", _api(web.api_ladders)),
        Route("/api/v1/ladders/{ladder}/standings", _api(web.api_standings)),
        Route("/api/v1/ladders/{ladder}/matches", _api(web.api_ladder_matches)),
        Route("/api/v1/matches", _api(web.api_matches)),
        Route("/api/v1/matches/{match_id}", _api(web.api_record)),
        Route("/api/v1/matches/{match_id}/frames", _api(web.api_frames)),
        Route("/api/v1/matches/{match_id}/events", _api(web.api_events)),
        Route("/api/v1/matches/{match_id}/live", _api(web.api_live_table)),
        Route("/api/v1/bots/{bot}", _api(web.api_bot)),
        Route("/api/v1/operator", _api(web.api_operator)),
        Route("/api/v1/tournaments", _api(web.api_tournaments)),
        Route("/api/v1/tournaments/{tournament}", _api(web.api_tournament)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    # Compressed when the browser accepts it (a long match's frames shrink about tenfold);
    # server-sent events are never buffered for it (Starlette leaves text/event-stream out).
    middleware = [
        Middleware(PerAddressLimit, limits=web.calls.servicer.limits),
        Middleware(GZipMiddleware, minimum_size=1024, compresslevel=6),
    ]
    return Starlette(routes=routes, middleware=middleware, exception_handlers={404: not_found})
