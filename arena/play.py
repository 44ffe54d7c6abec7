"""``arena play``: test your bot locally against sample bots, like ``battlesnake play``.

    arena play --game oh-hell --bot my=127.0.0.1:50051 --vs heuristic --games 50

Starts the opponents as separate processes, plays the matches with your bot's seat rotating,
prints a results table and your bot's per-move latency percentiles, writes every match record,
and exits non-zero if your bot faulted even once (so it fits a bot author's CI).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

import trio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.cli_args import count, positive
from arena.local_bots import (
    STOP_SIGNALS,
    sample_bot_kinds,
    start_many,
    stop_bot,
    stops_started_on_signal,
    terminate_started,
)
from arena.render import STATUS_NAMES, literal
from cardarena.game.v1 import record_pb2
from referee import aio_bridge
from referee.bot_client import BotPool
from referee.codec.summaries import fault_name
from referee.games.api import Game, RulesError
from referee.games.registry import STATE_CLASSES, make_game
from referee.match import FaultPolicy, TimeControl
from referee.runner import MatchSpec, play_match

console = Console(width=None if sys.stdout.isatty() else 110)


def opponent_kind(game: str, vs: str) -> str:
    """``heuristic`` → ``<game>-heuristic``; a full kind name is kept as is."""
    kinds = sample_bot_kinds()
    kind = vs if vs in kinds else f"{game}-{vs}"
    if kind not in kinds:
        known = sorted(
            {k.removeprefix(f"{game}-") for k in kinds if k == "random" or k.startswith(f"{game}-")}
        )
        raise SystemExit(f"error: no sample bot {vs!r} for {game}; choose from {', '.join(known)}")
    return kind


def percentile(values: list[int], fraction: float) -> float:
    """The value at ``fraction`` of the sorted values (nearest rank), in ms."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] / 1000


def cmd_play(args: argparse.Namespace) -> int:
    """Entry point of ``arena play``."""
    name, _, address = args.bot.rpartition("=")
    name = name or "my-bot"
    seats = args.seats or STATE_CLASSES[args.game].game_type.min_seats
    try:
        game = make_game(args.game, seats)
    except RulesError as error:
        raise SystemExit(f"error: {error}") from None
    kind = opponent_kind(args.game, args.vs)
    args.records.mkdir(parents=True, exist_ok=True)
    console.print(f"Starting {seats - 1} {kind} opponent(s) as separate processes…")
    opponents = start_many([kind] * (seats - 1), args.seed)
    try:
        # The sample opponents play over their Play stream (issue 20), as the arena does.
        records = _play_all(args, game, address, [f"stream://{o.address}" for o in opponents])
    finally:
        for opponent in opponents:
            stop_bot(opponent.process)
    mine = records
    console.print(_results_table(name, kind, mine))
    console.print(_latency_table(name, mine))
    faults = Counter(
        fault_name(m.fault)
        for record, seat in mine
        for m in record.moves
        if m.seat == seat and m.fault
    )
    console.print(f"match records: {args.records}/  (arena record FILE --moves; arena replay FILE)")
    unfinished = unfinished_matches([record for record, _ in mine])
    for line in unfinished:
        console.print(literal(line, "red"))
    if faults:
        console.print(f"[red]{name} faulted {sum(faults.values())} time(s):[/] {dict(faults)}")
    if faults or unfinished:
        return 1
    console.print(f"[green]{name} played {len(mine)} matches without a fault[/]")
    return 0


def unfinished_matches(records: list[record_pb2.MatchRecord]) -> list[str]:
    """One line per way matches failed to finish (voided, aborted: a bot unreachable at the
    start, say), with how many did; empty when every match was played to its end."""
    reasons = Counter(
        f"{STATUS_NAMES.get(record.status, 'unknown')}: {record.status_detail or 'no detail'}"
        for record in records
        if record.status
        not in (record_pb2.MATCH_STATUS_COMPLETED, record_pb2.MATCH_STATUS_FORFEITED)
    )
    return [
        f"{times} of {len(records)} matches not played: {reason}"
        for reason, times in sorted(reasons.items())
    ]


def _play_all(
    args: argparse.Namespace, game: Game, address: str, opponents: list[str]
) -> list[tuple[record_pb2.MatchRecord, int]]:
    seats = game.num_seats
    control = TimeControl(args.move_time_ms, args.time_bank_ms)
    results: list[tuple[record_pb2.MatchRecord, int]] = []

    async def main() -> None:
        pool = BotPool()
        limiter = trio.CapacityLimiter(args.parallel)
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            task = progress.add_task(f"{args.game} vs {args.vs}", total=args.games)

            async def one(index: int) -> None:
                my_seat = index % seats
                endpoints = list(opponents)
                endpoints.insert(my_seat, address)
                spec = MatchSpec(
                    game,
                    endpoints,
                    args.seed + index,
                    f"play-{args.seed}-{index}",
                    control,
                    FaultPolicy(),
                )
                async with limiter:
                    record = await play_match(spec, pool)
                (args.records / f"{spec.match_id}.bin").write_bytes(record.SerializeToString())
                results.append((record, my_seat))
                progress.advance(task)

            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_cancel_on_signal, nursery.cancel_scope, signalled)
                    async with trio.open_nursery() as matches:
                        for index in range(args.games):
                            matches.start_soon(one, index)
                    nursery.cancel_scope.cancel()  # all played: stop listening for signals
            finally:
                await pool.close()

    signalled: list[int] = []
    aio_bridge.run(main)
    if signalled:  # stopped by SIGTERM/SIGHUP: as Ctrl-C, once the matches are cancelled
        raise KeyboardInterrupt
    return sorted(results, key=lambda item: item[0].match_id)


async def _cancel_on_signal(scope: trio.CancelScope, signalled: list[int]) -> None:
    """On SIGTERM or SIGHUP: stop the opponents, note the signal, cancel ``scope`` (the
    matches). Trio's own receiver, so the cancellation is clean; the rest waits for it."""
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async for signum in signals:
            terminate_started()
            signalled.append(signum)
            scope.cancel()
            return


def _results_table(name: str, kind: str, mine: list[tuple[record_pb2.MatchRecord, int]]) -> Table:
    table = Table(title=f"{name} against {kind}")
    for column in ("bot", "seats played", "first places", "mean rank", "mean score", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right", overflow="fold")
    for label, is_mine in ((name, True), (kind, False)):
        seats = [
            (record, seat)
            for record, my_seat in mine
            for seat in range(len(record.seats))
            if (seat == my_seat) == is_mine
        ]
        rated = [(r, seat) for r, seat in seats if len(r.outcome.ranks) > seat]
        ranks = [r.outcome.ranks[seat] for r, seat in rated]
        scores = [r.outcome.scores[seat] for r, seat in rated]
        faults = sum(1 for r, seat in seats for m in r.moves if m.seat == seat and m.fault)
        table.add_row(
            label,
            str(len(seats)),
            str(ranks.count(1)),
            f"{statistics.mean(ranks):.2f}" if ranks else "-",
            f"{statistics.mean(scores):.1f}" if scores else "-",
            str(faults),
        )
    return table


def _latency_table(name: str, mine: list[tuple[record_pb2.MatchRecord, int]]) -> Table:
    latencies = [m.elapsed_us for r, s in mine for m in r.moves if m.seat == s]
    table = Table(title=f"{name}: time per move (round trip, ms)")
    for column in ("moves", "p50", "p90", "p99", "max"):
        table.add_column(column, justify="right")
    if latencies:
        table.add_row(
            str(len(latencies)), *(f"{percentile(latencies, f):.1f}" for f in (0.5, 0.9, 0.99, 1.0))
        )
    return table


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``arena play`` to the parser."""
    play = commands.add_parser("play", help="test your bot locally against sample bots")
    play.add_argument("--game", required=True, choices=sorted(STATE_CLASSES))
    play.add_argument("--bot", required=True, help="NAME=host:port of your bot")
    play.add_argument("--vs", default="heuristic", help="opponent: random, heuristic, search…")
    play.add_argument("--games", type=positive, default=20)
    play.add_argument("--seats", type=count, default=0, help="default: the game's fewest seats")
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--parallel", type=positive, default=4, help="matches at once")
    play.add_argument("--move-time-ms", type=positive, default=1000)
    play.add_argument("--time-bank-ms", type=count, default=10_000)
    play.add_argument("--records", type=Path, default=Path("arena-records"))
    play.set_defaults(run=stops_started_on_signal(cmd_play))  # SIGTERM stops the opponents
