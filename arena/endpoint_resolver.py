"""The I/O half of the endpoint guard: resolve a bot endpoint's name, then check every address.

``EndpointGuard.check`` runs on the asyncio host loop (the API handlers await it directly, the
ladder through ``referee.aio_bridge.await_aio``). Names are looked up on a thread pool of
their own, under a deadline, so a registrant's slow DNS server cannot hold the loop or the
store's threads. The arena checks at registration, on UpdateBot and again before every match
and health probe (DNS may have changed since), and hands the referee the checked IP target.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from arena.endpoint_guard import (
    NOT_ALLOWED,
    EndpointRefused,
    GuardedTarget,
    GuardPolicy,
    IPAddress,
    check_addresses,
    parse_endpoint,
)

Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]
"""Looks up a name's TCP addresses (in the order a client would try them)."""

RESOLVE_TIMEOUT_S = 3.0
"""Longest a name lookup may take before the endpoint counts as not resolving."""

_DNS_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dns")


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """The operating system's resolver (``getaddrinfo``), TCP addresses only, de-duplicated."""
    loop = asyncio.get_running_loop()
    infos = await loop.run_in_executor(
        _DNS_THREADS,
        partial(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP),
    )
    addresses: list[IPAddress] = []
    for family, *_, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            address = ipaddress.ip_address(str(sockaddr[0]))
            if address not in addresses:
                addresses.append(address)
    return addresses


class EndpointGuard:
    """The guard with its policy and resolver (a stub in tests)."""

    def __init__(
        self,
        policy: GuardPolicy | None = None,
        resolver: Resolver = system_resolver,
        timeout_s: float = RESOLVE_TIMEOUT_S,
    ) -> None:
        self.policy = policy or GuardPolicy()
        self.resolver = resolver
        self.timeout_s = timeout_s

    def add_own_socket(self, host: str, port: int) -> None:
        """Also refuse one of the arena's listening sockets (known once it is bound)."""
        self.policy = self.policy.with_own_socket(host, port)

    async def check(self, text: str) -> GuardedTarget:
        """Parse, resolve and check an endpoint: the target to connect to, or
        ``EndpointRefused`` (``public`` says nothing about the target)."""
        endpoint = parse_endpoint(text)
        if endpoint.literal is not None:
            return check_addresses(endpoint, [endpoint.literal], self.policy)
        try:
            async with asyncio.timeout(self.timeout_s):
                addresses = await self.resolver(endpoint.host, endpoint.port)
        except (OSError, TimeoutError, UnicodeError, ValueError) as error:
            raise EndpointRefused(NOT_ALLOWED, f"{endpoint.host}: {error!r}") from None
        return check_addresses(endpoint, addresses, self.policy)
