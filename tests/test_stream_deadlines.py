"""A bot stream's deadlines (``StreamBot``): one asyncio timer per bot, set for the earliest
deadline of its pending requests, must still expire every request at its own deadline: one
asked after a longer one, and one whose earlier neighbour was answered before the timer fired.

In-process, against a stream that records what the referee writes and never answers (the
test answers by hand). ``fail_after`` bounds a request that would wait for the wrong timer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import trio
import trio.testing

from cardarena.bot.v1 import bot_service_pb2
from referee import aio_bridge
from referee.bot_endpoint import CallResult
from referee.bot_stream import Link, StreamBot
from referee.match import FaultKind

LONG_S, SHORT_S = 30.0, 0.05


class SilentStream:
    """The bot's side of a stream: keeps what the referee writes, answers nothing itself."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    async def write(self, data: bytes) -> None:
        self.written.append(data)

    async def read(self) -> bytes:
        await asyncio.Event().wait()  # never: cancelled when the stream closes
        raise AssertionError("unreachable")

    def request_ids(self) -> list[int]:
        """Ids of the requests written so far, in order."""
        return [
            message.id
            for data in self.written
            for message in bot_service_pb2.PlayRequest.FromString(data).messages
        ]


def with_bot(body: Callable[[StreamBot, Link, SilentStream], Awaitable[None]]) -> None:
    """Run ``body`` with an outbound bot attached to a ``SilentStream``."""

    async def main() -> None:
        bot = StreamBot("outbound://deadlines", 8)
        stream = SilentStream()
        link = bot.attach(stream.write, stream.read)
        try:
            await body(bot, link, stream)
        finally:
            await aio_bridge.await_aio(bot.close_channel)

    aio_bridge.run(main)


def answer(bot: StreamBot, link: Link, message_id: int) -> None:
    """The bot answers request ``message_id`` with an empty action."""
    message = bot_service_pb2.BotMessage(
        id=message_id, action=bot_service_pb2.ChooseActionResponse()
    )
    assert (
        bot.deliver(link, bot_service_pb2.PlayResponse(messages=[message]).SerializeToString())
        is None
    )


def test_a_request_with_an_earlier_deadline_than_one_pending_expires_at_its_own() -> None:
    async def body(bot: StreamBot, link: Link, stream: SilentStream) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.choose_action, b"", LONG_S)  # sets the bot's timer first
            await trio.testing.wait_all_tasks_blocked()
            with trio.fail_after(LONG_S / 3):
                result: CallResult = await bot.choose_action(b"", SHORT_S)
            assert result.fault is not None and result.fault.kind is FaultKind.TIMEOUT
            assert bot.calls_in_flight == 1  # the long one still waits
            nursery.cancel_scope.cancel()

    with_bot(body)


def test_a_request_after_an_answered_one_expires_when_the_timer_finds_nothing_due() -> None:
    async def body(bot: StreamBot, link: Link, stream: SilentStream) -> None:
        async with trio.open_nursery() as nursery:
            results: list[CallResult] = []

            async def ask(timeout_s: float) -> None:
                results.append(await bot.choose_action(b"", timeout_s))

            nursery.start_soon(ask, SHORT_S)  # the timer is set for this one's deadline
            while not stream.written:
                await trio.sleep(0.001)
            answer(bot, link, stream.request_ids()[0])  # answered: its deadline expires nothing
            await trio.testing.wait_all_tasks_blocked()
            assert results and results[0].fault is None
            with trio.fail_after(LONG_S / 3):
                results.append(await bot.choose_action(b"", 4 * SHORT_S))  # a later deadline
        assert results[1].fault is not None and results[1].fault.kind is FaultKind.TIMEOUT

    with_bot(body)
