"""Referee decisions per second against trivial bots, as a ratio to raw grpc.aio echo calls.

One run starts, pinned to one CPU, a trivial bot server (answers a random legal action at
once) and a raw grpc.aio echo server (bytes in, bytes out, no protobuf) whose request and reply
have the sizes of the game's typical ChooseAction request and answer. Then, pinned to the other
CPU, fresh client processes take turns, each for the same window, over several rounds:

- ``echo``: raw grpc.aio client, ``--concurrency`` asyncio tasks calling the echo server;
- ``referee``: the real referee (trio guest on asyncio, ``play_match``) playing
  ``--concurrency`` matches at once against the trivial bots, whole matches back to back;
- ``referee+metrics``: the same with Prometheus metrics on (an isolated registry);
- ``stream_echo``: the raw client multiplexing its calls over one open bidirectional stream
  per server port (issue 20's baseline: what a message on an open stream costs);
- ``stream_echo_batched``: the same, batched as the referee's stream and the bots: each
  exchange a frame of a repeated field, every frame ready written as one gRPC message, both
  ways (the like-for-like baseline for the batching referee);
- ``referee_stream_in``: the referee against the same trivial bots over their ``Play`` stream
  (``stream://``: the referee dials, one stream per bot, every match on it); the bots write
  the answers ready together as one batch (as botkit does), and so does the referee;
- ``referee_stream_in_single``: the same against bots that write one answer a message (a bot
  that does not batch: each answer costs a stream message, as in ``stream_echo``);
- ``referee_stream_out``: the referee process listening for ``ConnectBot`` and the trivial
  bots dialling it (``outbound://``: bots behind NAT), one stream per bot.

Figures are medians over the rounds. The headline is referee decisions/s ÷ echo calls/s (the
issue's target is >= 0.8; for the streaming referees ÷ ``stream_echo``, and ≥ 2.5 × the unary
referee; each streaming referee also ÷ ``stream_echo_batched``, with the mean frames per gRPC
message each way, the echo's and the referee's) and the per-decision client CPU of each; the
metrics line gives the per-decision overhead of metrics, from the same runs, and from a
micro-measurement of the exact metric calls the runner makes per decision (target < 5%).

    python benchmarks/referee.py                       # oh-hell 4p, 64 in flight, 3 rounds
    python benchmarks/referee.py --game king --concurrency 256 --rounds 5
    python benchmarks/referee.py --quick               # a smoke run for CI
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.local_bots import stop_bot  # noqa: E402
from benchmarks.servers.common import pin, proc_cpu_seconds  # noqa: E402

SERVER_CPU, CLIENT_CPU = 1, 0


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads)."""
    times = os.times()
    return times.user + times.system


# -- the referee client (runs in its own process) -----------------------------------------------


def referee_client(args: argparse.Namespace) -> dict[str, float]:
    """Play matches back to back, ``--concurrency`` at once; count decisions in the window."""
    import trio
    from prometheus_client import CollectorRegistry

    from referee import aio_bridge
    from referee.bot_client import BotPool
    from referee.games.registry import game_types, make_game
    from referee.match import TimeControl
    from referee.metrics import MatchMetrics
    from referee.runner import MatchSpec, play_match

    game = make_game(args.game, args.seats)
    metrics = (
        MatchMetrics([t.name for t in game_types()], CollectorRegistry()) if args.metrics else None
    )
    # A clock so generous that no decision of a loaded benchmark ever times out.
    clock = TimeControl(move_time_ms=30_000, time_bank_ms=0)
    counts = {"decisions": 0, "faults": 0, "matches": 0}
    mark: dict[str, float] = {}
    seeds = itertools.count(1)

    batches = count_batches() if args.stream or args.listen or args.relay else None

    def on_move(match: object, log: object) -> None:
        counts["decisions"] += 1
        if getattr(log, "fault", None) is not None:
            counts["faults"] += 1

    async def main() -> None:
        pool = BotPool()
        stop = trio.Event()
        targets = args.targets
        if args.stream:
            targets = [f"stream://{target}" for target in targets]
        server = None
        if args.relay:  # outbound bots attached to another process: reach them through it
            from arena.bot_relay import relay_dialer
            from arena.peers import PeerChannels

            async def locate(bot_id: str) -> str:
                return str(args.relay)

            pool.outbound_dial = relay_dialer(locate, PeerChannels(), "bench")
            targets = [f"outbound://b{index}" for index in range(args.seats)]
        if args.listen:
            server = await aio_bridge.await_aio(lambda: listen_for_bots(pool, args.listen))
            targets = [f"outbound://b{index}" for index in range(args.seats)]

        async def slot(index: int) -> None:
            while not stop.is_set():
                seed = next(seeds)
                endpoints = [targets[(index + seat) % len(targets)] for seat in range(args.seats)]
                spec = MatchSpec(game, endpoints, seed, time_control=clock)
                await play_match(spec, pool, on_move=on_move, metrics=metrics, stop=stop)
                counts["matches"] += 1

        async def marker() -> None:
            await trio.sleep(args.warmup)
            start = (cpu_seconds(), time.perf_counter(), counts["decisions"], counts["faults"])
            server, relay = proc_cpu_seconds(args.server_pid), proc_cpu_seconds(args.relay_pid)
            await trio.sleep(args.seconds)
            mark["server_cpu_s"] = proc_cpu_seconds(args.server_pid) - server
            mark["relay_cpu_s"] = proc_cpu_seconds(args.relay_pid) - relay
            mark["cpu_s"] = cpu_seconds() - start[0]
            mark["wall_s"] = time.perf_counter() - start[1]
            mark["calls"] = counts["decisions"] - start[2]
            mark["faults"] = counts["faults"] - start[3]
            stop.set()

        try:
            with trio.fail_after(args.warmup + args.seconds + 60):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(marker)
                    for index in range(args.concurrency):
                        nursery.start_soon(slot, index)
        finally:
            await pool.close()
            if server is not None:
                await aio_bridge.await_aio(lambda: server.stop(0))

    aio_bridge.run(main)
    if batches is not None:
        mark["batch_out"] = batches["frames_out"] / max(batches["writes"], 1)
        mark["batch_in"] = batches["frames_in"] / max(batches["reads"], 1)
    return mark


def count_batches() -> dict[str, int]:
    """Count, over the run, the referee's stream writes and the frames they carry, and the
    bots' messages read and the answers they carry: the real stream code, wrapped in place
    (a counter each, nothing else changes)."""
    from referee import bot_stream

    counts = dict.fromkeys(["writes", "frames_out", "reads", "frames_in"], 0)
    batch, send = bot_stream.Outbox.batch, bot_stream.Link.send
    deliver, deliver_one = bot_stream.StreamBot.deliver, bot_stream.StreamBot._deliver_one

    async def counted_batch(outbox: Any) -> bytes:
        data = await batch(outbox)
        counts["writes"] += 1
        return data

    def counted_send(link: Any, data: bytes) -> None:
        counts["frames_out"] += 1
        send(link, data)

    def counted_deliver(bot: Any, link: Any, raw: bytes) -> Any:
        counts["reads"] += 1
        return deliver(bot, link, raw)

    def counted_deliver_one(bot: Any, link: Any, message: Any) -> Any:
        counts["frames_in"] += 1
        return deliver_one(bot, link, message)

    setattr(bot_stream.Outbox, "batch", counted_batch)  # noqa: B010 - wrapped in place, on purpose
    setattr(bot_stream.Link, "send", counted_send)  # noqa: B010
    setattr(bot_stream.StreamBot, "deliver", counted_deliver)  # noqa: B010
    setattr(bot_stream.StreamBot, "_deliver_one", counted_deliver_one)  # noqa: B010
    return counts


async def listen_for_bots(pool: Any, port: int) -> Any:
    """A ConnectBot server on ``port`` attaching each bot that dials in to ``pool``
    (no authentication: a benchmark; the arena checks the owner's token)."""
    import grpc.aio

    from referee.bot_stream import CONNECT_METHOD, CONNECT_SERVICE, StreamBot, connect_bot_handler

    async def accept(bot_id: str, context: object) -> StreamBot:
        bot = pool.get(f"outbound://{bot_id}")
        assert isinstance(bot, StreamBot)
        return bot

    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = connect_bot_handler(accept)
    server.add_registered_method_handlers(CONNECT_SERVICE, {CONNECT_METHOD: handler})
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


# -- the orchestrator ---------------------------------------------------------------------------


@dataclass
class Server:
    """A benchmark server process and its addresses."""

    process: subprocess.Popen[str]
    targets: list[str]


@contextmanager
def server(module: str, *args: str) -> Iterator[Server]:
    """Start ``python -m module args``; wait for its LISTENING lines and READY."""
    command = [sys.executable, "-m", module, *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stdout is not None
    targets = []
    try:
        for line in process.stdout:
            if line.startswith("LISTENING "):
                targets.append(line.split()[1])
            elif line.startswith("READY"):
                break
        if not targets:
            raise RuntimeError(f"{module} did not start")
        yield Server(process, targets)
    finally:
        stop_bot(process, grace_s=10)


def run_client(command: Sequence[str], server_pid: int, timeout_s: float = 300) -> dict[str, float]:
    """Run one client process; return its JSON figures (it also measures the server's CPU)."""
    command = [*command, "--server-pid", str(server_pid)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(f"{command[2:4]} failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


LABELS = {
    "echo": "raw grpc.aio echo",
    "referee": "referee",
    "metrics": "referee + metrics",
    "stream_echo": "raw stream echo",
    "stream_echo_batched": "raw stream echo, batched",
    "referee_stream_in": "referee, streams in",
    "referee_stream_in_single": "referee, in, unbatched",
    "referee_stream_out": "referee, streams out",
    "referee_stream_relayed": "referee, out via relay",
}
"""Every variant, in the order rows are printed."""

STREAMED = (
    "stream_echo",
    "stream_echo_batched",
    "referee_stream_in",
    "referee_stream_in_single",
    "referee_stream_out",
    "referee_stream_relayed",
)
"""Variants whose × column is against ``stream_echo`` (the others: against ``echo``)."""

STREAMING_REFEREES = STREAMED[2:]
"""The referee over streams: also against ``stream_echo_batched``, batch sizes reported."""


def free_port() -> int:
    """A loopback TCP port free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_outbound(referee: Sequence[str], seats: int) -> dict[str, float]:
    """One ``referee_stream_out`` run: the referee listens, a fresh trivial-bot process
    (pinned to the server CPU) dials it once per bot id."""
    port = free_port()
    ids = ",".join(f"b{index}" for index in range(seats))
    bots = [sys.executable, "-m", "benchmarks.servers.bot", "--cpu", str(SERVER_CPU)]
    bots += ["--connect", f"127.0.0.1:{port}", "--bot-ids", ids, "--max-seconds", "600"]
    process = subprocess.Popen(bots, stdout=subprocess.DEVNULL, cwd=ROOT)
    try:
        return run_client([*referee, "--listen", str(port)], process.pid)
    finally:
        stop_bot(process, grace_s=10)


def run_relayed(referee: Sequence[str], seats: int) -> dict[str, float]:
    """One ``referee_stream_relayed`` run: the bots dial a relay process (the arena process
    they are connected to, ``benchmarks.servers.relay``), and the referee reaches them
    through its RelayBot, as one arena process plays another's outbound bots. The relay
    and the bots share the server CPU; the relay's CPU in the window is ``relay_cpu_s``."""
    with server(
        "benchmarks.servers.relay", "--cpu", str(SERVER_CPU), "--max-seconds", "600"
    ) as relay:
        address = relay.targets[0]
        ids = ",".join(f"b{index}" for index in range(seats))
        bots = [sys.executable, "-m", "benchmarks.servers.bot", "--cpu", str(SERVER_CPU)]
        bots += ["--connect", address, "--bot-ids", ids, "--max-seconds", "600"]
        process = subprocess.Popen(bots, stdout=subprocess.DEVNULL, cwd=ROOT)
        try:
            command = [*referee, "--relay", address, "--relay-pid", str(relay.process.pid)]
            return run_client(command, process.pid)
        finally:
            stop_bot(process, grace_s=10)


def wire_sizes(game_name: str, seats: int) -> tuple[int, int]:
    """Typical serialized ChooseActionRequest and ChooseActionResponse sizes for the game."""
    from benchmarks.decision_cost import typical_request_bytes
    from cardarena.bot.v1 import bot_service_pb2
    from referee.games.registry import make_game

    request = bot_service_pb2.ChooseActionRequest.FromString(
        typical_request_bytes(make_game(game_name, seats))
    )
    reply = bot_service_pb2.ChooseActionResponse(action=request.legal_actions[0])
    return request.ByteSize(), reply.ByteSize()


def metric_calls_us(game_name: str) -> float:
    """CPU µs of the metric calls the runner makes per decision (a counter and a histogram)."""
    from prometheus_client import CollectorRegistry

    from referee.metrics import MatchMetrics

    game_metrics = MatchMetrics([game_name], CollectorRegistry()).for_game(game_name)
    decisions, durations = game_metrics.decisions, game_metrics.call_duration
    runs = []
    for _ in range(5):
        started = time.process_time()
        for index in range(20_000):
            result = "ok"
            decisions.inc()
            durations[result].observe(index * 1e-6)
        runs.append((time.process_time() - started) / 20_000 * 1e6)
    return statistics.median(runs)


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="oh-hell")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64, help="calls/matches in flight")
    parser.add_argument("--seconds", type=float, default=4.0, help="measured window per run")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="short smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--role", choices=["orchestrate", "referee"], default="orchestrate")
    parser.add_argument("--metrics", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--listen", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--relay", default="", help=argparse.SUPPRESS)
    parser.add_argument("--targets", nargs="*", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--relay-pid", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.warmup, args.rounds, args.concurrency = 0.8, 0.3, 1, 16
    if args.role == "referee":
        pin(CLIENT_CPU)
        print(json.dumps(referee_client(args)), flush=True)
        return

    request_bytes, reply_bytes = wire_sizes(args.game, args.seats)
    ports = str(args.seats)
    common = ["--ports", ports, "--cpu", str(SERVER_CPU), "--max-seconds", "600"]
    window = ["--seconds", str(args.seconds), "--warmup", str(args.warmup)]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in LABELS}
    with (
        server("benchmarks.servers.bot", *common) as bots,
        server("benchmarks.servers.bot", "--one-per-write", *common) as single_bots,
        server(
            "benchmarks.servers.echo", "serve", "--reply-bytes", str(reply_bytes), *common
        ) as echo,
    ):
        me = [sys.executable, str(Path(__file__).resolve()), "--role", "referee"]
        me += ["--game", args.game, "--seats", str(args.seats)]
        me += ["--concurrency", str(args.concurrency), *window, "--targets", *bots.targets]
        echo_client = [sys.executable, "-m", "benchmarks.servers.echo", "client", *echo.targets]
        echo_client += ["--request-bytes", str(request_bytes), "--cpu", str(CLIENT_CPU)]
        echo_client += ["--concurrency", str(args.concurrency), *window]
        variants: dict[str, Callable[[], dict[str, float]]] = {
            "echo": partial(run_client, echo_client, echo.process.pid),
            "referee": partial(run_client, me, bots.process.pid),
            "metrics": partial(run_client, [*me, "--metrics"], bots.process.pid),
            "stream_echo": partial(run_client, [*echo_client, "--stream"], echo.process.pid),
            "stream_echo_batched": partial(
                run_client, [*echo_client, "--stream", "--batched"], echo.process.pid
            ),
            "referee_stream_in": partial(run_client, [*me, "--stream"], bots.process.pid),
            "referee_stream_in_single": partial(
                run_client,
                [*me, "--stream", "--targets", *single_bots.targets],
                single_bots.process.pid,
            ),
            "referee_stream_out": partial(run_outbound, me, args.seats),
            "referee_stream_relayed": partial(run_relayed, me, args.seats),
        }
        order = list(variants)
        for round_index in range(args.rounds):
            shift = round_index % len(order)
            for name in order[shift:] + order[:shift]:
                results[name].append(variants[name]())

    def figure(name: str, key: str) -> float:
        values = []
        for run in results[name]:
            calls = max(run["calls"], 1)
            values.append(
                {
                    "rate": run["calls"] / run["wall_s"],
                    "client_us": run["cpu_s"] / calls * 1e6,
                    "server_us": run["server_cpu_s"] / calls * 1e6,
                    "client_load": run["cpu_s"] / run["wall_s"],
                }[key]
            )
        return statistics.median(values)

    echo_rate = figure("echo", "rate")
    stream_echo_rate = figure("stream_echo", "rate")
    batched_echo_rate = figure("stream_echo_batched", "rate")

    def mean_batch(name: str, way: str) -> float:
        return statistics.median(run.get(way, 0.0) for run in results[name])

    print(
        f"{args.game} {args.seats}p, {args.concurrency} in flight, request {request_bytes} B, "
        f"answer {reply_bytes} B, {args.rounds} round(s) of {args.seconds:g} s, "
        f"clients on CPU {CLIENT_CPU}, servers on CPU {SERVER_CPU}, load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'variant':24} {'calls/s':>9} {'× echo':>7} {'client µs/call':>15} "
        f"{'client core':>12} {'server µs/call':>15}"
    )
    rows = []
    for name in LABELS:
        baseline = stream_echo_rate if name in STREAMED else echo_rate
        row = {
            "name": name,
            "variant": LABELS[name],
            "calls_per_s": figure(name, "rate"),
            "ratio_to_echo": figure(name, "rate") / baseline,
            "baseline": "stream_echo" if name in STREAMED else "echo",
            "client_us_per_call": figure(name, "client_us"),
            "client_core_load": figure(name, "client_load"),
            "server_us_per_call": figure(name, "server_us"),
            "faults": sum(run.get("faults", 0) for run in results[name]),
        }
        if name in STREAMED:
            row["ratio_to_stream_echo_batched"] = figure(name, "rate") / batched_echo_rate
        if name in STREAMING_REFEREES or name == "stream_echo_batched":
            row["batch_out"], row["batch_in"] = (
                mean_batch(name, w) for w in ("batch_out", "batch_in")
            )
        if name == "referee_stream_relayed":  # the relay's CPU in the measured window
            row["relay_us_per_call"] = statistics.median(
                run["relay_cpu_s"] / max(run["calls"], 1) * 1e6 for run in results[name]
            )
        rows.append(row)
        print(
            f"{row['variant']:24} {row['calls_per_s']:9.0f} {row['ratio_to_echo']:7.2f} "
            f"{row['client_us_per_call']:15.1f} {row['client_core_load']:11.0%} "
            f"{row['server_us_per_call']:15.1f}"
        )
    unary_rate = figure("referee", "rate")
    print(
        f"{LABELS['stream_echo_batched']}: {mean_batch('stream_echo_batched', 'batch_out'):.1f} "
        f"requests and {mean_batch('stream_echo_batched', 'batch_in'):.1f} replies a gRPC message"
    )
    for name in STREAMING_REFEREES:
        print(
            f"{LABELS[name]}: {figure(name, 'rate') / unary_rate:.2f} × the unary referee "
            f"(target ≥ 2.5), {figure(name, 'rate') / stream_echo_rate:.2f} × stream_echo "
            f"(target ≥ 0.8), {figure(name, 'rate') / batched_echo_rate:.2f} × "
            f"stream_echo_batched; {mean_batch(name, 'batch_out'):.1f} requests and "
            f"{mean_batch(name, 'batch_in'):.1f} answers a gRPC message"
        )
    relayed = rows[-1]
    print(f"relay process: {relayed.get('relay_us_per_call', 0):.0f} µs CPU per relayed decision")
    off_us = float(rows[1]["client_us_per_call"])  # type: ignore[arg-type]
    on_us = float(rows[2]["client_us_per_call"])  # type: ignore[arg-type]
    calls_us = metric_calls_us(args.game)
    print(
        f"metrics overhead per decision: {on_us / off_us - 1:+.1%} of referee CPU in these runs "
        f"(noisy); the metric calls themselves {calls_us:.2f} µs = "
        f"{calls_us / off_us:.2%} of a decision's {off_us:.0f} µs"
    )
    if args.json:
        summary = {"rows": rows, "metric_calls_us": calls_us, "runs": results}
        args.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
