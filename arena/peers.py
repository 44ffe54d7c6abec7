"""Channels from this arena process to the APIs of the others on its database.

Used to relay a WatchMatch to the process that plays the match (``ArenaServicer``): every
arena process serves the whole API, so the playing process can always be asked. One channel
per peer address, made at first use; a channel nothing has used for ``idle_s`` is closed at
the next use of the cache, and at most ``max_peers`` idle ones are kept (the least recently
used closed first). Plaintext, or TLS with ``ClientTls`` (``ServeOptions.peer_tls``) for an
API served with TLS. Lives on the asyncio loop of the API's handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
import grpc.aio

from cardarena.arena.v1 import arena_service_pb2_grpc
from netkit.tls import ClientTls

if TYPE_CHECKING:  # the stubs' async stub type; at run time an aio channel makes one
    from cardarena.arena.v1.arena_service_pb2_grpc import ArenaServiceAsyncStub

PEER_CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    # A peer that stops answering fails the call rather than having it retried in a loop.
    ("grpc.enable_retries", 0),
    # Connecting to a peer that accepts and never answers gives up after this (gRPC's default
    # is 20 s); a relay waits for the channel a shorter time of its own (RELAY_CONNECT_S).
    ("grpc.min_reconnect_backoff_ms", 2_000),
    # A default gRPC server refuses pings more often than every 5 minutes.
    ("grpc.keepalive_time_ms", 300_000),
    ("grpc.keepalive_timeout_ms", 20_000),
)


@dataclass
class Peer:
    """One peer's channel and stub, and how many calls hold it now."""

    channel: grpc.aio.Channel
    stub: ArenaServiceAsyncStub
    used_at: float
    holds: int = field(default=0)

    async def ready(self, timeout_s: float) -> bool:
        """Whether the channel connects within ``timeout_s``."""
        try:
            await asyncio.wait_for(self.channel.channel_ready(), timeout_s)
        except TimeoutError:
            return False
        return True


class PeerChannels:
    """A bounded cache of channels to peer arena processes, by address."""

    def __init__(
        self,
        tls: ClientTls | None = None,
        idle_s: float = 300.0,
        max_peers: int = 64,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._credentials = None if tls is None else tls.credentials()  # bad files: now
        self.idle_s = idle_s
        self.max_peers = max_peers
        self.clock = clock
        self._peers: OrderedDict[str, Peer] = OrderedDict()

    def __len__(self) -> int:
        return len(self._peers)

    def _open(self, address: str) -> Peer:
        if self._credentials is None:
            channel = grpc.aio.insecure_channel(address, options=PEER_CHANNEL_OPTIONS)
        else:
            channel = grpc.aio.secure_channel(address, self._credentials, PEER_CHANNEL_OPTIONS)
        return Peer(channel, arena_service_pb2_grpc.ArenaServiceStub(channel), self.clock())

    @contextlib.asynccontextmanager
    async def holding(self, address: str) -> AsyncIterator[Peer]:
        """The peer at ``address``, held (never closed as idle) for the block."""
        peer = self._peers.get(address)
        if peer is None:
            peer = self._peers[address] = self._open(address)
        self._peers.move_to_end(address)
        peer.holds += 1
        try:
            yield peer
        finally:
            peer.holds -= 1
            peer.used_at = self.clock()
            await self.close_idle()

    async def close_idle(self) -> None:
        """Close the channels unused for ``idle_s``, and the least recently used idle ones
        beyond ``max_peers``."""
        now = self.clock()
        idle = [a for a, p in self._peers.items() if not p.holds]  # least recently used first
        extra = len(self._peers) - self.max_peers
        for address in idle:
            if extra <= 0 and now - self._peers[address].used_at < self.idle_s:
                continue
            extra -= 1
            await self._peers.pop(address).channel.close()

    async def close(self) -> None:
        """Close every channel (the process is stopping)."""
        peers, self._peers = list(self._peers.values()), OrderedDict()
        for peer in peers:
            await peer.channel.close()
