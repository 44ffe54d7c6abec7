"""``arena``: play matches, read and re-simulate match records, run the demo."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena.cli_args import OneLineParser, count, parse_options, positive
from arena.cli_bots import add_commands as add_bot_commands
from arena.cli_matches import add_commands as add_match_commands
from arena.cli_service import add_commands
from arena.cli_watch import add_commands as add_watch_commands
from arena.demo import cmd_demo
from arena.local_bots import stops_started_on_signal
from arena.play import add_command as add_play_command
from arena.render import games_table, moves_table, result_table
from arena.tournament_run import add_command as add_tournament_command
from cardarena.game.v1 import record_pb2
from netkit.tls import ClientTls, TlsConfigError
from referee import aio_bridge
from referee.bot_client import BotPool
from referee.games.api import Game, RulesError
from referee.games.registry import STATE_CLASSES, game_types, make_game
from referee.match import DefaultAction, FaultPolicy, Match, MoveLog, TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec, play_match

console = Console()


def _time_control(args: argparse.Namespace) -> TimeControl:
    return TimeControl(
        move_time_ms=args.move_time_ms,
        time_bank_ms=args.time_bank_ms,
        first_move_time_ms=args.first_move_time_ms,
    )


def _policy(args: argparse.Namespace) -> FaultPolicy:
    return FaultPolicy(
        default_action=DefaultAction(args.default_action), max_faults=args.max_faults
    )


def _play_with_progress(
    spec: MatchSpec, label: str, tls: ClientTls | None = None
) -> record_pb2.MatchRecord:
    """Play one match, showing a progress bar of moves (estimated from a dry random playout)."""
    expected = _estimate_moves(spec.game, spec.seed)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task(label, total=expected, status="")

        def on_move(match: Match, log: MoveLog) -> None:
            scores = " ".join(str(s) for s in match.state.scores_so_far())
            progress.update(task, completed=len(match.moves), status=f"scores {scores}")

        async def main() -> record_pb2.MatchRecord:
            pool = BotPool(tls=tls)
            try:
                return await play_match(spec, pool, on_move)
            finally:
                await pool.close()

        record = aio_bridge.run(main)
        progress.update(task, completed=len(record.moves), total=len(record.moves))
    return record


def _estimate_moves(game: Game, seed: int) -> int:
    state = game.new_state(seed)
    rng = random.Random(seed)
    moves = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
        moves += 1
    return moves


def _save(record: record_pb2.MatchRecord, path: Path | None) -> None:
    if path is not None:
        path.write_bytes(record.SerializeToString())
        console.print(f"match record written to [bold]{path}[/]  (read it: arena record {path})")


def cmd_match(args: argparse.Namespace) -> int:
    """Play one match between bots at the given addresses."""
    try:
        game_type = STATE_CLASSES[args.game].game_type
        game = make_game(args.game, len(args.bot), parse_options(game_type, args.option))
        tls = ClientTls(args.bot_ca_file, args.bot_client_cert, args.bot_client_key)
        tls.credentials()  # a bad file: one line now, not a fault at every move
    except (KeyError, RulesError, TlsConfigError) as error:
        raise SystemExit(f"error: {error}") from None
    spec = MatchSpec(
        game=game,
        endpoints=args.bot,
        seed=args.seed,
        time_control=_time_control(args),
        policy=_policy(args),
    )
    record = _play_with_progress(spec, f"{game_type.title}, {len(args.bot)} bots", tls)
    console.print(result_table(record))
    _save(record, args.record)
    return 0 if record.status == record_pb2.MATCH_STATUS_COMPLETED else 1


def _load(path: Path) -> record_pb2.MatchRecord:
    record = record_pb2.MatchRecord()
    try:
        record.ParseFromString(path.read_bytes())
    except (OSError, Exception) as error:
        raise SystemExit(f"error: cannot read a match record from {path}: {error}") from None
    return record


def cmd_record(args: argparse.Namespace) -> int:
    """Print a match record readably."""
    record = _load(args.path)
    console.print(result_table(record))
    if args.moves:
        console.print(moves_table(record))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-simulate a match record through the engine."""
    record = _load(args.path)
    problems = resimulate(record)
    if problems:
        for problem in problems:
            console.print(f"[red]divergence[/] {problem}")
        return 1
    console.print(f"{len(record.moves)} moves re-simulated: the engine agrees with the record")
    return 0


def cmd_games(args: argparse.Namespace) -> int:
    """List the games and their options."""
    console.print(games_table(game_types()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``arena`` argument parser."""
    parser = OneLineParser(prog="arena", description="Card Arena: bots play card games.")
    # Every subcommand's parser is a OneLineParser too (argparse makes them of the parent's class).
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True),
    )

    match = commands.add_parser("match", help="play one match between bots at gRPC addresses")
    match.add_argument("game", choices=sorted(STATE_CLASSES))
    match.add_argument(
        "--bot", action="append", required=True, help="host:port or tls://host:port, per seat"
    )
    match.add_argument("--seed", type=int, default=1)
    match.add_argument("--option", action="append", default=[], help="NAME=VALUE house rule")
    match.add_argument("--record", type=Path, help="write the match record here")
    match.add_argument("--move-time-ms", type=positive, default=1000)
    match.add_argument("--time-bank-ms", type=count, default=10_000)
    match.add_argument("--first-move-time-ms", type=positive, default=None)
    match.add_argument("--max-faults", type=count, default=5, help="faults that forfeit (0: never)")
    match.add_argument(
        "--default-action", choices=[d.value for d in DefaultAction], default="random"
    )
    match.add_argument("--bot-ca-file", default=None, help="PEM CA file for tls:// bots")
    match.add_argument("--bot-client-cert", default=None, help="PEM certificate for tls:// bots")
    match.add_argument("--bot-client-key", default=None, help="PEM key of --bot-client-cert")
    match.set_defaults(run=cmd_match)

    record = commands.add_parser("record", help="print a match record")
    record.add_argument("path", type=Path)
    record.add_argument("--moves", action="store_true", help="also list every move")
    record.set_defaults(run=cmd_record)

    replay = commands.add_parser("replay", help="re-simulate a match record through the engine")
    replay.add_argument("path", type=Path)
    replay.set_defaults(run=cmd_replay)

    games = commands.add_parser("games", help="list the games and their options")
    games.set_defaults(run=cmd_games)

    add_commands(commands)
    add_match_commands(commands)
    add_bot_commands(commands)
    add_watch_commands(commands)
    add_play_command(commands)
    add_tournament_command(commands)

    demo = commands.add_parser(
        "demo", help="the main job: the service, sample bots and a ladder per game, locally"
    )
    demo.add_argument(
        "--game",
        action="append",
        choices=sorted(STATE_CLASSES),
        help="only these games (repeatable); default: every game",
    )
    demo.add_argument("--matches", type=positive, default=12, help="matches per ladder")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="keep the database and log here (default: a temporary folder)",
    )
    demo.add_argument(
        "--web-listen",
        default="127.0.0.1:8080",
        help="host:port of the web UI (a free port when that one is taken; '' for none)",
    )
    demo.add_argument(
        "--keep-serving",
        action="store_true",
        help="keep the service, the bots and the web UI up after the standings (Ctrl-C ends)",
    )
    demo.set_defaults(run=stops_started_on_signal(cmd_demo))  # SIGTERM stops what it started
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``arena`` console script."""
    args = build_parser().parse_args(argv)
    try:
        sys.exit(args.run(args))
    except KeyboardInterrupt:
        console.print("interrupted")
        sys.exit(130)
