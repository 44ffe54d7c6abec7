"""Raw grpc.aio echo: a unary call per exchange against messages on open bidirectional streams.

The cost that sets the target of the referee's stream transport (issue 20). One run starts,
pinned to one CPU, the raw echo server (``benchmarks.servers.echo``: bytes in, bytes out, no
protobuf) with the game's typical ChooseAction request and answer sizes; then, pinned to the
other CPU, fresh client processes take turns over several rounds:

- ``unary_echo``: ``--concurrency`` asyncio tasks, a unary call each exchange;
- ``stream_echo``: the same tasks multiplexed over one open stream per server port (a writer
  task and a reader task per stream), the shape of the referee's stream transport.

Figures are medians over the rounds: exchanges/s and client CPU µs per exchange, and the
ratio stream ÷ unary.

    python benchmarks/stream_echo.py                  # oh-hell 4p sizes, 64 in flight
    python benchmarks/stream_echo.py --quick --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.referee import CLIENT_CPU, SERVER_CPU, run_client, server, wire_sizes  # noqa: E402


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="oh-hell")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64, help="exchanges in flight")
    parser.add_argument("--seconds", type=float, default=4.0, help="measured window per run")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="short smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.warmup, args.rounds, args.concurrency = 0.8, 0.3, 1, 16
    request_bytes, reply_bytes = wire_sizes(args.game, args.seats)
    common = ["--ports", str(args.seats), "--cpu", str(SERVER_CPU), "--max-seconds", "600"]
    window = ["--seconds", str(args.seconds), "--warmup", str(args.warmup)]
    runs: dict[str, list[dict[str, float]]] = {"unary_echo": [], "stream_echo": []}
    with server(
        "benchmarks.servers.echo", "serve", "--reply-bytes", str(reply_bytes), *common
    ) as echo:
        client = [sys.executable, "-m", "benchmarks.servers.echo", "client", *echo.targets]
        client += ["--request-bytes", str(request_bytes), "--cpu", str(CLIENT_CPU)]
        client += ["--concurrency", str(args.concurrency), *window]
        commands = {"unary_echo": client, "stream_echo": [*client, "--stream"]}
        for round_index in range(args.rounds):
            order = list(commands) if round_index % 2 == 0 else list(commands)[::-1]
            for name in order:
                runs[name].append(run_client(commands[name], echo.process.pid))

    def median(name: str, key: str) -> float:
        values = []
        for run in runs[name]:
            calls = max(run["calls"], 1)
            values.append(
                {
                    "rate": run["calls"] / run["wall_s"],
                    "client_us": run["cpu_s"] / calls * 1e6,
                    "server_us": run["server_cpu_s"] / calls * 1e6,
                }[key]
            )
        return statistics.median(values)

    rows: list[dict[str, float | str]] = [
        {
            "variant": name,
            "exchanges_per_s": median(name, "rate"),
            "client_us_per_exchange": median(name, "client_us"),
            "server_us_per_exchange": median(name, "server_us"),
        }
        for name in runs
    ]
    print(
        f"{args.game} {args.seats}p sizes (request {request_bytes} B, answer {reply_bytes} B), "
        f"{args.concurrency} in flight over {args.seats} channels, {args.rounds} round(s) of "
        f"{args.seconds:g} s, load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'variant':12} {'exchanges/s':>12} {'client µs':>10} {'server µs':>10}")
    for row in rows:
        print(
            f"{row['variant']:12} {row['exchanges_per_s']:12.0f} "
            f"{row['client_us_per_exchange']:10.1f} {row['server_us_per_exchange']:10.1f}"
        )
    ratio = median("stream_echo", "rate") / max(median("unary_echo", "rate"), 1e-9)
    print(f"stream ÷ unary: {ratio:.2f}× exchanges/s")
    if args.json:
        summary = {"rows": rows, "stream_over_unary": ratio, "runs": runs}
        args.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
