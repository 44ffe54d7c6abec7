"""``arena serve`` and the client subcommands of the arena API."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from pathlib import Path

import grpc
from rich.console import Console
from rich.table import Table

from arena.client import ArenaClient
from arena.ladder import ArenaConfig
from arena.server import ServeOptions, serve
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee import aio_bridge

console = Console(width=None if sys.stdout.isatty() else 110)

STATE_NAMES = {
    value: name.removeprefix("BOT_STATE_").lower() for name, value in pb.BotState.items()
}


def _admin_token(args: argparse.Namespace) -> str:
    if getattr(args, "admin_token_file", None):
        return Path(args.admin_token_file).read_text().strip()
    return os.environ.get("ARENA_ADMIN_TOKEN", "")


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the arena service until SIGINT/SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # Thousands of matches allocate many short-lived objects: collecting the young generation
    # every 50,000 allocations instead of 700 gave +34 % decisions/s at 1,000 matches in flight
    # and +60 % at 3,000 (benchmarks/concurrency.py --gc-threshold).
    gc.set_threshold(50_000, 20, 20)
    token = _admin_token(args)
    if not token:
        raise SystemExit("error: give the admin token (--admin-token-file or ARENA_ADMIN_TOKEN)")
    options = ServeOptions(
        listen=args.listen,
        metrics_listen=args.metrics_listen or None,
        database=args.database_url or args.db,
        admin_token=token,
        shutdown_grace_s=args.shutdown_grace_s,
        arena=ArenaConfig(
            worker_id=args.worker_id,
            workers=args.workers,
            health_interval_s=args.health_interval_s,
        ),
    )

    async def main() -> None:
        import trio

        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve, options)
            print(f"LISTENING {address}", flush=True)

    aio_bridge.run(main)
    return 0


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when the arena at ADDRESS reports SERVING."""
    client = ArenaClient(args.address)
    try:
        serving = client.serving()
    finally:
        client.close()
    print("SERVING" if serving else "NOT SERVING")
    return 0 if serving else 1


def _client(args: argparse.Namespace) -> ArenaClient:
    return ArenaClient(args.server, args.token or os.environ.get("ARENA_TOKEN"))


def _fail(error: grpc.RpcError) -> int:
    console.print(f"[red]{error.code().name}[/]: {error.details()}")
    return 2


def cmd_register(args: argparse.Namespace) -> int:
    """Register a bot (creates the owner and prints its token once)."""
    client = _client(args)
    try:
        response = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(
                owner=args.owner,
                name=args.name,
                game=args.game,
                endpoint=args.endpoint,
                version=args.version,
            ),
        )
    except grpc.RpcError as error:
        return _fail(error)
    console.print(
        f"registered bot [bold]{response.bot.bot_id}[/] ({response.bot.name}): "
        f"{STATE_NAMES[response.bot.state]}"
    )
    if response.owner_token:
        console.print(f"owner token (shown once, keep it): [bold]{response.owner_token}[/]")
    return 0


def cmd_ladders(args: argparse.Namespace) -> int:
    """List ladders."""
    try:
        ladders = _client(args).call("ListLadders", pb.ListLaddersRequest()).ladders
    except grpc.RpcError as error:
        return _fail(error)
    table = Table(title="ladders")
    for column in ("id", "name", "game", "seats", "bots", "matches"):
        table.add_column(column)
    for ladder in ladders:
        config = ladder.config
        table.add_row(
            ladder.ladder_id,
            config.name,
            config.settings.game,
            str(config.settings.num_seats),
            str(ladder.bots),
            str(ladder.matches_finished),
        )
    console.print(table)
    return 0


def standings_table(response: pb.GetStandingsResponse) -> Table:
    """A ladder's standings as a table."""
    ladder = response.ladder
    shown = len(response.standings)
    page = ""
    if response.total > shown:  # a page: say which part of the ladder this is
        first = response.standings[0].position if shown else 0
        page = f", #{first}-{first + shown - 1} of {response.total} bots"
    table = Table(
        title=f"{ladder.config.name} ({ladder.config.settings.game}, "
        f"{ladder.matches_finished} matches{page})"
    )
    for column in (
        "#",
        "bot",
        "owner",
        "rating",
        "μ",
        "σ",
        "matches",
        "firsts",
        "faults/100",
        "state",
    ):
        table.add_column(column, justify="left" if column in ("bot", "owner", "state") else "right")
    for standing in response.standings:
        table.add_row(
            str(standing.position),
            standing.bot.name,
            standing.bot.owner,
            f"{standing.rating:.2f}",
            f"{standing.mu:.2f}",
            f"{standing.sigma:.2f}",
            str(standing.matches),
            str(standing.first_places),
            f"{standing.fault_rate:.2f}",
            STATE_NAMES[standing.bot.state],
        )
    return table


def _count(text: str) -> int:
    """A command-line count: a whole number, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def cmd_standings(args: argparse.Namespace) -> int:
    """Print a ladder's standings."""
    try:
        request = pb.GetStandingsRequest(ladder=args.ladder, limit=args.top, offset=args.skip)
        response = _client(args).call("GetStandings", request)
    except grpc.RpcError as error:
        return _fail(error)
    console.print(standings_table(response))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a match live."""
    try:
        for event in _client(args).watch(args.match_id):
            if event.HasField("move"):
                move = event.move
                flag = " (default after a fault)" if move.defaulted else ""
                console.print(f"#{move.index} seat {move.seat}: {move.description}{flag}")
            else:
                record = event.finished
                console.print(
                    f"finished: ranks {list(record.outcome.ranks)}, "
                    f"scores {list(record.outcome.scores)}"
                )
    except grpc.RpcError as error:
        return _fail(error)
    return 0


def cmd_create_ladder(args: argparse.Namespace) -> int:
    """Create a ladder (admin token)."""
    from arena.cli import parse_options
    from referee.codec.common import option_value
    from referee.games.registry import STATE_CLASSES

    game_type = STATE_CLASSES[args.game].game_type
    settings = options_pb2.GameSettings(game=args.game, num_seats=args.seats or game_type.min_seats)
    for name, value in parse_options(game_type, args.option).items():
        settings.options[name].CopyFrom(option_value(value))
    config = pb.LadderConfig(
        name=args.name,
        settings=settings,
        move_time_ms=args.move_time_ms,
        time_bank_ms=args.time_bank_ms,
        max_faults=args.max_faults,
        duplicate_deals=args.duplicate,
        concurrency=args.concurrency,
        max_matches_per_bot=args.max_matches_per_bot,
    )
    try:
        ladder = _client(args).call("CreateLadder", pb.CreateLadderRequest(config=config)).ladder
    except grpc.RpcError as error:
        return _fail(error)
    console.print(f"created ladder [bold]{ladder.config.name}[/] ({ladder.ladder_id})")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    """Download a match record."""
    try:
        response = _client(args).call(
            "GetMatchRecord", pb.GetMatchRecordRequest(match_id=args.match_id)
        )
    except grpc.RpcError as error:
        return _fail(error)
    args.out.write_bytes(response.record.SerializeToString())
    console.print(f"written {args.out} (arena record {args.out} --moves; arena replay {args.out})")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the service's subcommands to the ``arena`` parser."""
    serve_parser = commands.add_parser("serve", help="run the arena service (API + ladders)")
    serve_parser.add_argument("--listen", default="127.0.0.1:50050")
    serve_parser.add_argument(
        "--metrics-listen",
        default="127.0.0.1:9464",
        help="host:port for Prometheus /metrics ('' to disable)",
    )
    serve_parser.add_argument("--db", default="arena.sqlite3", help="SQLite file")
    serve_parser.add_argument(
        "--database-url", default="", help="postgresql://… to use PostgreSQL instead of SQLite"
    )
    serve_parser.add_argument(
        "--admin-token-file",
        default=None,
        help="file holding the admin token (else $ARENA_ADMIN_TOKEN)",
    )
    serve_parser.add_argument(
        "--worker-id", default="local", help="unique per process sharing a database"
    )
    serve_parser.add_argument("--workers", type=int, default=16, help="matches played at once")
    serve_parser.add_argument("--health-interval-s", type=float, default=30.0)
    serve_parser.add_argument("--shutdown-grace-s", type=float, default=10.0)
    serve_parser.set_defaults(run=cmd_serve)

    health_parser = commands.add_parser("health", help="exit 0 if the arena is SERVING")
    health_parser.add_argument("address", nargs="?", default="127.0.0.1:50050")
    health_parser.set_defaults(run=cmd_health)

    def client_parser(name: str, help_text: str) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("--server", default="127.0.0.1:50050")
        parser.add_argument("--token", default=None, help="owner or admin token ($ARENA_TOKEN)")
        return parser

    register = client_parser("register", "register a bot")
    register.add_argument("--owner", required=True)
    register.add_argument("--name", required=True)
    register.add_argument("--game", required=True)
    register.add_argument("--endpoint", required=True, help="host:port where the bot listens")
    register.add_argument("--version", default="1")
    register.set_defaults(run=cmd_register)
    client_parser("ladders", "list ladders").set_defaults(run=cmd_ladders)
    standings = client_parser("standings", "a ladder's standings")
    standings.add_argument("ladder", help="ladder id or name")
    standings.add_argument("--top", type=_count, default=0, help="show this many (default: all)")
    standings.add_argument("--skip", type=_count, default=0, help="start below the best SKIP")
    standings.set_defaults(run=cmd_standings)
    watch = client_parser("watch", "follow a match live")
    watch.add_argument("match_id")
    watch.set_defaults(run=cmd_watch)
    create = client_parser("create-ladder", "create a ladder (admin token)")
    create.add_argument("name")
    create.add_argument("--game", required=True)
    create.add_argument("--seats", type=int, default=0, help="default: the game's fewest")
    create.add_argument("--option", action="append", default=[], help="NAME=VALUE house rule")
    create.add_argument("--move-time-ms", type=int, default=1000)
    create.add_argument("--time-bank-ms", type=int, default=10_000)
    create.add_argument("--max-faults", type=int, default=5)
    create.add_argument("--duplicate", action="store_true", help="duplicate deals")
    create.add_argument("--concurrency", type=int, default=4, help="matches at once")
    create.add_argument(
        "--max-matches-per-bot",
        type=_count,
        default=0,
        help="most matches one bot plays at once, whatever it announces (0: the default, 4)",
    )
    create.set_defaults(run=cmd_create_ladder)
    fetch = client_parser("fetch", "download a match record")
    fetch.add_argument("match_id")
    fetch.add_argument("out", type=Path)
    fetch.set_defaults(run=cmd_fetch)
