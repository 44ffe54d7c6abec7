"""``arena matches`` and ``arena live``: the matches of the arena, with the ids ``arena watch``
and ``arena fetch`` take."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from datetime import datetime

import grpc
from rich.table import Table
from rich.text import Text

from arena.cli_service import _client, _fail, add_client_command, console
from arena.client import ArenaClient
from arena.render import STATUS_NAMES, literal
from cardarena.arena.v1 import arena_service_pb2 as pb

MAX_LIMIT = 1000
"""The most matches one command lists (pages of at most 100 each)."""

PAGE = 100


def _limit(text: str) -> int:
    """``--limit``: a whole number from 1 to ``MAX_LIMIT``."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def listed(
    client: ArenaClient, request: pb.ListMatchesRequest, limit: int
) -> Iterator[pb.ListedMatch]:
    """Up to ``limit`` matches of a listing, page after page."""
    shown = 0
    while shown < limit:
        request.page_size = min(PAGE, limit - shown)
        response = client.call("ListMatches", request)
        yield from response.matches
        shown += len(response.matches)
        if not response.next_page_token or not response.matches:
            return
        request.page_token = response.next_page_token


def _when(at_us: int) -> str:
    return datetime.fromtimestamp(at_us / 1e6).strftime("%m-%d %H:%M:%S") if at_us else "-"


def _seat_name(seat: pb.ListedSeat) -> Text:
    return literal(f"{seat.owner}/{seat.bot_name}" if seat.bot_name else seat.bot_id)


def _result(match: pb.ListedMatch) -> Text:
    if match.phase == pb.MATCH_PHASE_PLAYING:
        return Text("playing", style="green")
    status = STATUS_NAMES.get(match.status, "finished")
    if match.withheld:
        return Text(f"{status}; results withheld until the deal's other rotations finish")
    rated = any(seat.rank for seat in match.seats)
    ranks = ", ".join(f"#{seat.rank} {seat.score}" for seat in match.seats) if rated else ""
    return Text(f"{status}: {ranks}" if ranks else status)


def matches_table(matches: list[pb.ListedMatch], ladders: dict[str, str], title: str) -> Table:
    """Listed matches as a table: the whole match id first (it is what ``arena watch`` takes),
    where it belongs (its ladder, ``tournament NAME``, or its kind; ``ladders`` names ladders
    and tournaments by id), the seats in seat order and, for a finished match, each seat's
    rank and score."""
    table = Table(title=title)
    table.add_column("match", no_wrap=True, min_width=32)
    for column in ("ladder", "seats", "started", "finished"):
        table.add_column(column, overflow="fold")
    table.add_column("result", overflow="fold")
    for match in matches:
        ladder = ladders.get(match.ladder_id, match.ladder_id) if match.ladder_id else ""
        if match.tournament_id:
            ladder = f"tournament {ladders.get(match.tournament_id, match.tournament_id)}"
        table.add_row(
            match.match_id,
            literal(ladder or match.kind),
            Text(", ").join(_seat_name(seat) for seat in match.seats),
            _when(match.started_at_us),
            _when(match.finished_at_us),
            _result(match),
        )
    return table


def cmd_matches(args: argparse.Namespace) -> int:
    """List matches being played and finished, newest first."""
    phase = {"live": pb.MATCH_PHASE_PLAYING, "finished": pb.MATCH_PHASE_FINISHED}.get(
        args.phase, pb.MATCH_PHASE_UNSPECIFIED
    )
    request = pb.ListMatchesRequest(ladder=args.ladder or "", bot_id=args.bot or "", phase=phase)
    client = _client(args)
    try:
        matches = list(listed(client, request, args.limit))
        ladders = {
            ladder.ladder_id: ladder.config.name
            for ladder in client.call("ListLadders", pb.ListLaddersRequest()).ladders
        }
        for tournament_id in sorted({m.tournament_id for m in matches} - {""}):
            asked = pb.GetTournamentRequest(tournament=tournament_id)
            ladders[tournament_id] = client.call("GetTournament", asked).tournament.config.name
    except grpc.RpcError as error:
        return _fail(error)
    finally:
        client.close()
    what = {"live": "matches being played", "finished": "finished matches"}.get(
        args.phase, "matches"
    )
    console.print(matches_table(matches, ladders, f"{what} ({len(matches)}, newest first)"))
    if any(match.phase == pb.MATCH_PHASE_PLAYING for match in matches):
        console.print("arena watch MATCH_ID follows one live")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``matches`` and ``live`` to the ``arena`` parser."""
    for name, help_text in (
        ("matches", "list matches being played and finished, newest first"),
        ("live", "list the matches being played now (arena matches --live)"),
    ):
        parser = add_client_command(commands, name, help_text)
        parser.add_argument("ladder", nargs="?", default="", help="only this ladder (id or name)")
        parser.add_argument("--bot", default="", help="only this bot's matches (id or OWNER/NAME)")
        parser.add_argument(
            "--limit",
            type=_limit,
            default=20,
            help=f"at most this many (default 20, at most {MAX_LIMIT})",
        )
        if name == "matches":
            phases = parser.add_mutually_exclusive_group()
            phases.add_argument(
                "--live", dest="phase", action="store_const", const="live", help="only live ones"
            )
            phases.add_argument(
                "--finished",
                dest="phase",
                action="store_const",
                const="finished",
                help="only finished ones",
            )
        else:
            parser.set_defaults(phase="live")
        parser.set_defaults(run=cmd_matches)
