"""``arena watch MATCH_ID``: a live match drawn as a spectator sees it, redrawn at each move.

Everything shown comes from the public watch events (``MoveEvent``: the seat, the move as
spectators may be told it, whether it was defaulted, the scores), so nothing hidden can reach
the terminal. In a terminal the table is a rich ``Live`` view: per seat its bot, score, cards
held and latest move, then the trick being played, the trump or turn-up and the latest calls.
Off a terminal (or with ``--lines``) each move is one line, as before.

The trick, trump and hand sizes come from the live-table frames of ``arena.web.frames.live``
(docs/replay-frames.md: one model of the spectator's table, shared with the web page) when that
module is there and the match's settings are known; without it the view shows the seats,
scores and moves.
"""

from __future__ import annotations

import argparse
from collections import deque
from typing import Any

import grpc
from rich.console import Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from arena.cli_service import _client, _fail, _say, add_client_command, console
from arena.client import ArenaClient
from arena.render import literal
from arena.web.frames.live import LiveTable
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2

RECENT_MOVES = 12
"""How many of the latest moves the view lists."""

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_text(card: str) -> Text:
    """``"TH"`` as ``10♥`` in red; Pinochle's copy suffix (``#1``) dropped."""
    name = card.split("#", 1)[0]
    rank, suit = name[:-1], name[-1:]
    rank = "10" if rank == "T" else rank
    return Text(rank + SUITS.get(suit, suit), style="red" if suit in "DH" else "")


class Board:
    """What the view draws, from the public events only: scores, moves, and the spectator's
    table when a live-table model is given (``table``: something with ``add(event)`` that
    returns a frame as docs/replay-frames.md describes)."""

    def __init__(self, seats: list[str], table: Any = None) -> None:
        self.seats = seats
        self.table = table
        self.frame: dict[str, Any] | None = None
        self.scores: list[int] = [0] * len(seats)
        self.last: dict[int, str] = {}
        self.recent: deque[str] = deque(maxlen=RECENT_MOVES)
        self.moves = 0
        self.defaulted = [0] * len(seats)
        self.finished: str = ""

    def add(self, event: pb.MoveEvent) -> None:
        """One more move event."""
        while event.seat >= len(self.seats) or len(event.scores) > len(self.seats):
            self.seats.append(f"seat {len(self.seats)}")
            self.scores.append(0)
            self.defaulted.append(0)
        self.moves += 1
        self.scores = [int(score) for score in event.scores] or self.scores
        flag = " (default after a fault)" if event.defaulted else ""
        self.last[event.seat] = event.description + flag
        self.defaulted[event.seat] += event.defaulted
        self.recent.append(f"#{event.index} {self.seats[event.seat]}: {event.description}{flag}")
        if self.table is not None:
            try:
                self.frame = self.table.add(event)
            except ValueError:  # a model that cannot follow: keep the scores and moves
                self.table, self.frame = None, None

    def render(self, title: str) -> RenderableType:
        """The whole view."""
        table_frame = (self.frame or {}).get("table") or {}
        heading = table_frame.get("heading") or f"{self.moves} moves"
        seats = Table(title=literal(f"{title}: {heading}"), expand=False)
        for column in ("seat", "bot", "score", "cards", "latest"):
            seats.add_column(
                column, overflow="fold", justify="right" if column in ("score", "cards") else "left"
            )
        frame_seats = table_frame.get("seats") or []
        for seat, name in enumerate(self.seats):
            shown = frame_seats[seat] if seat < len(frame_seats) else {}
            held = shown.get("count")
            tags = ", ".join(shown.get("tags") or [])
            latest = self.last.get(seat, "")
            seats.add_row(
                str(seat),
                literal(name),
                str(self.scores[seat]) if seat < len(self.scores) else "-",
                "-" if held is None else str(held),
                literal(f"{latest}{f'  [{tags}]' if tags else ''}"),
            )
        parts: list[RenderableType] = [seats]
        facts = table_frame.get("facts") or []
        if facts:
            line = Text()
            for fact in facts:
                line.append(f"{fact.get('label', '')}: ", style="bold")
                cards = fact.get("cards") or []
                if cards:
                    line.append_text(Text(" ").join(card_text(card) for card in cards))
                else:
                    line.append(literal(str(fact.get("text") or fact.get("suit") or "")))
                line.append("   ")
            parts.append(line)
        trick = table_frame.get("trick") or {}
        if trick.get("cards"):
            line = Text("trick: ", style="bold")
            for played in trick["cards"]:
                line.append(literal(f"{self.seats[played['seat']]} "))
                line.append_text(card_text(played["card"]))
                line.append("  ")
            parts.append(line)
        pile = table_frame.get("pile") or {}
        if pile.get("cards"):
            line = Text("pile: ", style="bold").append_text(card_text(pile["cards"][-1]))
            if pile.get("announced"):
                line.append(f"  announced {SUITS.get(pile['announced'], pile['announced'])}")
            parts.append(line)
        parts.append(Text("latest moves", style="bold"))
        parts.extend(literal(move) for move in self.recent)
        if self.finished:
            parts.append(Text(self.finished, style="green"))
        return Group(*parts)


def _listed(client: ArenaClient, match_id: str) -> pb.ListedMatch | None:
    """The match in the listing of matches being played (for its seats and ladder)."""
    request = pb.ListMatchesRequest(phase=pb.MATCH_PHASE_PLAYING, page_size=100)
    for _ in range(10):  # at most 1,000 live matches looked through
        response: pb.ListMatchesResponse = client.call("ListMatches", request)
        for match in response.matches:
            if match.match_id == match_id:
                return match
        if not response.next_page_token:
            return None
        request.page_token = response.next_page_token
    return None


def _live_table(settings: options_pb2.GameSettings | None, seats: list[str]) -> LiveTable | None:
    """The shared live-table model (the web UI's) for these settings, if it takes them."""
    if settings is None:
        return None
    try:
        return LiveTable(settings, [{"seat": s, "name": n} for s, n in enumerate(seats)])
    except ValueError:
        return None


def board_for(client: ArenaClient, match_id: str) -> tuple[Board, str]:
    """A board for ``match_id`` with its bots' names and (from its ladder or tournament) its
    settings."""
    listed = _listed(client, match_id)
    if listed is None:
        return Board([]), match_id[:12]
    seats = [f"{s.owner}/{s.bot_name}" if s.bot_name else s.bot_id for s in listed.seats]
    settings = None
    title = f"{listed.kind} {match_id[:12]}"
    if listed.tournament_id:
        request = pb.GetTournamentRequest(tournament=listed.tournament_id)
        config = client.call("GetTournament", request).tournament.config
        settings = config.settings
        title = f"tournament {config.name} ({settings.game}) {match_id[:12]}"
    for ladder in client.call("ListLadders", pb.ListLaddersRequest()).ladders:
        if ladder.ladder_id == listed.ladder_id:
            settings = ladder.config.settings
            title = f"{ladder.config.name} ({settings.game}) {match_id[:12]}"
    return Board(seats, _live_table(settings, seats)), title


def _finished_line(record: Any) -> str:
    return f"finished: ranks {list(record.outcome.ranks)}, scores {list(record.outcome.scores)}"


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a match live: a redrawn table in a terminal, else a line per move."""
    client = _client(args)
    try:
        if args.lines or not console.is_terminal:
            for event in client.watch(args.match_id):
                if event.HasField("move"):
                    move = event.move
                    flag = " (default after a fault)" if move.defaulted else ""
                    _say(f"#{move.index} seat {move.seat}: {move.description}{flag}")
                else:
                    _say(_finished_line(event.finished))
            return 0
        board, title = board_for(client, args.match_id)
        with Live(board.render(title), console=console, auto_refresh=False) as live:
            for event in client.watch(args.match_id):
                if event.HasField("move"):
                    board.add(event.move)
                else:
                    board.finished = _finished_line(event.finished)
                live.update(board.render(title), refresh=True)
    except grpc.RpcError as error:
        return _fail(error)
    finally:
        client.close()
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``watch``."""
    watch = add_client_command(
        commands, "watch", "follow a match live: its table, redrawn at each move"
    )
    watch.add_argument("match_id")
    watch.add_argument("--lines", action="store_true", help="a line per move, not the table")
    watch.set_defaults(run=cmd_watch)
