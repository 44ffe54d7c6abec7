"""The OpenAPI 3.1 document of the web's JSON API, ``/api/v1/openapi.json``.

Each answer's schema is built from the protobuf message it is (``arena.web.wire``): the JSON
API is the gRPC API's read side, message for message.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import Descriptor

from arena.web.wire import ref
from cardarena.arena.v1 import arena_service_pb2 as pb

ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "code": {"type": "string"}},
    "required": ["error", "code"],
}

PANEL = {
    "type": "object",
    "properties": {
        "window_s": {"type": "integer"},
        "matches_per_minute": {"type": "number"},
        "decisions_per_second": {"type": "number"},
        "matches_in_flight": {"type": "integer"},
        "matches_waiting": {"type": "integer"},
        "matches_parked": {"type": "integer"},
        "bots_active": {"type": "integer"},
        "bots_unhealthy": {"type": "integer"},
        "workers_alive": {"type": "integer"},
        "faults_by_kind": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": [
        "window_s",
        "matches_per_minute",
        "decisions_per_second",
        "matches_in_flight",
        "matches_waiting",
        "matches_parked",
        "bots_active",
        "bots_unhealthy",
        "workers_alive",
        "faults_by_kind",
    ],
}


def _param(name: str, where: str, description: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path",
        "description": description,
        "schema": {"type": kind},
    }


LADDER = _param("ladder", "path", "the ladder's id or name")
MATCH = _param("match_id", "path", "the match's id")
BOT = _param("bot", "path", "the bot's id")
LISTING = [
    _param("bot", "query", "only the matches of this bot (its id)"),
    _param("phase", "query", "playing or finished (default: both, playing first)"),
    _param("page_size", "query", "matches per page, 1 to 100 (default 20)", "integer"),
    _param("page_token", "query", "the next_page_token of the previous page"),
]


def _get(
    summary: str, answer: dict[str, Any], params: list[dict[str, Any]], media: str = ""
) -> dict[str, Any]:
    errors = {
        str(code): {
            "description": meaning,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code, meaning in ((400, "a bad parameter"), (404, "not found"))
    }
    return {
        "get": {
            "summary": summary,
            "parameters": params,
            "responses": {
                "200": {
                    "description": "OK",
                    "content": {media or "application/json": {"schema": answer}},
                },
                **errors,
            },
        }
    }


def openapi_document() -> dict[str, Any]:
    """The whole document."""
    schemas: dict[str, Any] = {"Error": ERROR, "OperatorPanel": PANEL}

    def message(descriptor: Descriptor) -> dict[str, Any]:
        return {"$ref": ref(descriptor, schemas)}

    paths = {
        "/api/v1/games": _get(
            "Every game (ListGames)", message(pb.ListGamesResponse.DESCRIPTOR), []
        ),
        "/api/v1/ladders": _get(
            "Every ladder with its counts (ListLadders)",
            message(pb.ListLaddersResponse.DESCRIPTOR),
            [],
        ),
        "/api/v1/ladders/{ladder}/standings": _get(
            "A page of a ladder's standings (GetStandings)",
            message(pb.GetStandingsResponse.DESCRIPTOR),
            [
                LADDER,
                _param("limit", "query", "lines, 1 to 1000 (default 50)", "integer"),
                _param("offset", "query", "skip the best this many (default 0)", "integer"),
                _param("q", "query", "only bots whose name or owner contains this"),
            ],
        ),
        "/api/v1/ladders/{ladder}/matches": _get(
            "A ladder's matches, live then finished, newest first (ListMatches)",
            message(pb.ListMatchesResponse.DESCRIPTOR),
            [LADDER, *LISTING],
        ),
        "/api/v1/matches": _get(
            "Every ladder's matches (ListMatches); phase=playing lists the live ones",
            message(pb.ListMatchesResponse.DESCRIPTOR),
            LISTING,
        ),
        "/api/v1/matches/{match_id}": _get(
            "A finished match's record, as a stranger sees it (GetMatchRecord); 409 while "
            "its duplicate set is unfinished",
            message(pb.GetMatchRecordResponse.DESCRIPTOR),
            [MATCH],
        ),
        "/api/v1/matches/{match_id}/frames": _get(
            "The replay viewer's frames of a finished match (501 without the viewer)",
            {"type": "object"},
            [MATCH],
        ),
        "/api/v1/matches/{match_id}/events": _get(
            "Server-sent events of a match as spectators see it (WatchMatch): `move` events "
            "(a MoveEvent with type 'move'), then one `finished` event",
            {"type": "string"},
            [MATCH],
            media="text/event-stream",
        ),
        "/api/v1/matches/{match_id}/live": _get(
            "Server-sent events of the replay viewer's live table: the frames so far, one "
            "frame per public move, the whole replay at the end (501 without the viewer)",
            {"type": "string"},
            [MATCH],
            media="text/event-stream",
        ),
        "/api/v1/bots/{bot}": _get(
            "A bot's profile (GetBotProfile)",
            message(pb.GetBotProfileResponse.DESCRIPTOR),
            [BOT, _param("recent", "query", "recent matches, 1 to 500 (default 20)", "integer")],
        ),
        "/api/v1/tournaments": _get(
            "Every tournament, newest first, without crosstables (ListTournaments)",
            message(pb.ListTournamentsResponse.DESCRIPTOR),
            [],
        ),
        "/api/v1/tournaments/{tournament}": _get(
            "A tournament's progress and crosstable: each ordered pairing's score with its "
            "95 % interval (GetTournament)",
            message(pb.GetTournamentResponse.DESCRIPTOR),
            [_param("tournament", "path", "the tournament's id or name")],
        ),
        "/api/v1/operator": _get(
            "This process's at-a-glance figures", {"$ref": "#/components/schemas/OperatorPanel"}, []
        ),
    }
    message(pb.MoveEvent.DESCRIPTOR)  # the data of the `move` server-sent events
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Card Arena web API",
            "version": "1",
            "description": "Read-only JSON views of the arena's gRPC API "
            "(cardarena.arena.v1.ArenaService), as a caller without a token sees them.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
