"""The only bridge between trio and grpcio: asyncio hosts, trio runs as its guest.

grpcio has no trio support (grpc/grpc#25050). ``../shared/research/grpc-trio.md`` measured the
options; running trio in guest mode on an asyncio loop that owns every ``grpc.aio`` object came
out best: throughput equal to raw grpc.aio from 64 concurrent calls up, a constant handful of
threads whatever the number of bots (no thread per match or per call), and real cancellation:
cancelling a trio scope cancels the asyncio task, which cancels the RPC, whose deadline also
reaches the bot so its handler is cancelled too.

Everything runs on one thread, so trio code may call asyncio's synchronous functions directly
(trio PR #1551). ``run`` starts the pair; ``await_aio`` awaits an asyncio coroutine from trio.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio
from outcome import Outcome

T = TypeVar("T")


def run(trio_main: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run ``trio_main(*args)`` under trio, hosted by a fresh asyncio loop; return its result.

    Blocks like ``trio.run``. Exceptions raised by ``trio_main`` propagate. Ctrl-C reaches trio
    (it cancels the main task) because the host installs no signal handling of its own.
    """

    async def host() -> T:
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[Outcome[T]] = loop.create_future()

        def done(result: Outcome[T]) -> None:
            if not finished.done():
                finished.set_result(result)

        trio.lowlevel.start_guest_run(
            trio_main,
            *args,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )
        result = await finished
        return result.unwrap()

    return asyncio.run(host())


async def await_aio(make_awaitable: Callable[[], Awaitable[T]]) -> T:
    """Await an asyncio awaitable from trio; cancelling the trio caller cancels it.

    Must be called inside ``run``. The awaitable is made and wrapped in a task on the host loop.
    """
    loop = asyncio.get_running_loop()
    task: asyncio.Future[T] = asyncio.ensure_future(make_awaitable(), loop=loop)
    if task.done():
        return task.result()
    token = trio.lowlevel.current_trio_token()
    finished = trio.Event()

    def wake(_: asyncio.Future[T]) -> None:
        with contextlib.suppress(trio.RunFinishedError):  # trio ended: nobody waits any more
            token.run_sync_soon(finished.set)

    task.add_done_callback(wake)
    try:
        await finished.wait()
    except BaseException:
        task.cancel()
        raise
    return task.result()
