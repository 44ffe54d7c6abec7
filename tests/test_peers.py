"""The cache of channels to other arena processes: one per address, idle ones closed, bounded."""

from __future__ import annotations

import asyncio

import grpc

from arena.peers import PeerChannels
from tests.listeners import not_bots


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_one_channel_per_peer_closed_once_idle_and_never_while_held() -> None:
    async def scenario() -> None:
        clock = Clock()
        peers = PeerChannels(idle_s=60, max_peers=3, clock=clock)
        async with peers.holding("127.0.0.1:1") as first:
            async with peers.holding("127.0.0.1:1") as again:
                assert again is first, "one channel per address"
            clock.now = 1000
            async with peers.holding("127.0.0.1:2") as second:
                pass
            assert len(peers) == 2, "held: kept however long since it was last used"
        clock.now = 1030
        async with peers.holding("127.0.0.1:3") as third:
            pass
        assert len(peers) == 3
        clock.now = 1070
        async with peers.holding("127.0.0.1:3"):
            pass
        assert len(peers) == 1, "unused for 70 s: closed"
        for channel in (first.channel, second.channel):
            assert channel.get_state() == grpc.ChannelConnectivity.SHUTDOWN
        for address in ("127.0.0.1:4", "127.0.0.1:5", "127.0.0.1:6"):
            async with peers.holding(address):
                pass
        assert len(peers) == 3, "at most max_peers idle channels: the least recently used goes"
        assert third.channel.get_state() == grpc.ChannelConnectivity.SHUTDOWN
        await peers.close()
        assert len(peers) == 0

    asyncio.run(scenario())


def test_a_peer_that_never_answers_is_not_ready_within_the_wait() -> None:
    async def scenario(address: str) -> None:
        peers = PeerChannels()
        async with peers.holding(address) as peer:
            assert not await peer.ready(0.5)
        await peers.close()

    with not_bots("silent") as (address,):
        asyncio.run(scenario(address))
