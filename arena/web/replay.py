"""Frames for the replay viewer and live tables: a match drawn move by move as JSON.

``frames_for_record`` replays a finished record through the engine and draws the whole table
after every move, hands face up (the match is over, nothing is hidden any more).
``LiveTable``/``frames_for_events`` draw a match being played from its spectator events only,
which carry public information alone. The JSON shape is documented in ``docs/replay-frames.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arena.web.frames import FRAMES
from arena.web.frames.common import CardNamer, Json, deck_has_copies
from arena.web.frames.live import LiveTable, frames_for_events
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import options_pb2, record_pb2
from referee.codec import MalformedActionError
from referee.codec.common import options_from_wire
from referee.codec.record import fault_name
from referee.games.api import Game, RulesError, State
from referee.games.registry import codec_for, make_game

__all__ = [
    "FRAMES_VERSION",
    "LiveFeed",
    "LiveTable",
    "ReplayError",
    "frames_for_events",
    "frames_for_record",
]

FRAMES_VERSION = 1
"""The version of the frames JSON (``docs/replay-frames.md``); bumped on a breaking change."""

MAX_MOVES = 100_000
"""A record with more moves than this is refused (a real match makes a few thousand at most)."""


class ReplayError(ValueError):
    """A record that cannot be drawn: unknown game, bad options, or moves the engine rejects."""


def status_name(status: int) -> str:
    """``completed`` for ``MATCH_STATUS_COMPLETED``."""
    return record_pb2.MatchStatus.Name(status).removeprefix("MATCH_STATUS_").lower()  # type: ignore[arg-type]


def seats_of(record: record_pb2.MatchRecord, num_seats: int) -> list[Json]:
    """Who sat where: each seat's bot name and version (empty when the record has none)."""
    by_seat = {s.seat: s for s in record.seats}
    return [
        {
            "seat": seat,
            "name": by_seat[seat].bot_name if seat in by_seat else "",
            "version": by_seat[seat].bot_version if seat in by_seat else "",
        }
        for seat in range(num_seats)
    ]


def namer_for(game: Game) -> CardNamer:
    """Card names for ``game``, with the copy when its deck holds two of a card."""
    return CardNamer(codec_for(game), copies=deck_has_copies(game))


def totals_of(state: State) -> list[int]:
    """The running totals, or the final scores once the game is over."""
    scores = state.outcome().scores if state.is_terminal() else state.scores_so_far()
    return [int(score) for score in scores]


def draw_table(state: State, name: CardNamer) -> Json:
    """The whole table of ``state``, hands face up, with the seat to act and the totals."""
    views = [state.observe(seat) for seat in range(state.num_seats)]
    table = FRAMES[state.game_type.name].table(views, name, state.describe_action)
    to_act = state.current_seat()
    table["to_act"] = to_act if to_act >= 0 else None
    table["totals"] = totals_of(state)
    return table


def move_frame(move: record_pb2.MoveRecord, text: str, table: Json) -> Json:
    """One move: who made it, what, how long it took, any fault, and the table after it."""
    fault = None
    if move.fault:
        fault = {"kind": fault_name(move.fault), "detail": move.fault_detail}
    return {
        "index": move.index,
        "seat": move.seat,
        "move": text,
        "time_ms": round(move.elapsed_us / 1000, 1),
        "time_bank_ms": move.time_bank_ms,
        "fault": fault,
        "table": table,
    }


def frames_for_record(record: record_pb2.MatchRecord) -> dict[str, Any]:
    """The replay of a finished match: its settings, seats and one frame per recorded move.

    Raises ``ReplayError`` if the record's game cannot be made or a move diverges from what
    the engine allows (a record the store would not hold).
    """
    settings = record.settings
    if len(record.moves) > MAX_MOVES:
        raise ReplayError(f"the record has {len(record.moves)} moves, more than {MAX_MOVES}")
    try:
        game = make_game(settings.game, settings.num_seats, options_from_wire(settings.options))
    except (RulesError, ValueError) as error:
        raise ReplayError(f"settings: {error}") from None
    codec = codec_for(game)
    name = namer_for(game)
    state = game.new_state(record.seed)
    start = draw_table(state, name)
    frames = []
    for move in record.moves:
        if state.is_terminal():
            raise ReplayError(f"move {move.index}: the game was already over")
        if state.current_seat() != move.seat:
            raise ReplayError(
                f"move {move.index}: recorded seat {move.seat}, the engine expects "
                f"seat {state.current_seat()}"
            )
        try:
            action = codec.decode_action(move.action)
            text = state.describe_action(action)
            state.apply(action)
        except (MalformedActionError, RulesError) as error:
            raise ReplayError(f"move {move.index}: {error}") from None
        frames.append(move_frame(move, text, draw_table(state, name)))
    outcome = None
    if record.HasField("outcome") and record.outcome.scores:
        outcome = {
            "scores": [int(s) for s in record.outcome.scores],
            "ranks": [int(r) for r in record.outcome.ranks],
        }
        final = frames[-1]["table"]["totals"] if frames else start["totals"]
        if final != outcome["scores"]:  # a forfeit's are the totals so far
            raise ReplayError(f"scores: recorded {outcome['scores']}, engine {final}")
    return {
        "version": FRAMES_VERSION,
        "live": False,
        "match_id": record.match_id,
        "game": settings.game,
        "title": game.type.title,
        "num_seats": settings.num_seats,
        "options": {k: v for k, v in sorted(game.options.items())},
        "seats": seats_of(record, settings.num_seats),
        "status": status_name(record.status),
        "status_detail": record.status_detail,
        "forfeited_seat": record.forfeited_seat if record.HasField("forfeited_seat") else None,
        "outcome": outcome,
        "start": start,
        "frames": frames,
    }


def sse_message(message: Json) -> str:
    """One server-sent event carrying ``message`` as JSON (the ``data:`` line and a blank)."""
    return f"data: {json.dumps(message, separators=(',', ':'))}\n\n"


class LiveFeed:
    """The messages of a live table's event stream (what ``mount(..., {live: true})`` reads).

    ``start()`` is a ``document`` message with the frames so far; each watched move gives a
    ``frame`` message; the end of the match gives a ``document`` with the whole replay
    (``frames_for_record`` of the finished record, hands face up at last) and an ``end``.
    Each is a JSON object; ``sse_message`` frames it for a ``text/event-stream`` response.
    """

    def __init__(
        self, settings: options_pb2.GameSettings, seats: Sequence[Json] = (), match_id: str = ""
    ) -> None:
        self.table = LiveTable(settings, seats)
        self.match_id = match_id

    def start(self) -> Json:
        """The frames so far (sent first, and again to a client that reconnects)."""
        return {"type": "document", "document": self.table.document(self.match_id)}

    def on_response(self, response: arena_service_pb2.WatchMatchResponse) -> list[Json]:
        """The messages for one ``WatchMatch`` response."""
        if response.HasField("move"):
            return [{"type": "frame", "frame": self.table.add(response.move)}]
        if response.HasField("finished"):
            try:
                replay = frames_for_record(response.finished)
            except ReplayError as error:
                return [{"type": "end", "reason": str(error)}]
            return [{"type": "document", "document": replay}, {"type": "end", "reason": ""}]
        return []

    @staticmethod
    def end(reason: str) -> Json:
        """The stream stops without a record (the match was withheld, aborted, or lost)."""
        return {"type": "end", "reason": reason}
