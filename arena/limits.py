"""Rate limits for the arena API: token buckets and open-stream counts, keyed by peer or token.

The limiters are plain objects with an injected clock (``time.monotonic`` by default), so tests
drive them with a fake one. Their memory is bounded: each keeps at most ``max_keys`` keys and
forgets the least recently used one first (a forgotten key comes back with a full bucket, which
costs an attacker cycling addresses more than it gains). IPv6 peers are keyed by their /64
network, since one host commonly holds a whole /64.

``ApiLimits`` holds every limiter of one ``arena serve``; ``LimitInterceptor`` applies the
per-peer and per-token ones to every ArenaService call in one place. Refusals are
RESOURCE_EXHAUSTED with a ``retry-after`` trailing-metadata entry in whole seconds. Per-owner
limits (bots per owner, registrations per hour) live in the store, where every process sharing
a database sees the same counts.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import re
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

from cardarena.arena.v1 import arena_service_pb2

Clock = Callable[[], float]
RETRY_AFTER = "retry-after"
"""The trailing-metadata key of a refusal: whole seconds to wait before trying again."""

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(s|sec|second|m|min|minute|h|hour|d|day)\s*$")
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    """``burst`` calls at once, refilled at ``burst`` per ``period_s`` (``burst`` 0: no limit)."""

    burst: int
    period_s: float

    @property
    def unlimited(self) -> bool:
        """Whether this rate limits nothing."""
        return self.burst <= 0

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"20/s"``, ``"60/min"``, ``"10/h"``, ``"100/day"``, or ``"off"`` (no limit)."""
        if text.strip().lower() in ("off", "0", "none", "unlimited"):
            return cls(0, 1.0)
        match = _RATE.match(text.lower())
        if match is None:
            raise ValueError(f"expected N/s, N/min, N/h, N/day or off (got {text[:32]!r})")
        return cls(int(match[1]), float(_PERIODS[match[2][0]]))

    def __str__(self) -> str:
        if self.unlimited:
            return "off"
        unit = {1: "s", 60: "min", 3600: "h", 86400: "day"}.get(int(self.period_s))
        return f"{self.burst}/{unit}" if unit else f"{self.burst}/{self.period_s:g}s"


def whole_seconds(wait_s: float) -> int:
    """A wait as ``retry-after`` says it: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(wait_s))


class RateLimiter:
    """Token buckets, one per key, in at most ``max_keys`` keys (least recently used forgotten).

    Thread-safe: the API's event loop and the store's thread both charge buckets.
    """

    def __init__(self, rate: Rate, max_keys: int = 10_000, clock: Clock = time.monotonic) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.rate = rate
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def acquire(self, key: str) -> float:
        """Take one call from ``key``'s bucket: 0.0 if it had one, else the seconds until it
        will (and nothing is taken)."""
        if self.rate.unlimited:
            return 0.0
        refill_per_s = self.rate.burst / self.rate.period_s
        with self._lock:
            now = self.clock()
            tokens, at = self._buckets.pop(key, (float(self.rate.burst), now))
            tokens = min(float(self.rate.burst), tokens + (now - at) * refill_per_s)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / refill_per_s
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            return wait


class StreamLimiter:
    """Open streams: at most ``per_key`` per key and ``total`` in all (0: no limit). Memory is
    one entry per key with a stream open, so at most ``total`` entries."""

    def __init__(self, per_key: int, total: int) -> None:
        self.per_key = per_key
        self.total = total
        self._open: dict[str, int] = {}
        self._count = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._open)

    @property
    def streams(self) -> int:
        """Streams open in all."""
        return self._count

    def open(self, key: str) -> str | None:
        """Count a stream opening for ``key``: None if allowed, else why not."""
        with self._lock:
            if self.total and self._count >= self.total:
                return f"the arena has {self.total} streams open, its limit"
            held = self._open.get(key, 0)
            if self.per_key and held >= self.per_key:
                return f"{held} streams already open from your address (limit {self.per_key})"
            self._open[key] = held + 1
            self._count += 1
            return None

    def close(self, key: str) -> None:
        """Count a stream of ``key`` closed (once per successful ``open``)."""
        with self._lock:
            held = self._open.pop(key, 0) - 1
            if held > 0:
                self._open[key] = held
            self._count -= 1


def peer_key(peer: str) -> str:
    """The limit key of a gRPC peer string: the IPv4 address, the IPv6 /64 network (an IPv6
    address mapping an IPv4 one counts as that IPv4 address), or the transport for the rest."""
    kind, _, rest = urllib.parse.unquote(peer).partition(":")
    if kind in ("ipv4", "ipv6"):
        host = rest.rsplit(":", 1)[0].strip("[]")
        try:
            address = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return peer[:64]
        if isinstance(address, ipaddress.IPv6Address):
            if address.ipv4_mapped is not None:
                return str(address.ipv4_mapped)
            return str(ipaddress.IPv6Network((address, 64), strict=False))
        return str(address)
    return kind[:16] or "unknown"


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | Any) -> str | None:
    """The token of ``authorization: Bearer <token>`` metadata, if any."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value.removeprefix("Bearer ").strip()
    return None


def token_key(token: str) -> str:
    """A token's limit key: a hash, so no token is kept in memory as it is."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class LimitsConfig:
    """Every API limit of an arena (``arena serve`` flags; docs/operating-limits.md says why
    each default is what it is)."""

    peer_requests: Rate = Rate(20, 1.0)
    """Every call from one address (network /64 for IPv6), reads and writes alike."""
    peer_new_owners: Rate = Rate(5, 3600.0)
    """Registrations that create an owner, per address."""
    token_writes: Rate = Rate(60, 60.0)
    """Calls that change something (register, update, set state, rotate), per owner token."""
    peer_watch_streams: int = 8
    """WatchMatch streams open at once from one address (0: no limit)."""
    watch_streams: int = 1000
    """WatchMatch streams open at once in all (0: no limit)."""
    owner_bots: int = 25
    """Bots an owner may have that are not retired (0: no limit)."""
    owner_registrations_per_hour: int = 30
    """Bots an owner may register in any hour (0: no limit)."""
    registration_open: bool = True
    """Whether anyone may create an owner by registering (else only the admin, CreateOwner)."""
    max_keys: int = 10_000
    """Addresses or tokens each limiter remembers (least recently used forgotten first)."""


@dataclass
class ApiLimits:
    """The limiters of one ``arena serve``, shared by the interceptor and the servicer."""

    config: LimitsConfig = field(default_factory=LimitsConfig)
    clock: Clock = time.monotonic

    def __post_init__(self) -> None:
        config = self.config
        self.peer_requests = RateLimiter(config.peer_requests, config.max_keys, self.clock)
        self.peer_new_owners = RateLimiter(config.peer_new_owners, config.max_keys, self.clock)
        self.token_writes = RateLimiter(config.token_writes, config.max_keys, self.clock)
        self.watch_streams = StreamLimiter(config.peer_watch_streams, config.watch_streams)


_PREFIX = "/" + arena_service_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name + "/"

READS = frozenset(
    {
        "ListGames",
        "ListLadders",
        "GetStandings",
        "GetBotProfile",
        "GetMatchRecord",
        "WatchMatch",
        "ListMatches",
        "GetTournament",
        "ListTournaments",
    }
)
"""Methods that only read: limited per peer. Every other method is a write, limited per token as
well (a new method is a write until it is listed here: the stricter class by default)."""

Handler = Callable[[Any, Any], Any]
"""A handler's behavior: (request, context) to a response or an async iterator of them."""


def is_admin_token(token: str | None, admin_token: str) -> bool:
    """Whether ``token`` is the arena's admin token (constant-time; no admin token set: never)."""
    return bool(admin_token) and hmac.compare_digest(token or "", admin_token)


class LimitInterceptor(grpc.aio.ServerInterceptor):
    """Applies ``ApiLimits`` to every ArenaService call (other services pass untouched).

    A call with the admin token is never limited. Every other call is charged to its peer's
    request bucket, a write with a token also to that token's bucket, and a WatchMatch holds
    one of its peer's stream slots until it ends.
    """

    def __init__(self, limits: ApiLimits, admin_token: str) -> None:
        self.limits = limits
        self.admin_token = admin_token

    def is_admin(self, token: str | None) -> bool:
        """Whether ``token`` is the admin token (constant-time)."""
        return is_admin_token(token, self.admin_token)

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(_PREFIX):
            return handler
        name = method.removeprefix(_PREFIX)
        token = bearer_token(handler_call_details.invocation_metadata)
        if self.is_admin(token):
            return handler
        write_key = token_key(token) if token and name not in READS else None
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, write_key),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    async def _charge(
        self, context: grpc.aio.ServicerContext[Any, Any], write_key: str | None
    ) -> str:
        """Charge the call's buckets; aborts with RESOURCE_EXHAUSTED if one is empty."""
        peer = peer_key(context.peer())
        wait = self.limits.peer_requests.acquire(peer)
        what = f"too many calls from your address (limit {self.limits.config.peer_requests})"
        if not wait and write_key is not None:
            wait = self.limits.token_writes.acquire(write_key)
            what = f"too many changes with this token (limit {self.limits.config.token_writes})"
        if wait:
            await refuse(context, what, wait)
        return peer

    def _unary(self, behavior: Handler, write_key: str | None) -> Handler:
        async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await self._charge(context, write_key)
            return await behavior(request, context)

        return limited

    def _stream(self, behavior: Handler) -> Handler:
        async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            peer = await self._charge(context, None)
            refused = self.limits.watch_streams.open(peer)
            if refused is not None:
                await refuse(context, refused, 5.0)
            try:
                async for response in behavior(request, context):
                    yield response
            finally:
                self.limits.watch_streams.close(peer)

        return limited


async def refuse(context: grpc.aio.ServicerContext[Any, Any], what: str, wait_s: float) -> None:
    """Abort the call with RESOURCE_EXHAUSTED and ``retry-after`` (whole seconds)."""
    seconds = whole_seconds(wait_s)
    await context.abort(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        what,
        trailing_metadata=((RETRY_AFTER, str(seconds)),),
    )


def retry_after(metadata: Any) -> int | None:
    """The ``retry-after`` seconds of a refusal's trailing metadata, if it has one (clients)."""
    items = metadata.items() if isinstance(metadata, Mapping) else metadata or ()  # or pairs
    for key, value in items:
        if key == RETRY_AFTER:
            text = value.decode() if isinstance(value, bytes) else str(value)
            return int(text) if text.isdigit() else None
    return None
