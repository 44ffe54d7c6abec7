"""A bot that costs the arena time, not CPU: it sleeps before every answer.

    python -m benchmarks.servers.sleepy [--delay-ms 50:100] [--max-matches 1000] [--end-log F]

One bot per process (``--ports 1``, the default): the scale-out benchmark and the chaos test
run many of them, each registered as its own bot. ChooseAction answers a random legal action
after a uniform ``--delay-ms`` sleep (asyncio: no CPU while waiting); GetInfo announces
``--max-matches`` as ``max_concurrent_matches`` at once, so the arena's cap on this bot is that
number within its ladder's. ``--end-log FILE`` appends one JSON line per EndMatch (match id,
seat, status, ranks, scores): the results the arena announced, to compare with what it
recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from arena.local_bots import BotProcess, start_server, stop_bot
from benchmarks.servers import common
from benchmarks.servers.bot import Context, TrivialBot
from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc


class SleepyBot(TrivialBot):
    """A trivial bot that announces its limit of matches at once and logs each EndMatch."""

    def __init__(
        self, low_ms: float, high_ms: float, seed: int, max_matches: int, end_log: IO[str] | None
    ) -> None:
        super().__init__(low_ms, high_ms, seed)
        self.max_matches = max_matches
        self.end_log = end_log

    async def GetInfo(
        self, request: bot_service_pb2.GetInfoRequest, context: Context
    ) -> bot_service_pb2.GetInfoResponse:
        return bot_service_pb2.GetInfoResponse(
            name="bench-sleepy", version="1", max_concurrent_matches=self.max_matches
        )

    async def EndMatch(
        self, request: bot_service_pb2.EndMatchRequest, context: Context
    ) -> bot_service_pb2.EndMatchResponse:
        if self.end_log is not None:
            self.end_log.write(json.dumps(end_entry(request)) + "\n")  # one line, one write
        return bot_service_pb2.EndMatchResponse()


def end_entry(request: bot_service_pb2.EndMatchRequest) -> dict[str, Any]:
    """What an EndMatch announced, as a JSON-ready dict."""
    return {
        "match_id": request.match_id,
        "seat": request.seat,
        "status": int(request.status),
        "ranks": list(request.outcome.ranks),
        "scores": list(request.outcome.scores),
    }


def read_end_log(path: Path) -> list[dict[str, Any]]:
    """Every EndMatch a ``--end-log`` file holds (a torn last line, from a kill, is skipped)."""
    entries = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return entries


def sleepy_command(
    delay_ms: str, max_matches: int, seed: int, end_log: Path | None = None
) -> list[str]:
    """The command line of one sleepy bot on a free loopback port."""
    command = [sys.executable, "-m", "benchmarks.servers.sleepy", "--delay-ms", delay_ms]
    command += ["--max-matches", str(max_matches), "--seed", str(seed)]
    return command if end_log is None else [*command, "--end-log", str(end_log)]


def start_sleepy_bots(commands: Sequence[list[str]], cwd: Path) -> list[BotProcess]:
    """Start one bot process per command at once (their start-ups overlap) and wait for all;
    if one fails, stop the others."""
    with ThreadPoolExecutor(len(commands) or 1) as starting:
        futures = [
            starting.submit(start_server, f"sleepy{i}", command, str(cwd))
            for i, command in enumerate(commands)
        ]
    bots, errors = [], []
    for future in futures:
        try:
            bots.append(future.result())
        except Exception as error:
            errors.append(error)
    if errors:
        for bot in bots:
            stop_bot(bot.process)
        raise errors[0]
    return bots


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_arguments(parser)
    parser.add_argument("--delay-ms", default="50:100", help="A or A:B milliseconds per answer")
    parser.add_argument("--max-matches", type=int, default=1000, help="announced in GetInfo")
    parser.add_argument("--end-log", type=Path, default=None, help="append EndMatch here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    low, _, high = args.delay_ms.partition(":")
    common.pin(args.cpu)
    log = args.end_log.open("a", buffering=1) if args.end_log else None
    bot = SleepyBot(float(low), float(high or low), args.seed, args.max_matches, log)

    async def serve() -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        bot_service_pb2_grpc.add_BotServiceServicer_to_server(bot, server)
        await common.serve_until_stopped(server, args.ports, args.max_seconds)

    try:
        asyncio.run(serve())
    finally:
        if log is not None:
            log.close()


if __name__ == "__main__":
    main()
