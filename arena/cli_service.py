"""``arena serve`` and the client subcommands of the arena API."""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import os
import sys
from pathlib import Path

import grpc
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.cli_args import count as _count
from arena.cli_args import game_type_of, parse_options, read_token_file, seconds_or_zero
from arena.cli_args import positive as _positive
from arena.cli_args import positive_float as _positive_float
from arena.client import ArenaClient
from arena.endpoint_guard import GuardPolicy, parse_networks
from arena.ladder import ArenaConfig
from arena.limits import LimitsConfig, Rate, retry_after
from arena.render import literal
from arena.server import ServeOptions, serve
from arena.store.coordination import WorkerIdInUse, default_worker_id
from arena.store.db import DatabaseInUse
from arena.store.repository import MAX_FAILURES
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from netkit.listen import ListenError
from netkit.tls import ClientTls, ServerTls, TlsConfigError
from referee import aio_bridge

console = Console(width=None if sys.stdout.isatty() else 110)

ROLE_CHOICES: dict[str, tuple[str, ...]] = {
    "all": ("scheduler", "referee"),
    "scheduler": ("scheduler",),
    "referee": ("referee",),
    "api": (),
}
"""``--role`` values and the engine roles each runs (every process serves the API)."""

STATE_NAMES = {
    value: name.removeprefix("BOT_STATE_").lower() for name, value in pb.BotState.items()
}


def _admin_token(args: argparse.Namespace) -> str:
    if getattr(args, "admin_token_file", None):
        return read_token_file(args.admin_token_file)
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
        web_listen=args.web_listen or None,
        database=args.database_url or args.db,
        admin_token=token,
        shutdown_grace_s=args.shutdown_grace_s,
        endpoint_policy=GuardPolicy(args.allow_private_endpoints, networks),
        arena=ArenaConfig(
            worker_id=args.worker_id or default_worker_id(),
            roles=ROLE_CHOICES[args.role],
            advertise_address=args.advertise_address,
            lease_s=args.lease_s,
            workers=args.workers,
            validation_workers=args.validation_workers,
            health_interval_s=args.health_interval_s,
            max_match_failures=args.max_match_failures,
        ),
        tls=ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None,
        bot_tls=ClientTls(args.bot_ca_file, args.bot_client_cert, args.bot_client_key),
        peer_tls=_peer_tls(args),
        limits=LimitsConfig(
            peer_requests=args.limit_peer_requests,
            peer_new_owners=args.limit_peer_new_owners,
            token_writes=args.limit_token_writes,
            peer_watch_streams=args.limit_peer_watch_streams,
            watch_streams=args.limit_watch_streams,
            owner_bots=args.limit_owner_bots,
            owner_registrations_per_hour=args.limit_owner_registrations,
            registration_open=args.registration == "open",
        ),
    )

    async def main() -> None:
        import trio

        web: list[str] = []  # the web UI's URL, said after the API's address
        async with trio.open_nursery() as nursery:
            address = await nursery.start(functools.partial(serve, options, web_started=web.append))
            print(f"LISTENING {address}", flush=True)
            for url in web:
                print(f"WEB {url}", flush=True)

    try:
        aio_bridge.run(main)
    except BaseException as error:
        # A port in use, a database another arena holds, a bad TLS file: one line, exit 1.
        startup = _startup_error(error)
        if startup is None:
            raise
        raise SystemExit(f"error: {startup}") from None
    return 0


def _peer_tls(args: argparse.Namespace) -> ClientTls | None:
    """How this process calls the other arena processes' APIs: TLS when it serves TLS itself
    (they serve as it does) or a ``--peer-*`` file is given; else plaintext."""
    files = (args.peer_ca_file, args.peer_client_cert, args.peer_client_key)
    if args.tls_cert is None and not any(files):
        return None
    return ClientTls(*files)


STARTUP_ERRORS = (ListenError, DatabaseInUse, TlsConfigError, WorkerIdInUse)
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
    token = args.token or os.environ.get("ARENA_TOKEN")
    if getattr(args, "token_file", None):
        token = read_token_file(args.token_file)
    return _new_client(args.server, token, args)


def _fail(error: grpc.RpcError) -> int:
    """Print a refused call's status, detail and (over a limit) when to try again; exit 2."""
    line = Text.assemble((error.code().name, "red"), ": ", literal(error.details() or ""))
    trailing = getattr(error, "trailing_metadata", None)
    seconds = retry_after(trailing() if callable(trailing) else None)
    if seconds is not None:
        line.append(f"; retry after {seconds} s")
    console.print(line)
    return 2


def _say(*parts: str | tuple[str, str]) -> None:
    """Print plain text and (text, style) pairs; text from the server is never markup."""
    console.print(
        Text.assemble(*(literal(p) if isinstance(p, str) else literal(*p) for p in parts))
    )


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
    _say(
        "registered bot ",
        (response.bot.bot_id, "bold"),
        f" ({response.bot.name}): {STATE_NAMES[response.bot.state]}",
    )
    if response.owner_token:
        _say("owner token (shown once, keep it): ", (response.owner_token, "bold"))
    return 0


def cmd_ladders(args: argparse.Namespace) -> int:
    """List ladders."""
    try:
        ladders = _client(args).call("ListLadders", pb.ListLaddersRequest()).ladders
    except grpc.RpcError as error:
        return _fail(error)
    table = Table(title="ladders")
    for column in ("id", "name", "game", "seats", "bots", "matches"):
        table.add_column(column, overflow="fold")
    for ladder in ladders:
        config = ladder.config
        table.add_row(
            literal(ladder.ladder_id),
            literal(config.name),
            literal(config.settings.game),
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
        title=literal(
            f"{ladder.config.name} ({ladder.config.settings.game}, "
            f"{ladder.matches_finished} matches{page})"
        )
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
        table.add_column(  # names wrap, never cut: overflow="fold"
            column,
            justify="left" if column in ("bot", "owner", "state") else "right",
            overflow="fold",
        )
    for standing in response.standings:
        table.add_row(
            str(standing.position),
            literal(standing.bot.name),
            literal(standing.bot.owner),
            f"{standing.rating:.2f}",
            f"{standing.mu:.2f}",
            f"{standing.sigma:.2f}",
            str(standing.matches),
            str(standing.first_places),
            f"{standing.fault_rate:.2f}",
            _state_text(standing.bot),
        )
    return table


def _state_text(bot: pb.Bot) -> str:
    """The bot's state; for a bot that dials out, whether it is connected now."""
    state = STATE_NAMES[bot.state]
    if bot.transport == pb.BOT_TRANSPORT_OUTBOUND:
        return f"{state}, {'connected' if bot.connected else 'not connected'}"
    return state


def cmd_standings(args: argparse.Namespace) -> int:
    """Print a ladder's standings."""
    try:
        request = pb.GetStandingsRequest(ladder=args.ladder, limit=args.top, offset=args.skip)
        response = _client(args).call("GetStandings", request)
    except grpc.RpcError as error:
        return _fail(error)
    console.print(standings_table(response))
    return 0


def cmd_create_ladder(args: argparse.Namespace) -> int:
    """Create a ladder (admin token)."""
    from referee.codec.common import option_value

    game_type = game_type_of(args.game)
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
        min_sigma=args.min_sigma,
        sigma_growth_per_day=args.sigma_growth_per_day,
        new_version_rating=(
            pb.NEW_VERSION_RATING_INHERIT
            if args.new_version == "inherit"
            else pb.NEW_VERSION_RATING_FRESH
        ),
    )
    try:
        ladder = _client(args).call("CreateLadder", pb.CreateLadderRequest(config=config)).ladder
    except grpc.RpcError as error:
        return _fail(error)
    _say("created ladder ", (ladder.config.name, "bold"), f" ({ladder.ladder_id})")
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
    _say(f"written {args.out} (arena record {args.out} --moves; arena replay {args.out})")
    return 0


def cmd_create_owner(args: argparse.Namespace) -> int:
    """Create an owner and print its token once (admin token)."""
    try:
        response = _client(args).call("CreateOwner", pb.CreateOwnerRequest(owner=args.owner))
    except grpc.RpcError as error:
        return _fail(error)
    _say("created owner ", (response.owner, "bold"))
    _say("owner token (shown once, hand it to the owner): ", (response.owner_token, "bold"))
    return 0


def cmd_rotate_token(args: argparse.Namespace) -> int:
    """Replace an owner's token (the owner's token, or the admin's); prints the new one."""
    try:
        response = _client(args).call("RotateToken", pb.RotateTokenRequest(owner=args.owner))
    except grpc.RpcError as error:
        return _fail(error)
    _say("new owner token (shown once; the old one no longer works): ")
    _say((response.owner_token, "bold"))
    return 0


ADMIN_BOT_STATES = {
    "pause": pb.BOT_STATE_PAUSED,
    "resume": pb.BOT_STATE_ACTIVE,
    "retire": pb.BOT_STATE_RETIRED,
}


def cmd_admin(args: argparse.Namespace) -> int:
    """The operator's controls (admin token): pause, resume, retire a bot; ban, unban an owner;
    revoke an owner's token."""
    client = _client(args)
    try:
        if args.action in ADMIN_BOT_STATES:
            request = pb.AdminSetBotStateRequest(
                bot_id=args.target, state=ADMIN_BOT_STATES[args.action], reason=args.reason
            )
            bot = client.call("AdminSetBotState", request).bot
            _say(f"bot {bot.bot_id} ({bot.owner}/{bot.name}): {STATE_NAMES[bot.state]}")
        elif args.action == "ban":
            ban = pb.BanOwnerRequest(owner=args.target, reason=args.reason)
            paused = client.call("BanOwner", ban).bots_paused
            _say(f"owner {args.target} banned; {paused} bot(s) left matchmaking")
        elif args.action == "unban":
            released = client.call(
                "UnbanOwner", pb.UnbanOwnerRequest(owner=args.target)
            ).bots_released
            _say(f"owner {args.target} unbanned; {released} bot(s) stay paused until resumed")
        else:
            client.call("RevokeToken", pb.RevokeTokenRequest(owner=args.target))
            _say(f"owner {args.target}'s token revoked (arena rotate-token gives a new one)")
    except grpc.RpcError as error:
        return _fail(error)
    return 0


def _rate(text: str) -> Rate:
    try:
        return Rate.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """``arena serve``'s limits; docs/operating-limits.md says why each default is what it is."""
    defaults = LimitsConfig()
    limits = parser.add_argument_group(
        "limits", "RATE is N/s, N/min, N/h or N/day (a burst of N, refilled at that rate) or off"
    )
    limits.add_argument(
        "--registration",
        choices=("open", "closed"),
        default="open",
        help="open: anyone may create an owner by registering (within the limits); closed: "
        "only the admin creates owners (arena create-owner). Default: open",
    )
    for flag, default, help_text in (
        ("peer-requests", defaults.peer_requests, "every call from one address"),
        ("peer-new-owners", defaults.peer_new_owners, "registrations making an owner, per address"),
        ("token-writes", defaults.token_writes, "changes (register, update, ...) per owner token"),
    ):
        limits.add_argument(
            f"--limit-{flag}",
            type=_rate,
            default=default,
            metavar="RATE",
            help=f"{help_text} (default {default})",
        )
    for flag, number, help_text in (
        ("peer-watch-streams", defaults.peer_watch_streams, "watch streams open per address"),
        ("watch-streams", defaults.watch_streams, "watch streams open in all"),
        ("owner-bots", defaults.owner_bots, "bots per owner, not counting retired ones"),
        ("owner-registrations", defaults.owner_registrations_per_hour, "bots per owner per hour"),
    ):
        limits.add_argument(
            f"--limit-{flag}",
            type=_count,
            default=number,
            metavar="N",
            help=f"{help_text} (default {number}; 0: no limit)",
        )


FAILURE_KIND_NAMES = {
    value: name.removeprefix("MATCH_FAILURE_KIND_").lower()
    for name, value in pb.MatchFailureKind.items()
}


def cmd_parked(args: argparse.Namespace) -> int:
    """List the parked matches (admin token)."""
    try:
        response = _client(args).call(
            "ListParkedMatches", pb.ListParkedMatchesRequest(limit=args.limit)
        )
    except grpc.RpcError as error:
        return _fail(error)
    table = Table(title=f"parked matches ({response.total})")
    table.add_column("match", no_wrap=True, min_width=32)  # whole: it is what requeue takes
    for column in ("ladder", "kind", "failures", "last failure"):
        table.add_column(column)
    table.add_column("detail", overflow="fold")
    for match in response.matches:
        table.add_row(
            match.match_id,
            match.ladder_id or "-",
            match.kind,
            str(match.failures),
            FAILURE_KIND_NAMES[match.failure_kind],
            literal(match.failure_detail),
        )
    console.print(table)
    if response.matches:
        console.print("arena requeue MATCH_ID (play it again) or arena void MATCH_ID (drop it)")
    return 0


def cmd_workers(args: argparse.Namespace) -> int:
    """List the arena's processes and who holds which lease (admin token)."""
    try:
        response = _client(args).call("ListWorkers", pb.ListWorkersRequest())
    except grpc.RpcError as error:
        return _fail(error)
    table = Table(title=f"arena processes ({sum(w.alive for w in response.workers)} alive)")
    for column in ("worker", "roles", "state", "playing", "address", "host", "pid"):
        table.add_column(column, overflow="fold")
    for worker in response.workers:
        state = "draining" if worker.draining else "alive" if worker.alive else "gone"
        table.add_row(
            literal(worker.worker_id),
            ", ".join(worker.roles) or "api",
            state if worker.alive else f"[red]{state}[/red]",
            str(worker.matches_playing),
            literal(worker.address),
            literal(worker.host),
            str(worker.pid),
        )
    console.print(table)
    leases = Table(title="leadership leases")
    for column in ("lease", "holder", "epoch", "valid"):
        leases.add_column(column, overflow="fold")
    for lease in response.leases:
        leases.add_row(
            literal(lease.name), literal(lease.holder), str(lease.epoch), str(lease.valid).lower()
        )
    console.print(leases)
    return 0


def cmd_requeue(args: argparse.Namespace) -> int:
    """Put a parked match back in the queue (admin token)."""
    try:
        _client(args).call("RequeueMatch", pb.RequeueMatchRequest(match_id=args.match_id))
    except grpc.RpcError as error:
        return _fail(error)
    _say("match ", (args.match_id, "bold"), " is back in the queue")
    return 0


def cmd_void(args: argparse.Namespace) -> int:
    """End a parked match unplayed (admin token)."""
    try:
        _client(args).call(
            "VoidMatch", pb.VoidMatchRequest(match_id=args.match_id, reason=args.reason)
        )
    except grpc.RpcError as error:
        return _fail(error)
    _say("match ", (args.match_id, "bold"), " voided (not rated)")
    return 0


def add_client_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse.ArgumentParser:
    """A subcommand that calls the arena API: ``--server``, the token options and TLS."""
    parser = commands.add_parser(name, help=help_text)
    parser.add_argument("--server", default="127.0.0.1:50050")
    parser.add_argument("--token", default=None, help="owner or admin token ($ARENA_TOKEN)")
    add_client_tls_arguments(parser)
    parser.add_argument(
        "--token-file", default=None, help="read the token from this file (not shown in ps)"
    )
    return parser


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the service's subcommands to the ``arena`` parser."""
    serve_parser = commands.add_parser("serve", help="run the arena service (API + ladders)")
    serve_parser.add_argument("--listen", default="127.0.0.1:50050")
    serve_parser.add_argument(
        "--metrics-listen",
        default="127.0.0.1:9464",
        help="host:port for Prometheus /metrics ('' to disable)",
    )
    serve_parser.add_argument(
        "--web-listen",
        default="127.0.0.1:8080",
        help="host:port of the web UI: ladders, standings, bots, replays, live tables "
        "('' to disable)",
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
        "--worker-id",
        default=None,
        help="this process's id, unique among the live processes on one database (default: "
        "$CARDARENA_WORKER_ID, else the host name and a random suffix); a live id refuses to "
        "start",
    )
    serve_parser.add_argument(
        "--role",
        choices=tuple(ROLE_CHOICES),
        default="all",
        help="what this process runs besides the API it always serves: scheduler "
        "(matchmaking, validation, health sweeps; one leader per ladder), referee (plays "
        "matches), api (nothing more), all (default)",
    )
    serve_parser.add_argument(
        "--advertise-address",
        default="",
        help="HOST:PORT where other arena processes reach this one's API (default: --listen, "
        "or this host's name when listening on every interface)",
    )
    serve_parser.add_argument(
        "--lease-s",
        type=_positive_float,
        default=10.0,
        help="this process's registration lease, renewed every quarter of it: its matches "
        "are taken over within this plus 2 s of its death",
    )
    serve_parser.add_argument(
        "--workers", type=_positive, default=16, help="matches played at once"
    )
    serve_parser.add_argument(
        "--validation-workers",
        type=_positive,
        default=None,
        help="validation matches played at once, at most (default: a quarter of --workers, "
        "at least 1): registrations cannot hold up the ladders",
    )
    serve_parser.add_argument("--health-interval-s", type=_positive_float, default=30.0)
    serve_parser.add_argument("--shutdown-grace-s", type=seconds_or_zero, default=10.0)
    serve_parser.add_argument(
        "--max-match-failures",
        type=_positive,
        default=MAX_FAILURES,
        help="failed attempts at a match (not a bot's fault) before it is parked for an "
        "operator (arena parked / requeue / void)",
    )
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
    _add_limit_flags(serve_parser)
    serve_parser.set_defaults(run=cmd_serve)

    health_parser = commands.add_parser("health", help="exit 0 if the arena is SERVING")
    health_parser.add_argument("address", nargs="?", default="127.0.0.1:50050")
    add_client_tls_arguments(health_parser)
    health_parser.set_defaults(run=cmd_health)

    def client_parser(name: str, help_text: str) -> argparse.ArgumentParser:
        return add_client_command(commands, name, help_text)

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
    create = client_parser("create-ladder", "create a ladder (admin token)")
    create.add_argument("name")
    create.add_argument("--game", required=True)
    create.add_argument("--seats", type=_count, default=0, help="default: the game's fewest")
    create.add_argument("--option", action="append", default=[], help="NAME=VALUE house rule")
    create.add_argument("--move-time-ms", type=_positive, default=1000)
    create.add_argument("--time-bank-ms", type=_count, default=10_000)
    create.add_argument("--max-faults", type=_count, default=5)
    create.add_argument("--duplicate", action="store_true", help="duplicate deals")
    create.add_argument("--concurrency", type=_positive, default=4, help="matches at once")
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
    create.add_argument(
        "--min-sigma", type=float, default=0.0, help="sigma never goes below this (0: no floor)"
    )
    create.add_argument(
        "--new-version",
        choices=("fresh", "inherit"),
        default="fresh",
        help="a bot's new version starts with a fresh rating or its old mean (sigma reset)",
    )
    create.add_argument(
        "--sigma-growth-per-day",
        type=float,
        default=0.0,
        help="sigma regained per idle day, in quadrature like openskill's tau (0: none)",
    )
    create.set_defaults(run=cmd_create_ladder)
    fetch = client_parser("fetch", "download a match record")
    fetch.add_argument("match_id")
    fetch.add_argument("out", type=Path)
    fetch.set_defaults(run=cmd_fetch)
    create_owner = client_parser("create-owner", "create an owner, print its token (admin token)")
    create_owner.add_argument("owner")
    create_owner.set_defaults(run=cmd_create_owner)
    rotate = client_parser("rotate-token", "replace an owner's token (owner or admin token)")
    rotate.add_argument("owner")
    rotate.set_defaults(run=cmd_rotate_token)
    admin = client_parser("admin", "the operator's controls (admin token)")
    admin.add_argument(
        "action",
        choices=[*ADMIN_BOT_STATES, "ban", "unban", "revoke-token"],
        help="pause/resume/retire BOT_ID, ban/unban OWNER, revoke-token OWNER",
    )
    admin.add_argument("target", help="a bot id (pause, resume, retire) or an owner's name")
    admin.add_argument("--reason", default="", help="why (shown to the owner; pause/retire/ban)")
    admin.set_defaults(run=cmd_admin)

    parked = client_parser("parked", "list matches parked after failing too often (admin token)")
    parked.add_argument("--limit", type=_positive, default=100, help="at most this many")
    parked.set_defaults(run=cmd_parked)
    workers = client_parser(
        "workers", "list the arena's processes and their leadership leases (admin token)"
    )
    workers.set_defaults(run=cmd_workers)
    requeue = client_parser("requeue", "put a parked match back in the queue (admin token)")
    requeue.add_argument("match_id")
    requeue.set_defaults(run=cmd_requeue)
    void = client_parser("void", "end a parked match unplayed, not rated (admin token)")
    void.add_argument("match_id")
    void.add_argument("--reason", default="", help="why, for the match's record")
    void.set_defaults(run=cmd_void)


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
    group.add_argument(
        "--peer-ca-file",
        default=None,
        help="PEM CA file to verify the other arena processes' TLS APIs with (a watch relayed "
        "to the process playing the match; default: gRPC's default roots)",
    )
    group.add_argument(
        "--peer-client-cert",
        default=None,
        help="PEM certificate this process shows to the other arena processes' APIs "
        "(when they require one: --tls-client-ca)",
    )
    group.add_argument(
        "--peer-client-key", default=None, help="PEM private key of --peer-client-cert"
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
