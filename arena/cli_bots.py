"""``arena bot`` (a bot's profile), ``arena pause|resume|retire`` and ``arena update-bot``.

A bot is named by its id or by ``OWNER/NAME`` (names are unique per owner). Pausing, resuming
and retiring take the owner's token (``--as-admin``: the operator's, with a reason shown to the
owner).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from datetime import datetime

import grpc
from rich.table import Table

from arena.cli_args import count
from arena.cli_service import (
    ADMIN_BOT_STATES,
    STATE_NAMES,
    _client,
    _fail,
    _say,
    add_client_command,
    console,
)
from arena.render import STATUS_NAMES, literal
from cardarena.arena.v1 import arena_service_pb2 as pb

SPARKS = "▁▂▃▄▅▆▇█"
TREND_POINTS = 40
"""How many of the latest ratings the trend column draws."""


def sparkline(values: list[float]) -> str:
    """``values`` as a row of block characters, lowest to highest."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low or 1.0
    return "".join(SPARKS[round((v - low) / span * (len(SPARKS) - 1))] for v in values)


def bot_lines(profile: pb.GetBotProfileResponse) -> list[str]:
    """The profile's head in lines: what the server showed this caller (its endpoint and the
    full state detail only with the owner's or the admin's token)."""
    bot = profile.bot
    state = STATE_NAMES[bot.state] + (f": {bot.state_detail}" if bot.state_detail else "")
    lines = [f"{bot.bot_id}  {bot.owner}/{bot.name} {bot.version}  ({bot.game})", f"state: {state}"]
    if bot.endpoint:
        lines.append(f"endpoint: {bot.endpoint}")
    lines.append(f"moves: {profile.moves}")
    if profile.latency_p50_ms:
        lines.append(
            f"answer time: median {profile.latency_p50_ms:.1f} ms, "
            f"p95 {profile.latency_p95_ms:.1f} ms"
        )
    return lines


def ratings_table(profile: pb.GetBotProfileResponse) -> Table:
    """The rating history, one row per ladder: first and latest displayed rating (μ − 3σ),
    best, the latest μ and σ, and a trend of the latest ratings."""
    table = Table(title="rating history (rating = μ − 3σ)")
    table.add_column("ladder", overflow="fold")
    for column in ("rated", "first", "now", "best", "μ", "σ"):
        table.add_column(column, justify="right")
    table.add_column("trend", overflow="fold")
    by_ladder: dict[str, list[pb.RatingPoint]] = defaultdict(list)
    for point in profile.rating_history:
        by_ladder[point.ladder_id].append(point)
    for ladder, points in by_ladder.items():
        ratings = [point.rating for point in points]
        last = points[-1]
        table.add_row(
            literal(ladder),
            str(len(points)),
            f"{ratings[0]:.2f}",
            f"{last.rating:.2f}",
            f"{max(ratings):.2f}",
            f"{last.mu:.2f}",
            f"{last.sigma:.2f}",
            sparkline(ratings[-TREND_POINTS:]),
        )
    return table


def faults_table(profile: pb.GetBotProfileResponse) -> Table:
    """Faults by kind, with their share of the bot's moves."""
    table = Table(title=f"faults ({sum(profile.faults.values())} in {profile.moves} moves)")
    table.add_column("kind")
    table.add_column("count", justify="right")
    table.add_column("per 100 moves", justify="right")
    for kind, times in sorted(profile.faults.items()):
        share = 100 * times / profile.moves if profile.moves else 0.0
        table.add_row(literal(kind), str(times), f"{share:.2f}")
    return table


def recent_table(profile: pb.GetBotProfileResponse) -> Table:
    """The bot's recent matches, newest first: the whole match id (``arena fetch`` and
    ``arena watch`` take it), where, the seat, the result and the faults."""
    table = Table(title="recent matches")
    table.add_column("match", no_wrap=True, min_width=32)
    for column in ("ladder", "finished", "seat", "result", "faults"):
        table.add_column(column, overflow="fold")
    for match in profile.recent_matches:
        status = STATUS_NAMES.get(match.status, "playing")
        result = "withheld" if match.withheld else f"rank {match.rank}, score {match.score}"
        when = datetime.fromtimestamp(match.finished_at_us / 1e6).strftime("%m-%d %H:%M:%S")
        table.add_row(
            match.match_id,
            literal(match.ladder_id or "validation"),
            when if match.finished_at_us else "-",
            str(match.seat),
            literal(f"{status}: {result}"),
            str(match.faults),
        )
    return table


def versions_table(profile: pb.GetBotProfileResponse) -> Table:
    """Every version's figures in each ladder (each version is rated as its own entry)."""
    table = Table(title="versions")
    table.add_column("version", overflow="fold")
    table.add_column("ladder", overflow="fold")
    for column in ("rating", "μ", "σ", "matches", "firsts"):
        table.add_column(column, justify="right")
    for figures in profile.versions:
        table.add_row(
            literal(figures.version + (" (current)" if figures.current else "")),
            literal(figures.ladder_id),
            f"{figures.rating:.2f}",
            f"{figures.mu:.2f}",
            f"{figures.sigma:.2f}",
            str(figures.matches),
            str(figures.first_places),
        )
    return table


def cmd_bot(args: argparse.Namespace) -> int:
    """Print a bot's profile (its endpoint and full state detail with its owner's token)."""
    try:
        request = pb.GetBotProfileRequest(bot_id=args.bot, recent_matches=args.recent)
        profile = _client(args).call("GetBotProfile", request)
    except grpc.RpcError as error:
        return _fail(error)
    for line in bot_lines(profile):
        _say(line)
    if profile.rating_history:
        console.print(ratings_table(profile))
    if profile.versions:
        console.print(versions_table(profile))
    if profile.faults:
        console.print(faults_table(profile))
    if profile.recent_matches:
        console.print(recent_table(profile))
    return 0


def cmd_set_state(args: argparse.Namespace) -> int:
    """Pause, resume or retire a bot: the owner's call, or the operator's with ``--as-admin``."""
    state = ADMIN_BOT_STATES[args.command]
    if args.reason and not args.as_admin:
        raise SystemExit("error: --reason is the operator's (with --as-admin)")
    client = _client(args)
    try:
        if args.as_admin:
            request = pb.AdminSetBotStateRequest(bot_id=args.bot, state=state, reason=args.reason)
            bot = client.call("AdminSetBotState", request).bot
        else:
            bot = client.call(
                "SetBotState", pb.SetBotStateRequest(bot_id=args.bot, state=state)
            ).bot
    except grpc.RpcError as error:
        return _fail(error)
    finally:
        client.close()
    detail = f" ({bot.state_detail})" if bot.state_detail else ""
    _say(f"bot {bot.bot_id} ({bot.owner}/{bot.name}): {STATE_NAMES[bot.state]}{detail}")
    return 0


TRANSPORTS = {
    "unary": pb.BOT_TRANSPORT_UNARY,
    "stream": pb.BOT_TRANSPORT_STREAM,
    "outbound": pb.BOT_TRANSPORT_OUTBOUND,
}
"""``--transport`` names: how the referee reaches the bot (docs/bot-protocol.md)."""


def cmd_update_bot(args: argparse.Namespace) -> int:
    """Change a bot's endpoint, transport or version (owner token); a change is validated
    again."""
    if not (args.endpoint or args.version or args.transport):
        raise SystemExit("error: give --endpoint, --transport, --version or a mix")
    client = _client(args)
    try:
        request = pb.UpdateBotRequest(
            bot_id=args.bot,
            endpoint=args.endpoint,
            version=args.version,
            transport=TRANSPORTS.get(args.transport, pb.BOT_TRANSPORT_UNSPECIFIED),
        )
        bot = client.call("UpdateBot", request).bot
    except grpc.RpcError as error:
        return _fail(error)
    finally:
        client.close()
    _say(
        f"bot {bot.bot_id} ({bot.owner}/{bot.name}) version {bot.version}: "
        f"{STATE_NAMES[bot.state]}" + (f", endpoint {bot.endpoint}" if bot.endpoint else "")
    )
    return 0


def cmd_bot_key(args: argparse.Namespace) -> int:
    """Make (and print once) or revoke the key that opens an outbound bot's ConnectBot."""
    client = _client(args)
    try:
        if args.action == "create":
            key = client.call("CreateBotKey", pb.CreateBotKeyRequest(bot_id=args.bot)).bot_key
        else:
            client.call("RevokeBotKey", pb.RevokeBotKeyRequest(bot_id=args.bot))
    except grpc.RpcError as error:
        return _fail(error)
    finally:
        client.close()
    if args.action == "create":
        _say("the bot's key (shown once; any earlier key no longer works): ")
        _say((key, "bold"))
    else:
        _say(f"bot {args.bot}: key revoked")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bot``, ``pause``, ``resume``, ``retire``, ``update-bot`` and ``bot-key``."""
    reference = "the bot's id or OWNER/NAME"
    bot = add_client_command(
        commands, "bot", "a bot's profile (endpoint and full detail: owner's token)"
    )
    bot.add_argument("bot", help=reference)
    bot.add_argument("--recent", type=count, default=10, help="recent matches shown")
    bot.set_defaults(run=cmd_bot)
    for name, what in (
        ("pause", "take a bot out of matchmaking for now"),
        ("resume", "put a paused bot back into matchmaking"),
        ("retire", "retire a bot for good (its standings stay)"),
    ):
        parser = add_client_command(commands, name, f"{what} (owner token; or --as-admin)")
        parser.add_argument("bot", help=reference)
        parser.add_argument(
            "--as-admin", action="store_true", help="the operator's control (admin token)"
        )
        parser.add_argument("--reason", default="", help="with --as-admin: why, shown to the owner")
        parser.set_defaults(run=cmd_set_state)
    update = add_client_command(
        commands, "update-bot", "change a bot's endpoint or version (owner token)"
    )
    update.add_argument("bot", help=reference)
    update.add_argument("--endpoint", default="", help="the new host:port (or tls://host:port)")
    update.add_argument("--version", default="", help="the new version: validated again")
    update.add_argument(
        "--transport",
        choices=sorted(TRANSPORTS),
        default="",
        help="how the referee reaches it; outbound: the bot dials the arena (no --endpoint)",
    )
    update.set_defaults(run=cmd_update_bot)
    key = add_client_command(
        commands, "bot-key", "make or revoke an outbound bot's own key (owner token)"
    )
    key.add_argument("action", choices=("create", "revoke"))
    key.add_argument("bot", help=reference)
    key.set_defaults(run=cmd_bot_key)
