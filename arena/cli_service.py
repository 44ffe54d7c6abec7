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
from arena.endpoint_guard import GuardPolicy, parse_networks
from arena.ladder import ArenaConfig
from arena.server import ServeOptions, serve
from arena.store.db import DatabaseInUse
from botkit.server import ListenError
from botkit.tls import ClientTls, ServerTls, TlsConfigError
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
    try:
        networks = parse_networks(args.allow_endpoint_network)
    except ValueError as error:
        raise SystemExit(f"error: --allow-endpoint-network: {error}") from None
    if (args.tls_cert is None) != (args.tls_key is None):
        raise SystemExit("error: --tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise SystemExit("error: --tls-client-ca needs --tls-cert and --tls-key")
    options = ServeOptions(
        listen=args.listen,
        metrics_listen=args.metrics_listen or None,
        database=args.database_url or args.db,
        admin_token=token,
        shutdown_grace_s=args.shutdown_grace_s,
        endpoint_policy=GuardPolicy(args.allow_private_endpoints, networks),
        arena=ArenaConfig(
            worker_id=args.worker_id,
            workers=args.workers,
            health_interval_s=args.health_interval_s,
        ),
        tls=ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None,
        bot_tls=ClientTls(args.bot_ca_file, args.bot_client_cert, args.bot_client_key),
    )

    async def main() -> None:
        import trio

        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve, options)
            print(f"LISTENING {address}", flush=True)

    try:
        aio_bridge.run(main)
    except BaseException as error:
        # A port in use, a database another arena holds, a bad TLS file: one line, exit 1.
        startup = _startup_error(error)
        if startup is None:
            raise
        raise SystemExit(f"error: {startup}") from None
    return 0


STARTUP_ERRORS = (ListenError, DatabaseInUse, TlsConfigError)
"""What ``arena serve`` reports in one line, without a traceback."""


def _startup_error(error: BaseException) -> BaseException | None:
    """The start-up error in ``error`` (alone, or alone in nested exception groups), if any."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error if isinstance(error, STARTUP_ERRORS) else None


def client_tls(args: argparse.Namespace) -> ClientTls | None:
    """The TLS a client command asked for (``--tls``, ``--ca-file``, client certificate)."""
    wanted = args.tls or args.ca_file or args.client_cert or args.client_key
    return ClientTls(args.ca_file, args.client_cert, args.client_key) if wanted else None


def _new_client(address: str, token: str | None, args: argparse.Namespace) -> ArenaClient:
    try:
        return ArenaClient(address, token, tls=client_tls(args))
    except TlsConfigError as error:
        raise SystemExit(f"error: {error}") from None


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when the arena at ADDRESS reports SERVING."""
    client = _new_client(args.address, None, args)
    try:
        serving = client.serving()
    finally:
        client.close()
    print("SERVING" if serving else "NOT SERVING")
    return 0 if serving else 1


def _client(args: argparse.Namespace) -> ArenaClient:
    return _new_client(args.server, args.token or os.environ.get("ARENA_TOKEN"), args)


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
        allow_self_play=args.allow_self_play,
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
    serve_parser.add_argument(
        "--allow-private-endpoints",
        action="store_true",
        help="turn the endpoint guard off: bots may be at loopback or private addresses "
        "(local use only; the arena's own ports stay refused)",
    )
    serve_parser.add_argument(
        "--allow-endpoint-network",
        action="append",
        default=[],
        metavar="CIDR",
        help="also allow bot endpoints in this network, e.g. house bots at 10.1.0.0/24 "
        "(repeatable)",
    )
    add_serve_tls_arguments(serve_parser)
    serve_parser.set_defaults(run=cmd_serve)

    health_parser = commands.add_parser("health", help="exit 0 if the arena is SERVING")
    health_parser.add_argument("address", nargs="?", default="127.0.0.1:50050")
    add_client_tls_arguments(health_parser)
    health_parser.set_defaults(run=cmd_health)

    def client_parser(name: str, help_text: str) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("--server", default="127.0.0.1:50050")
        parser.add_argument("--token", default=None, help="owner or admin token ($ARENA_TOKEN)")
        add_client_tls_arguments(parser)
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
    create.add_argument(
        "--allow-self-play",
        action="store_true",
        help="let one owner's bots meet in a match (an operator's own ladder)",
    )
    create.set_defaults(run=cmd_create_ladder)
    fetch = client_parser("fetch", "download a match record")
    fetch.add_argument("match_id")
    fetch.add_argument("out", type=Path)
    fetch.set_defaults(run=cmd_fetch)


def add_serve_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """``arena serve``'s TLS options: for its API, and for the bots it dials."""
    group = parser.add_argument_group("TLS")
    group.add_argument(
        "--tls-cert", default=None, help="PEM certificate chain: serve the API on TLS"
    )
    group.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    group.add_argument(
        "--tls-client-ca",
        default=None,
        help="PEM CA file: API clients must show a certificate it signed (mutual TLS)",
    )
    group.add_argument(
        "--bot-ca-file",
        default=None,
        help="PEM CA file to verify tls:// bot endpoints (default: gRPC's default roots)",
    )
    group.add_argument(
        "--bot-client-cert",
        default=None,
        help="PEM certificate the arena shows to tls:// bots (mutual TLS)",
    )
    group.add_argument(
        "--bot-client-key", default=None, help="PEM private key of --bot-client-cert"
    )


def add_client_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """A client command's TLS options for the arena API."""
    group = parser.add_argument_group("TLS")
    group.add_argument(
        "--tls",
        action="store_true",
        default=os.environ.get("ARENA_TLS", "").lower() in ("1", "true", "yes"),
        help="connect with TLS, verified against gRPC's default roots ($ARENA_TLS=1)",
    )
    group.add_argument(
        "--ca-file",
        default=os.environ.get("ARENA_CA_FILE") or None,
        help="PEM CA file to verify the server with (implies --tls; $ARENA_CA_FILE)",
    )
    group.add_argument("--client-cert", default=None, help="PEM client certificate (mutual TLS)")
    group.add_argument("--client-key", default=None, help="PEM private key of --client-cert")
