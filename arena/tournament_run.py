"""``arena tournament``: run a fixed event between bots and show its crosstable.

    arena tournament run --game klaberjass --entrant mine=127.0.0.1:50051 \\
        --sample heur=klaberjass-heuristic --sample rnd=random --sets 20 --deadline-s 600 \\
        --json t.json --csv t.csv
    arena tournament show t.json

Plays the sets that ``arena.tournament`` plans (round robin or Swiss, duplicate sets per table,
everything seeded from ``--seed``) against the entrants' endpoints (``--sample`` starts a
sample bot as its own process), at most ``--parallel`` matches at once, until every set is
played or ``--deadline-s`` passes (then the sets begun are dropped and the crosstable says the
event did not finish). A set counts only once every rotation is played; a rotation that did
not end rated (a bot's endpoint failing) leaves its seats uncompared.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import trio
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.duplicate_scoring import Rotation
from arena.local_bots import sample_bot_kinds, start_many, stop_bot
from arena.tournament import (
    FORMATS,
    Crosstable,
    PlannedSet,
    SetResult,
    Tournament,
    TournamentError,
    TournamentPlan,
    crosstable_from_json,
)
from cardarena.game.v1 import record_pb2
from referee import aio_bridge
from referee.bot_client import BotPool
from referee.games.api import Game, RulesError
from referee.games.registry import STATE_CLASSES, make_game
from referee.match import FaultPolicy, TimeControl
from referee.runner import MatchSpec, play_match

console = Console(width=None if sys.stdout.isatty() else 120)

RATED = (record_pb2.MATCH_STATUS_COMPLETED, record_pb2.MATCH_STATUS_FORFEITED)


def crosstable_view(table: Crosstable) -> Table:
    """The crosstable: row entrant's score against each column entrant, ± the 95 % interval's
    half-width; a cell whose interval holds 1/2 (not significant) is dimmed and marked ``~``."""
    plan = table.plan
    view = Table(
        title=f"{plan.format}, {plan.game} {plan.seats}p, seed {plan.seed}",
        caption="row's share of seat comparisons with column ± 95 %; ~ not significant",
    )
    names = [entrant for entrant, _ in table.standings]
    view.add_column("#", justify="right")
    view.add_column("entrant")
    view.add_column("mean", justify="right")
    for name in names:
        view.add_column(Text(name), justify="right")
    for position, (entrant, mean) in enumerate(table.standings, start=1):
        cells: list[Text | str] = [str(position), Text(entrant), f"{mean:.3f}"]
        for other in names:
            pairing = table.pairings.get((entrant, other))
            if pairing is None:
                cells.append("")
                continue
            half = (pairing.high - pairing.low) / 2
            text = f"{pairing.score:.2f}±{half:.2f}"
            if pairing.significant:
                cells.append(Text(text, style="bold green" if pairing.score > 0.5 else "red"))
            else:
                cells.append(Text(f"~{text}", style="dim"))
        view.add_row(*cells)
    return view


def summary(table: Crosstable) -> str:
    """One line: how much of the event was played."""
    status = "finished" if table.finished else "stopped at its deadline"
    return (
        f"{table.plan.format} tournament: {table.sets_played}/{table.sets_planned} sets, "
        f"{table.matches_played} matches, {status}"
    )


def write_exports(table: Crosstable, json_path: Path | None, csv_path: Path | None) -> None:
    """The crosstable as JSON and CSV files, where asked."""
    if json_path is not None:
        json_path.write_text(json.dumps(table.to_json(), indent=2))
    if csv_path is not None:
        with open(csv_path, "w", newline="") as out:
            csv.writer(out).writerows(table.csv_rows())


def play_tournament(
    plan: TournamentPlan,
    endpoints: dict[str, str],
    deadline_s: float,
    parallel: int,
    control: TimeControl,
) -> Crosstable:
    """Play every planned set (round by round) against ``endpoints``, until the deadline."""
    game = make_game(plan.game, plan.seats)
    tournament = Tournament(plan)

    async def main() -> bool:
        pool = BotPool()
        limiter = trio.CapacityLimiter(parallel)
        try:
            with trio.move_on_after(deadline_s):
                while sets := tournament.next_round():
                    async with trio.open_nursery() as nursery:
                        for planned in sets:
                            nursery.start_soon(play_set, game, planned, pool, limiter)
                return True
            return False
        finally:
            await pool.close()

    async def play_set(
        game: Game, planned: PlannedSet, pool: BotPool, limiter: trio.CapacityLimiter
    ) -> None:
        records: list[record_pb2.MatchRecord | None] = [None] * len(planned.matches)

        async def one(index: int) -> None:
            match = planned.matches[index]
            spec = MatchSpec(
                game,
                [endpoints[entrant] for entrant in match.seats],
                match.seed,
                f"t{plan.seed}-r{planned.round}-t{planned.table}-s{planned.index}-{index}",
                control,
                FaultPolicy(),
            )
            async with limiter:
                records[index] = await play_match(spec, pool)

        async with trio.open_nursery() as nursery:
            for index in range(len(planned.matches)):
                nursery.start_soon(one, index)
        rotations = tuple(
            Rotation(
                match.seats,
                tuple(record.outcome.ranks),
                tuple(float(s) for s in record.outcome.scores),
            )
            for match, record in zip(planned.matches, records, strict=True)
            if record is not None and record.status in RATED
        )
        tournament.record(SetResult(planned.round, planned.table, planned.index, rotations))

    finished = aio_bridge.run(main)
    return tournament.crosstable(finished=bool(finished))


def _named(pairs: list[str], what: str) -> dict[str, str]:
    named = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise SystemExit(f"error: {what} {pair!r}: expected NAME=VALUE")
        if name in named:
            raise SystemExit(f"error: entrant {name!r} given twice")
        named[name] = value
    return named


def cmd_run(args: argparse.Namespace) -> int:
    """Entry point of ``arena tournament run``."""
    entrants = _named(args.entrant, "--entrant")
    samples = _named(args.sample, "--sample")
    for name, kind in samples.items():
        if kind not in sample_bot_kinds():
            raise SystemExit(f"error: --sample {name}={kind}: no sample bot {kind!r}")
        if name in entrants:
            raise SystemExit(f"error: entrant {name!r} given twice")
    seats = args.seats or STATE_CLASSES[args.game].game_type.min_seats
    try:
        make_game(args.game, seats)
        plan = TournamentPlan(
            args.game,
            seats,
            tuple([*entrants, *samples]),
            args.format,
            args.sets,
            args.rounds,
            args.seed,
        )
    except (RulesError, TournamentError) as error:
        raise SystemExit(f"error: {error}") from None
    started = start_many(list(samples.values()), args.seed) if samples else []
    try:
        endpoints = dict(entrants)
        endpoints.update(zip(samples, (bot.address for bot in started), strict=True))
        table = play_tournament(
            plan,
            endpoints,
            args.deadline_s,
            args.parallel,
            TimeControl(args.move_time_ms, args.time_bank_ms),
        )
    finally:
        for bot in started:
            stop_bot(bot.process)
    console.print(summary(table))
    console.print(crosstable_view(table))
    write_exports(table, args.json, args.csv)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Entry point of ``arena tournament show``."""
    try:
        table = crosstable_from_json(json.loads(args.file.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"error: {args.file}: not a tournament's JSON ({error})") from None
    console.print(summary(table))
    console.print(crosstable_view(table))
    write_exports(table, None, args.csv)
    return 0


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= 7 * 86_400:
        raise argparse.ArgumentTypeError("expected seconds between 0 and a week")
    return value


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``arena tournament run|show`` to the parser."""
    tournament = commands.add_parser("tournament", help="run a tournament, show a crosstable")
    sub = tournament.add_subparsers(dest="tournament_command", required=True)
    run = sub.add_parser("run", help="play a round robin or Swiss tournament")
    run.add_argument("--game", required=True, choices=sorted(STATE_CLASSES))
    run.add_argument("--seats", type=int, default=0, help="default: the game's fewest seats")
    run.add_argument("--entrant", action="append", default=[], help="NAME=host:port")
    run.add_argument("--sample", action="append", default=[], help="NAME=sample-bot-kind")
    run.add_argument("--format", choices=FORMATS, default="round-robin")
    run.add_argument("--sets", type=int, default=10, help="duplicate sets per table")
    run.add_argument("--rounds", type=int, default=3, help="Swiss rounds")
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--deadline-s", type=_positive_seconds, default=3600.0)
    run.add_argument("--parallel", type=int, default=4, help="matches at once")
    run.add_argument("--move-time-ms", type=int, default=1000)
    run.add_argument("--time-bank-ms", type=int, default=10_000)
    run.add_argument("--json", type=Path, help="write the crosstable as JSON")
    run.add_argument("--csv", type=Path, help="write the crosstable as CSV")
    run.set_defaults(run=cmd_run)
    show = sub.add_parser("show", help="show a tournament's crosstable from its JSON")
    show.add_argument("file", type=Path)
    show.add_argument("--csv", type=Path, help="also write it as CSV")
    show.set_defaults(run=cmd_show)
