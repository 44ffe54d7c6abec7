"""The API's rate limiters with a fake clock, the peer keys they count by, and the interceptor
that applies them, over real gRPC on loopback (an in-process asyncio server)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arena.limits import (
    READS,
    RETRY_AFTER,
    ApiLimits,
    LimitInterceptor,
    LimitsConfig,
    Rate,
    RateLimiter,
    StreamLimiter,
    peer_key,
    retry_after,
    token_key,
    whole_seconds,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.arena.v1 import arena_service_pb2_grpc


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_says_how_long_to_wait() -> None:
    clock = FakeClock()
    limiter = RateLimiter(Rate(3, 60.0), clock=clock)  # 3 at once, one more every 20 s
    assert [limiter.acquire("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("a") == pytest.approx(20.0)
    clock.now += 5
    assert limiter.acquire("a") == pytest.approx(15.0), "a refused call takes nothing"
    assert limiter.acquire("b") == 0.0, "keys have their own buckets"
    clock.now += 15
    assert limiter.acquire("a") == 0.0
    assert limiter.acquire("a") == pytest.approx(20.0)
    clock.now += 3600
    assert [limiter.acquire("a") for _ in range(4)][:3] == [0.0] * 3, "refills up to the burst"
    assert limiter.acquire("a") > 0


def test_an_unlimited_rate_never_refuses_and_remembers_nothing() -> None:
    limiter = RateLimiter(Rate.parse("off"), clock=FakeClock())
    assert all(limiter.acquire(str(i)) == 0.0 for i in range(1000))
    assert len(limiter) == 0


def test_memory_stays_bounded_when_an_attacker_cycles_keys() -> None:
    clock = FakeClock()
    limiter = RateLimiter(Rate(2, 3600.0), max_keys=100, clock=clock)
    limiter.acquire("victim")
    limiter.acquire("victim")
    for i in range(50):  # fewer new keys than the cap: the victim's empty bucket is kept
        limiter.acquire(f"attacker-{i}")
    assert limiter.acquire("victim") > 0
    for i in range(100_000):
        limiter.acquire(f"cycle-{i}")
    assert len(limiter) == 100


def test_buckets_are_thread_safe() -> None:
    limiter = RateLimiter(Rate(1000, 3600.0), clock=FakeClock())
    allowed: list[int] = []

    def take() -> None:
        allowed.append(sum(limiter.acquire("k") == 0.0 for _ in range(500)))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 1000, "exactly the burst, however the threads interleave"


def test_stream_slots_per_key_and_in_all() -> None:
    streams = StreamLimiter(per_key=2, total=3)
    assert streams.open("a") is None and streams.open("a") is None
    assert "2 streams" in (streams.open("a") or "")
    assert streams.open("b") is None
    assert "3 streams" in (streams.open("c") or ""), "the total cap"
    streams.close("a")
    assert streams.open("c") is None
    assert streams.streams == 3
    for key in ("a", "b", "c"):
        streams.close(key)
    assert len(streams) == 0, "no entry is kept for a key with nothing open"


@pytest.mark.parametrize(
    ("peer", "key"),
    [
        ("ipv4:203.0.113.7:50123", "203.0.113.7"),
        ("ipv4:203.0.113.7:1", "203.0.113.7"),
        ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"),
        ("ipv6:%5B2001:db8:1:2:ffff::1%5D:443", "2001:db8:1:2::/64"),
        ("ipv6:[::ffff:198.51.100.9]:80", "198.51.100.9"),
        ("ipv6:[::1]:5000", "::/64"),
        ("unix:/tmp/socket", "unix"),
        ("ipv4:not-an-address:1", "ipv4:not-an-address:1"),
        ("", "unknown"),
    ],
)
def test_peers_are_counted_by_address_and_ipv6_by_its_64(peer: str, key: str) -> None:
    assert peer_key(peer) == key


def test_rates_parse_and_print() -> None:
    assert Rate.parse("20/s") == Rate(20, 1.0)
    assert Rate.parse("60/min") == Rate(60, 60.0)
    assert Rate.parse("10 / h") == Rate(10, 3600.0)
    assert Rate.parse("100/day") == Rate(100, 86400.0)
    assert str(Rate.parse("60/min")) == "60/min" and str(Rate.parse("off")) == "off"
    for bad in ("20", "x/s", "20/week", "-1/s", "a" * 10_000):
        with pytest.raises(ValueError) as error:
            Rate.parse(bad)
        assert len(str(error.value)) < 120


def test_retry_after_is_whole_seconds_rounded_up() -> None:
    assert [whole_seconds(w) for w in (0.01, 1.0, 1.2, 59.99)] == [1, 1, 2, 60]
    assert retry_after(((RETRY_AFTER, "12"), ("other", "x"))) == 12
    assert retry_after({RETRY_AFTER: "3"}) == 3
    assert retry_after(((RETRY_AFTER, "soon"),)) is None
    assert retry_after(None) is None


def test_every_arena_method_has_a_limit_class() -> None:
    methods = {m.name for m in pb.DESCRIPTOR.services_by_name["ArenaService"].methods}
    assert methods >= READS
    writes = methods - READS
    assert {"RegisterBot", "UpdateBot", "SetBotState", "RotateToken", "BanOwner"} <= writes
    assert {"WatchMatch", "GetStandings", "ListMatches"} <= READS


# -- the interceptor over real gRPC ------------------------------------------------------------


class FakeArena(arena_service_pb2_grpc.ArenaServiceServicer):
    """Answers a few methods at once; a watch stream stays open until ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0

    async def ListGames(self, request: Any, context: Any) -> pb.ListGamesResponse:
        self.calls += 1
        return pb.ListGamesResponse()

    async def UpdateBot(self, request: Any, context: Any) -> pb.UpdateBotResponse:
        self.calls += 1
        return pb.UpdateBotResponse()

    async def WatchMatch(self, request: Any, context: Any) -> AsyncIterator[pb.WatchMatchResponse]:
        yield pb.WatchMatchResponse(move=pb.MoveEvent(index=0))
        await self.release.wait()


async def _serving(
    config: LimitsConfig, clock: FakeClock
) -> tuple[grpc.aio.Server, FakeArena, str, ApiLimits]:
    limits = ApiLimits(config, clock)
    server = grpc.aio.server(interceptors=[LimitInterceptor(limits, "the-admin")])
    arena = FakeArena()  # type: ignore[abstract]  # the rest answer UNIMPLEMENTED
    arena_service_pb2_grpc.add_ArenaServiceServicer_to_server(arena, server)
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, arena, f"127.0.0.1:{port}", limits


async def first_move(stream: Any) -> int:
    event = await stream.read()
    assert isinstance(event, pb.WatchMatchResponse)
    return event.move.index


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def test_the_interceptor_refuses_with_retry_after_and_spares_the_admin() -> None:
    async def main() -> None:
        clock = FakeClock()
        config = LimitsConfig(peer_requests=Rate(3, 30.0), token_writes=Rate(2, 60.0))
        server, arena, address, _ = await _serving(config, clock)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
                for _ in range(3):
                    await stub.ListGames(pb.ListGamesRequest())
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.ListGames(pb.ListGamesRequest())
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "your address" in (refused.value.details() or "")
                assert retry_after(refused.value.trailing_metadata()) == 10
                assert arena.calls == 3, "a refused call never reaches the service"
                for _ in range(5):
                    await stub.ListGames(pb.ListGamesRequest(), metadata=_bearer("the-admin"))
                health_stub: Any = health_pb2_grpc.HealthStub(channel)
                check = await health_stub.Check(health_pb2.HealthCheckRequest())
                assert check.status == health_pb2.HealthCheckResponse.SERVING, "not limited"

                clock.now += 3600  # a full bucket again; now the per-token write limit
                for _ in range(2):
                    await stub.UpdateBot(pb.UpdateBotRequest(), metadata=_bearer("owner-1"))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.UpdateBot(pb.UpdateBotRequest(), metadata=_bearer("owner-1"))
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "this token" in (refused.value.details() or "")
                assert retry_after(refused.value.trailing_metadata()) == 30
                clock.now += 10  # one more call for the address; another token has its own
                await stub.UpdateBot(pb.UpdateBotRequest(), metadata=_bearer("owner-2"))
        finally:
            await server.stop(None)

    asyncio.run(main())


def test_watch_streams_open_at_once_are_capped_per_peer() -> None:
    async def main() -> None:
        config = LimitsConfig(peer_watch_streams=2)
        server, arena, address, limits = await _serving(config, FakeClock())
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
                streams = [stub.WatchMatch(pb.WatchMatchRequest()) for _ in range(2)]
                for stream in streams:
                    assert await first_move(stream) == 0
                third = stub.WatchMatch(pb.WatchMatchRequest())
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await third.read()
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert retry_after(refused.value.trailing_metadata()) == 5
                streams[0].cancel()
                for _ in range(100):  # the server sees the cancellation a moment later
                    if limits.watch_streams.streams == 1:
                        break
                    await asyncio.sleep(0.02)
                fourth = stub.WatchMatch(pb.WatchMatchRequest())
                assert await first_move(fourth) == 0
                arena.release.set()
                for stream in (streams[1], fourth):
                    while await stream.read() is not grpc.aio.EOF:
                        pass
            for _ in range(100):
                if not len(limits.watch_streams):
                    break
                await asyncio.sleep(0.02)
            assert len(limits.watch_streams) == 0, "every slot given back"
        finally:
            await server.stop(None)

    asyncio.run(main())


def test_token_keys_do_not_keep_the_token() -> None:
    key = token_key("secret-token-value")
    assert "secret" not in key and len(key) == 32
