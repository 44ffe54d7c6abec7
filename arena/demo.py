"""``arena demo``: the main job, end to end on one machine with the embedded SQLite store.

Starts the arena service and the sample bots as separate processes, registers the bots
through the API, creates one ladder per game, shows the ladders' progress, prints the
standings and where to look next, and stops everything cleanly (also on Ctrl-C).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena.cli_service import standings_table
from arena.client import ArenaClient
from arena.local_bots import (
    BotProcess,
    arena_serve_command,
    connect_bot,
    start_many,
    start_server,
    stop_bot,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.games.registry import STATE_CLASSES
from sample_bots.serve import BOTS

console = Console(width=None if sys.stdout.isatty() else 110)

DEMO_SEATS = {"oh-hell": 4, "mau-mau": 4, "king": 4, "pinochle": 2, "klaberjass": 2}


def lineup(game: str, seats: int) -> list[str]:
    """Bot kinds entered in a game's demo ladder: its heuristic bot if any, and random bots."""
    kinds = [kind for kind in (f"{game}-heuristic",) if kind in BOTS]
    return kinds + ["random"] * max(2, seats + 1 - len(kinds))


def run_demo(
    games: Sequence[str], matches: int, workdir: Path, seed: int, kept: bool = True
) -> int:
    """Play the demo; returns the exit code."""
    admin = secrets.token_urlsafe(16)  # written to a file, never a command-line argument
    token_file = workdir / "admin-token"
    token_file.write_text(admin)
    command = arena_serve_command(
        token_file, ["--db", str(workdir / "arena.sqlite3")], 12, "--health-interval-s", "5"
    )
    log = (workdir / "arena.log").open("w")
    console.print("Starting the arena service (embedded SQLite) as its own process…")
    service = start_server("arena", command, stderr=log.fileno())
    processes: list[BotProcess] = []
    try:
        plan = {game: lineup(game, DEMO_SEATS.get(game, 2)) for game in games}
        kinds = [kind for game in games for kind in plan[game]]
        console.print(f"Starting {len(kinds)} sample bots, each its own gRPC server process…")
        processes = start_many(kinds, seed)
        client = ArenaClient(service.address, admin)
        owner_token: str | None = None  # shown once, by the first registration
        bots = iter(processes)
        for game in games:
            for index, kind in enumerate(plan[game]):
                bot = next(bots)
                # Every sample bot plays over one stream (issue 20); each ladder's first bot
                # dials the arena itself, as a bot behind NAT would.
                outbound = index == 0
                registered = client.call(
                    "RegisterBot",
                    pb.RegisterBotRequest(
                        owner="demo",
                        name=f"{game}-{kind.removeprefix(game + '-')}-{index}",
                        game=game,
                        endpoint="" if outbound else bot.address,
                        version="1",
                        transport=pb.BOT_TRANSPORT_OUTBOUND
                        if outbound
                        else pb.BOT_TRANSPORT_STREAM,
                    ),
                    token=owner_token,
                )
                owner_token = owner_token or registered.owner_token
                if outbound:
                    stop_bot(bot.process)  # its place is taken by one that dials out
                    processes.append(
                        connect_bot(kind, service.address, registered.bot.bot_id, owner_token)
                    )
            client.call(
                "CreateLadder",
                pb.CreateLadderRequest(
                    config=pb.LadderConfig(
                        name=f"{game}-demo",
                        settings=options_pb2.GameSettings(
                            game=game, num_seats=DEMO_SEATS.get(game, 2)
                        ),
                        move_time_ms=2000,
                        time_bank_ms=10_000,
                        max_faults=5,
                        duplicate_deals=False,
                        concurrency=2,
                        allow_self_play=True,  # every demo bot is the one owner's, "demo"
                    )
                ),
            )
        console.print(
            "Registered the bots (each plays 2 validation matches against the house random "
            f"bot first) and created {len(games)} ladders. Playing {matches} matches each…"
        )
        _follow(client, games, matches)
        for game in games:
            response = client.call("GetStandings", pb.GetStandingsRequest(ladder=f"{game}-demo"))
            console.print(standings_table(response))
        console.print(
            "\nWhere to look next:\n"
            f"  service log      {workdir / 'arena.log'}\n"
            f"  database         {workdir / 'arena.sqlite3'}"
            + ("\n" if kept else "  (deleted when the demo ends: keep them with --workdir DIR)\n")
            + "  your own bot     docs/bot-authors.md; test it with: arena play --game oh-hell "
            "--bot me=HOST:PORT --vs heuristic\n"
            "  keep it running  arena serve --admin-token-file FILE, then arena register / "
            "arena standings / arena watch MATCH_ID (README.md, 'Running a ladder')"
        )
        return 0
    finally:
        console.print("Stopping the bots and the service…")
        for process in processes:
            stop_bot(process.process)
        stop_bot(service.process, grace_s=15)
        log.close()


def _follow(client: ArenaClient, games: Sequence[str], matches: int) -> None:
    with Progress(
        TextColumn("[bold]{task.description:24}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[leader]}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        tasks = {g: progress.add_task(f"{g}-demo", total=matches, leader="") for g in games}
        while True:
            ladders = {
                ladder.config.name: ladder
                for ladder in client.call("ListLadders", pb.ListLaddersRequest()).ladders
            }
            done = True
            for game, task in tasks.items():
                ladder = ladders[f"{game}-demo"]
                standings = client.call(
                    "GetStandings", pb.GetStandingsRequest(ladder=ladder.ladder_id)
                ).standings
                leader = f"leader: {standings[0].bot.name}" if standings else "validating…"
                finished = min(ladder.matches_finished, matches)
                progress.update(task, completed=finished, leader=leader)
                done = done and finished >= matches
            if done:
                return
            time.sleep(0.5)


def cmd_demo(args: argparse.Namespace) -> int:
    """Entry point of ``arena demo``."""
    games = args.game or [g for g in DEMO_SEATS if g in STATE_CLASSES]
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run_demo(games, args.matches, args.workdir, args.seed)
    with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
        return run_demo(games, args.matches, Path(tmp), args.seed, kept=False)
