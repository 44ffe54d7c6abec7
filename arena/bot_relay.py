"""Outbound bots across arena processes (issue 20): the bot's ConnectBot stream is open to one
process; the matches another process referees reach it through a ``RelayBot`` stream to that
one.

- Where each outbound bot is connected is kept in the store (``bot_streams``: bot id, worker
  id), written when a stream opens and closes (``StreamRegistry``); standings read it, so every
  process shows the bot connected.
- The referee of process B, asked to play an outbound bot with no stream open to B, dials
  ``RelayBot`` at the process holding the stream (``relay_dialer``), with the admin token, and
  sends the bot's messages on it exactly as on a bot's own stream: pending requests are sent
  again when a relay is re-established, the clock runs in B as for any stream.
- Process A forwards each relayed message on the bot's stream under an id of its own and routes
  the answer back (``referee.bot_stream.StreamBot.open_relay``). When the bot's stream to A
  drops, A ends the relays, and B looks again where the bot is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena.metrics import Metrics
from arena.peers import PeerChannels
from arena.store.calls import call_store
from arena.store.coordination import Coordination
from arena.store.repository import Store
from referee.bot_stream import Link, StreamBot

log = logging.getLogger("arena.relay")

RELAY_SERVICE = "cardarena.arena.v1.ArenaService"
RELAY_METHOD = "RelayBot"
RELAY_PATH = f"/{RELAY_SERVICE}/{RELAY_METHOD}"


class StreamRegistry:
    """Writes where outbound bots are connected (this worker) to the store."""

    def __init__(
        self, store: Store, coordination: Coordination, worker_id: str, metrics: Metrics
    ) -> None:
        self.store, self.coordination = store, coordination
        self.worker_id, self.metrics = worker_id, metrics

    async def opened(self, bot_id: str) -> None:
        """``bot_id``'s stream is open to this process now."""
        await call_store(
            self.store, self.metrics, self.coordination.stream_opened, bot_id, self.worker_id
        )

    async def closed(self, bot_id: str) -> None:
        """``bot_id``'s stream to this process ended."""
        try:
            await call_store(
                self.store,
                self.metrics,
                self.coordination.stream_closed,
                bot_id,
                self.worker_id,
            )
        except Exception:  # the store is away: the row dies with this worker's liveness
            log.warning("cannot record that %s disconnected", bot_id, exc_info=True)


Locate = Callable[[str], Awaitable["str | None"]]
"""Where (the API address of the process) an outbound bot is attached, if not here."""


def relay_dialer(
    locate: Locate, peers: PeerChannels, admin_token: str
) -> Callable[[StreamBot], Link]:
    """How this process reaches an outbound bot attached to another: a ``Link`` over a
    ``RelayBot`` call to that process, opened once ``locate`` says where (nowhere, or here:
    the link ends at once as a drop, and the bot is looked for again after a back-off)."""

    def dial(bot: StreamBot) -> Link:
        bot_id = bot.target.removeprefix("outbound://")

        async def open_call() -> Any:
            address = await locate(bot_id)
            if not address:
                return None
            async with peers.holding(address) as peer:
                method: Any = peer.channel.stream_stream(  # type: ignore[call-arg]
                    RELAY_PATH,
                    request_serializer=None,
                    response_deserializer=None,
                    _registered_method=True,
                )
            call = method(metadata=(("authorization", f"Bearer {admin_token}"),))
            await call.write(_first_relay_message(bot_id))
            return call

        return Link.opening(bot, open_call)

    return dial


def store_locator(registry: StreamRegistry) -> Locate:
    """``Locate`` from the store's ``bot_streams`` (another live worker holding the stream)."""

    async def locate(bot_id: str) -> str | None:
        holder = await call_store(
            registry.store, registry.metrics, registry.coordination.stream_holder, bot_id
        )
        if holder is None or holder[0] == registry.worker_id:
            return None
        return holder[1] or None

    return locate


def _first_relay_message(bot_id: str) -> bytes:
    from cardarena.arena.v1 import arena_service_pb2

    return arena_service_pb2.RelayBotRequest(bot_id=bot_id).SerializeToString()


def relay_bot_handler(
    find: Callable[[str], StreamBot | None], is_admin: Callable[[Any], bool]
) -> grpc.RpcMethodHandler[bytes, bytes]:
    """``ArenaService.RelayBot`` in bytes: forward a peer's messages to the bot's stream here."""
    from cardarena.arena.v1 import arena_service_pb2

    async def relay_bot(requests: Any, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        if not is_admin(context):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "RelayBot is for arena peers")
        first = await context.read()
        if not isinstance(first, bytes):
            return
        try:
            bot_id = arena_service_pb2.RelayBotRequest.FromString(first).bot_id
        except DecodeError:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the first message must name a bot"
            )
        bot = find(bot_id)
        if bot is None or not bot.directly_connected:
            await context.abort(grpc.StatusCode.NOT_FOUND, "the bot has no stream open here")
        assert bot is not None
        await context.send_initial_metadata(())
        relay = bot.open_relay(context.write)

        async def pump() -> None:
            while isinstance(raw := await context.read(), bytes):
                relay.forward(raw)

        tasks = {asyncio.ensure_future(pump()), asyncio.ensure_future(relay.closed.wait())}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            relay.close()  # the call ends: the peer looks for the bot again

    return grpc.stream_stream_rpc_method_handler(relay_bot)
