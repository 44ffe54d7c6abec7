"""The baseline: a raw grpc.aio echo server and client, bytes in and bytes out, unary or over
one bidirectional stream per target.

    python -m benchmarks.servers.echo serve --reply-bytes 12 [--ports 4] [--cpu 1]
    python -m benchmarks.servers.echo client 127.0.0.1:PORT ... --request-bytes 480 \\
        --concurrency 64 --seconds 3 [--cpu 0] [--stream [--batched]]

No protobuf at all: the server answers a fixed reply of ``--reply-bytes``, to each unary call
(``Echo``) and to each message on a stream (``Stream``, in order). The client sends a fixed
request of ``--request-bytes`` over one channel per target, from ``--concurrency`` asyncio
tasks: unary, with a deadline on every call as the referee has, or (``--stream``) multiplexed
over one open stream per target, as the referee's stream transport does (a writer task per
stream fed by a queue, a reader task resolving each caller's future). With ``--batched`` both
sides batch as the referee's stream and the benchmark's bots do: each exchange is a frame shaped
as one element of a repeated field (tag, length, payload: a ``PlayRequest``'s layout), a write
carries every frame queued since the last (the referee's own batching function) as one gRPC
message, and the server answers every frame of a message and writes the replies ready together
as one. The client prints one JSON line: exchanges completed and the process CPU seconds used in
the measured window (batched, also the mean frames per gRPC message each way over the run).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.servers import common
from referee.bot_endpoint import CHANNEL_OPTIONS
from referee.bot_stream import Outbox

FRAME_TAG = 0x0A
"""Field 1, length-delimited: a frame is one element of ``PlayRequest.messages``' shape."""

METHOD = "/bench.Echo/Echo"
STREAM_METHOD = "/bench.Echo/Stream"
BATCHED_METHOD = "/bench.Echo/Batched"


def frame(payload: bytes) -> bytes:
    """``payload`` as one length-delimited element of a repeated field 1."""
    size, header = len(payload), bytearray([FRAME_TAG])
    while size > 0x7F:
        header.append(0x80 | (size & 0x7F))
        size >>= 7
    header.append(size)
    return bytes(header) + payload


def framed_of_size(size: int) -> bytes:
    """A frame of exactly ``size`` bytes, header included."""
    body = size - 2
    while len(frame(b"q" * body)) > size:
        body -= 1
    return frame(b"q" * body)


def frame_count(message: bytes) -> int:
    """How many frames a batch holds. Every frame of a run has the first's size, so this reads
    one header and divides (constant work, as a protobuf parse in C is next to Python's)."""
    if not message or message[0] != FRAME_TAG:
        raise ValueError(f"{len(message)} bytes that are no batch of frames")
    length, shift, header = 0, 0, 1
    while True:
        byte = message[header]
        length |= (byte & 0x7F) << shift
        shift, header = shift + 7, header + 1
        if not byte & 0x80:
            break
    count, rest = divmod(len(message), header + length)
    if rest:
        raise ValueError(
            f"{len(message)} bytes are no whole number of {header + length}-byte frames"
        )
    return count


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads)."""
    times = os.times()
    return times.user + times.system


async def serve(args: argparse.Namespace) -> None:
    """Answer every call with the same reply."""
    reply: bytes = b"r" * args.reply_bytes

    async def echo(request: bytes, context: Any) -> bytes:
        return reply

    async def stream(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for _ in requests:
            yield reply

    async def batched(requests: AsyncIterator[bytes], context: Any) -> None:
        replies = Outbox()  # the referee's own batching
        framed = frame(reply)

        async def writer() -> None:
            while True:
                await context.write(await replies.batch())

        writing = asyncio.ensure_future(writer())
        try:
            async for request in requests:
                for _ in range(frame_count(request)):
                    replies.put(framed)
        finally:
            writing.cancel()

    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handlers: dict[str, Any] = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "Stream": grpc.stream_stream_rpc_method_handler(stream),
        "Batched": grpc.stream_stream_rpc_method_handler(batched),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))
    server.add_registered_method_handlers("bench.Echo", handlers)
    await common.serve_until_stopped(server, args.ports, args.max_seconds)


async def client(args: argparse.Namespace) -> dict[str, float]:
    """Call as fast as ``--concurrency`` tasks can for warm-up + measured seconds."""
    channels = [grpc.aio.insecure_channel(t, options=CHANNEL_OPTIONS) for t in args.targets]
    streams: list[_MultiplexedStream] = []
    if args.stream:
        kind = _BatchedStream if args.batched else _MultiplexedStream
        streams = [kind(channel) for channel in channels]
        calls: list[Callable[..., Awaitable[Any]]] = [s.exchange for s in streams]
    else:
        # Registered methods, as the generated stubs and servers use (a handle made once).
        calls = [
            channel.unary_unary(METHOD, _registered_method=True)  # type: ignore[call-arg]
            for channel in channels
        ]
    payload = framed_of_size(args.request_bytes) if args.batched else b"q" * args.request_bytes
    loop = asyncio.get_running_loop()
    started = loop.time()
    window_start = started + args.warmup
    end = window_start + args.seconds
    counted = 0
    mark: dict[str, float] = {}

    async def worker(index: int) -> None:
        nonlocal counted
        call = calls[index % len(calls)]
        while True:
            now = loop.time()
            if now >= end:
                return
            await call(payload, timeout=10)
            if window_start <= loop.time() < end:
                counted += 1

    async def marker() -> None:
        await asyncio.sleep(window_start - loop.time())
        server = common.proc_cpu_seconds(args.server_pid)
        mark["cpu"], mark["wall"] = cpu_seconds(), time.perf_counter()
        await asyncio.sleep(end - loop.time())
        mark["cpu"], mark["wall"] = cpu_seconds() - mark["cpu"], time.perf_counter() - mark["wall"]
        mark["server"] = common.proc_cpu_seconds(args.server_pid) - server

    await asyncio.gather(marker(), *(worker(i) for i in range(args.concurrency)))
    for open_stream in streams:
        await open_stream.close()
    for channel in channels:
        await channel.close()
    figures = {
        "calls": counted,
        "cpu_s": mark["cpu"],
        "wall_s": mark["wall"],
        "server_cpu_s": mark["server"],
    }
    if args.batched:
        figures.update(_BatchedStream.mean_batches(streams))
    return figures


class _MultiplexedStream:
    """One open stream carrying many callers' exchanges: a queue and a writer task in, a
    reader task out resolving the callers' futures in order (the server answers in order)."""

    METHOD = STREAM_METHOD

    def __init__(self, channel: grpc.aio.Channel) -> None:
        method: Any = channel.stream_stream(self.METHOD, _registered_method=True)  # type: ignore[call-arg]
        self._call: Any = method()
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._put: Callable[[bytes], None] = self._queue.put_nowait
        self._waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self._tasks = [asyncio.ensure_future(self._write()), asyncio.ensure_future(self._read())]

    async def exchange(self, payload: bytes, timeout: float) -> bytes:
        """Send one message and wait for its reply (``timeout``: as the unary call's)."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        self._put(payload)
        async with asyncio.timeout(timeout):
            return await future

    async def _write(self) -> None:
        while True:
            await self._call.write(await self._queue.get())

    async def _read(self) -> None:
        while True:
            reply = await self._call.read()
            if reply is grpc.aio.EOF:
                return
            self._resolve(reply)

    def _resolve(self, reply: bytes) -> None:
        future = self._waiting.popleft()
        if not future.done():
            future.set_result(reply)

    async def close(self) -> None:
        """Stop both tasks and cancel the call."""
        for task in self._tasks:
            task.cancel()
        self._call.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class _BatchedStream(_MultiplexedStream):
    """The same, batched as the referee's stream: a write carries every frame queued since the
    last; a reply message resolves as many callers as it holds frames."""

    METHOD = BATCHED_METHOD

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        super().__init__(channel)
        self._outbox = Outbox()  # the referee's own batching
        self._put = self._outbox.put

    async def _write(self) -> None:
        while True:
            batch = await self._outbox.batch()
            self.counts["writes"] += 1
            self.counts["frames_out"] += frame_count(batch)
            await self._call.write(batch)

    def _resolve(self, reply: bytes) -> None:
        count = frame_count(reply)
        self.counts["reads"] += 1
        self.counts["frames_in"] += count
        single = reply[: len(reply) // count]
        for _ in range(count):
            super()._resolve(single)

    @staticmethod
    def mean_batches(streams: list[_MultiplexedStream]) -> dict[str, float]:
        """Mean frames per gRPC message written (out) and read (in), over the run."""
        total: collections.Counter[str] = collections.Counter()
        for stream in streams:
            if isinstance(stream, _BatchedStream):
                total.update(stream.counts)
        return {
            "batch_out": total["frames_out"] / max(total["writes"], 1),
            "batch_in": total["frames_in"] / max(total["reads"], 1),
        }


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role", required=True)
    server = sub.add_parser("serve")
    common.add_arguments(server)
    server.add_argument("--reply-bytes", type=int, default=12)
    caller = sub.add_parser("client")
    caller.add_argument("targets", nargs="+")
    caller.add_argument("--request-bytes", type=int, default=480)
    caller.add_argument("--concurrency", type=int, default=64)
    caller.add_argument("--seconds", type=float, default=3.0)
    caller.add_argument("--warmup", type=float, default=1.0)
    caller.add_argument("--cpu", type=int)
    caller.add_argument("--stream", action="store_true", help="multiplex over open streams")
    caller.add_argument("--batched", action="store_true", help="streams batched as the referee's")
    caller.add_argument("--server-pid", type=int, default=0, help="also report its CPU")
    args = parser.parse_args()
    common.pin(args.cpu)
    if args.role == "serve":
        asyncio.run(serve(args))
    else:
        print(json.dumps(asyncio.run(client(args))), flush=True)


if __name__ == "__main__":
    main()
