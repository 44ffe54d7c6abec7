"""``arena demo``: the main job, end to end on one machine with the embedded SQLite store.

Starts the arena service and the sample bots as separate processes, registers the bots
through the API, creates one ladder per game, shows the ladders' progress, prints the
standings and where to look next, and stops everything cleanly (also on Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena.cli_service import standings_table
from arena.client import ArenaClient
from arena.local_bots import (
    BotProcess,
    arena_serve_command,
    connect_bot,
    sample_bot_kinds,
    start_many,
    start_server,
    stop_bot,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.games.registry import ENTRIES, GAMES

console = Console(width=None if sys.stdout.isatty() else 110)


def lineup(game: str, seats: int) -> list[str]:
    """Bot kinds entered in a game's demo ladder: its heuristic bot if any, and random bots."""
    kinds = [kind for kind in (f"{game}-heuristic",) if kind in sample_bot_kinds()]
    return kinds + ["random"] * max(2, seats + 1 - len(kinds))


def run_demo(
    games: Sequence[str],
    matches: int,
    workdir: Path,
    seed: int,
    kept: bool = True,
    web: DemoWeb | None = None,
) -> int:
    """Play the demo; returns the exit code."""
    web = web or DemoWeb()
    admin = secrets.token_urlsafe(16)  # written to a file, never a command-line argument
    token_file = workdir / "admin-token"
    token_file.write_text(admin)
    command = arena_serve_command(
        token_file,
        ["--db", str(workdir / "arena.sqlite3")],
        12,
        "--health-interval-s",
        "5",
        *web.options(),
    )
    log = (workdir / "arena.log").open("w")
    console.print("Starting the arena service (embedded SQLite) as its own process…")
    service = start_server("arena", command, stderr=log.fileno())
    processes: list[BotProcess] = []
    try:
        plan = {game: lineup(game, ENTRIES[game].demo_seats) for game in games}
        kinds = [kind for game in games for kind in plan[game]]
        console.print(f"Starting {len(kinds)} sample bots, each its own gRPC server process…")
        processes = start_many(kinds, seed)
        url = web.read_url(service)
        if url:
            console.print(f"Web UI: [bold]{url}[/] (up until the demo ends)")
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
                if outbound:  # it dials with its own key, never the owner's token
                    bot_id = registered.bot.bot_id
                    key = client.call(
                        "CreateBotKey", pb.CreateBotKeyRequest(bot_id=bot_id), token=owner_token
                    ).bot_key
                    stop_bot(bot.process)  # its place is taken by one that dials out
                    processes.append(connect_bot(kind, service.address, bot_id, key))
            client.call(
                "CreateLadder",
                pb.CreateLadderRequest(
                    config=pb.LadderConfig(
                        name=f"{game}-demo",
                        settings=options_pb2.GameSettings(
                            game=game, num_seats=ENTRIES[game].demo_seats
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
            + (f"\n  in a browser     {url}" if url else "")
        )
        if url and web.keep_serving:
            console.print(f"Still serving {url}: Ctrl-C to stop.")
            with contextlib.suppress(KeyboardInterrupt):
                while service.process.poll() is None:
                    time.sleep(1)
        return 0
    finally:
        console.print("Stopping the bots and the service…")
        for process in processes:
            stop_bot(process.process)
        stop_bot(service.process, grace_s=15)
        log.close()


@dataclass(frozen=True)
class DemoWeb:
    """The demo's web UI: where it listens ('' for none) and whether it stays up after the
    standings."""

    listen: str = "127.0.0.1:8080"
    keep_serving: bool = False

    def options(self) -> list[str]:
        """``arena serve`` options: the port asked for, or any free one when it is taken."""
        if not self.listen:
            return []
        host, _, port = self.listen.rpartition(":")
        taken = port != "0" and _taken(host.strip("[]"), int(port))
        return ["--web-listen", f"{host}:0" if taken else self.listen]

    def read_url(self, service: BotProcess) -> str:
        """The URL ``arena serve`` prints after its address (``WEB URL``), if it serves one."""
        if not self.listen or service.process.stdout is None:
            return ""
        line = service.process.stdout.readline()
        return line.split()[1] if line.startswith("WEB ") else ""


def _taken(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


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
    games = args.game or [entry.name for entry in GAMES]
    web = DemoWeb(args.web_listen, args.keep_serving)
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run_demo(games, args.matches, args.workdir, args.seed, web=web)
    with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
        return run_demo(games, args.matches, Path(tmp), args.seed, kept=False, web=web)
