"""The endpoint guard: which bot endpoints the arena may call (pure; standard library only).

Anyone may register a bot, and the arena then connects to whatever address was given from
inside the operator's network. So an endpoint is parsed strictly (``host:port``,
``[IPv6]:port`` or ``tls://host:port``; no other scheme, nothing but TCP) and every address it
names or resolves to is classified: loopback, private (RFC 1918, RFC 4193), link-local (with
the cloud metadata address 169.254.169.254), CGNAT (100.64.0.0/10), multicast, unspecified,
reserved, and the IPv6 forms that carry one of those inside (IPv4-mapped, IPv4-compatible,
6to4, NAT64, Teredo) are refused, and so are the arena's own listening ports. Operators who
host house bots on their network allow it by CIDR; ``GuardPolicy(allow_private=True)`` turns
the address classes off for local use.

This module resolves nothing: ``arena.endpoint_resolver`` looks names up and hands the
addresses to ``check_addresses``, which gives the referee a ``GuardedTarget`` (an IP target
such as ``ipv4:203.0.113.7:50051``, so gRPC does no DNS of its own). A refusal's public reason
(``EndpointRefused.public``) never says what the address is or whether a name resolved, so the
guard is not a port scanner; ``EndpointRefused.detail`` is for the operator's log.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_ENDPOINT_LENGTH = 270
"""Longest endpoint text accepted: ``tls://`` + a 253-character name + ``:65535``."""

MAX_ADDRESSES = 32
"""Resolved addresses looked at per name (every one must pass)."""

TLS_SCHEME = "tls"
"""The one scheme an endpoint may carry (``tls://host:port``)."""

SYNTAX = "endpoint must be host:port, [IPv6]:port or tls://host:port (TCP, port 1-65535)"
"""The refusal of an endpoint that does not parse (says nothing of any target)."""

NOT_ALLOWED = "endpoint refused: it must be a public address the arena may call"
"""The one refusal of an endpoint that parses but names, or resolves to, an address the guard
refuses, or does not resolve at all: the same words whatever the reason, so a refusal tells a
registrant nothing about the operator's network."""

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_PORT = re.compile(r"^[0-9]{1,5}$")


class EndpointRefused(Exception):
    """An endpoint the guard refuses: ``public`` for the registrant, ``detail`` for the log."""

    def __init__(self, public: str, detail: str) -> None:
        super().__init__(public)
        self.public = public
        self.detail = detail


@dataclass(frozen=True)
class Endpoint:
    """A parsed endpoint: a host name or an IP literal, a TCP port, and whether TLS is asked."""

    host: str
    """A lower-case DNS name, or an IP literal's canonical text (no brackets)."""
    port: int
    tls: bool = False
    literal: IPAddress | None = None
    """The address, when the host is an IP literal (nothing to resolve)."""


@dataclass(frozen=True)
class GuardedTarget:
    """A checked address to connect to: what the referee is given instead of the endpoint."""

    target: str
    """A gRPC target that needs no DNS: ``ipv4:1.2.3.4:50051`` or ``ipv6:[2001:db8::1]:50051``
    (``tls://NAME@ipv4:...`` for a TLS endpoint: see ``referee.bot_client.open_channel``)."""
    address_key: str
    """The address and port in canonical form (``1.2.3.4:50051``, ``[2001:db8::1]:50051``):
    equal for two endpoints that reach the same socket."""
    tls: bool
    server_name: str
    """The name a TLS certificate is checked against (the endpoint's host)."""


@dataclass(frozen=True)
class GuardPolicy:
    """What the guard lets through."""

    allow_private: bool = False
    """Off switch for local use: no address class is refused (the scheme and the arena's own
    ports still are)."""
    allowed_networks: tuple[IPNetwork, ...] = ()
    """Networks whose addresses are allowed whatever their class (an operator's house bots)."""
    own_ports: frozenset[int] = frozenset()
    """The arena's own listening ports (API, metrics, house bot)."""
    own_hosts: frozenset[IPAddress] = field(default_factory=frozenset)
    """Addresses the arena listens on explicitly (beyond every non-public address)."""

    def with_own_socket(self, host: str, port: int) -> GuardPolicy:
        """This policy, also refusing ``host:port`` (one of the arena's listening sockets; a
        wildcard or a name host covers every non-public address)."""
        hosts = set(self.own_hosts)
        address = _ip_literal(host.strip("[]"))
        if address is not None and not address.is_unspecified:
            hosts.add(address)
        return GuardPolicy(
            self.allow_private,
            self.allowed_networks,
            self.own_ports | {port},
            frozenset(hosts),
        )


def parse_networks(texts: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDR texts (``10.1.0.0/16``, ``fd00:1::/64``, a bare address) as networks; ValueError
    names the one that does not parse."""
    networks = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError as error:
            raise ValueError(f"not a network (CIDR): {text[:64]!r}") from error
    return tuple(networks)


def _ip_literal(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_endpoint(text: str) -> Endpoint:
    """Parse an endpoint; ``EndpointRefused`` (with ``SYNTAX``) if it is not one the arena calls.

    A name must be a DNS name of letters, digits and hyphens whose last label is not numeric
    (so ``127.1`` or ``2130706433`` are not taken for names that the C resolver would read as
    addresses); an IPv6 literal must be bracketed and carry no zone (``%eth0``).
    """

    def refuse(why: str) -> EndpointRefused:
        return EndpointRefused(SYNTAX, why)

    if not text or len(text) > MAX_ENDPOINT_LENGTH or not text.isascii() or not text.isprintable():
        raise refuse("empty, too long or not printable ASCII")
    rest, tls = text, False
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme.lower() != TLS_SCHEME:
            raise refuse(f"scheme {scheme[:16]!r}")
        tls = True
    host, sep, port_text = rest.rpartition(":")
    if not sep or not _PORT.match(port_text) or not 1 <= int(port_text) <= 65535:
        raise refuse("no port 1-65535")
    port = int(port_text)
    if host.startswith("[") and host.endswith("]"):
        address = _ip_literal(host[1:-1])
        if not isinstance(address, ipaddress.IPv6Address) or address.scope_id:
            raise refuse("not an IPv6 literal (without a zone)")
        return Endpoint(str(address), port, tls, address)
    if not host or any(c in host for c in "[]:%/@"):
        raise refuse("a scheme (unix:, vsock:, …), an unbracketed IPv6 literal or a path")
    address = _ip_literal(host)
    if isinstance(address, ipaddress.IPv4Address):
        return Endpoint(str(address), port, tls, address)
    name = host.lower().removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise refuse("not a DNS name")
    if labels[-1].isdigit():
        raise refuse("a numeric last label (an address in another spelling)")
    return Endpoint(name, port, tls, None)


_V4_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("unspecified", ("0.0.0.0/8",)),
    ("loopback", ("127.0.0.0/8",)),
    ("private", ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
    ("cgnat", ("100.64.0.0/10",)),
    ("link-local", ("169.254.0.0/16",)),
    ("multicast", ("224.0.0.0/4",)),
    (
        "reserved",
        (
            "240.0.0.0/4",  # future use, and the broadcast address
            "192.0.0.0/24",  # IETF protocol assignments
            "192.0.2.0/24",  # documentation
            "198.51.100.0/24",
            "203.0.113.0/24",
            "198.18.0.0/15",  # benchmarking
            "192.88.99.0/24",  # the retired 6to4 relay anycast
        ),
    ),
)
_V6_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("unspecified", ("::/128",)),
    ("loopback", ("::1/128",)),
    ("ipv4-compatible", ("::/96",)),  # deprecated ::a.b.c.d (RFC 4291)
    ("ipv4-translated", ("::ffff:0:0:0/96",)),  # SIIT (RFC 2765)
    ("nat64-local", ("64:ff9b:1::/48",)),  # local-use NAT64 (RFC 8215)
    ("teredo", ("2001::/32",)),
    ("private", ("fc00::/7", "fec0::/10")),  # unique local (RFC 4193), old site-local
    ("link-local", ("fe80::/10",)),
    ("multicast", ("ff00::/8",)),
    ("reserved", ("100::/64", "2001:db8::/32", "3fff::/20", "2001:10::/28", "2001:20::/28")),
)


def _networks(
    table: tuple[tuple[str, tuple[str, ...]], ...],
) -> tuple[tuple[str, tuple[IPNetwork, ...]], ...]:
    return tuple((name, tuple(ipaddress.ip_network(n) for n in nets)) for name, nets in table)


V4_CLASSES = _networks(_V4_CLASSES)
"""The IPv4 networks the guard refuses, by class name."""
V6_CLASSES = _networks(_V6_CLASSES)
"""The IPv6 networks the guard refuses, by class name (embedded IPv4 forms are unwrapped)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def unwrap(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address stands for when it is an IPv4-mapped address
    (``::ffff:a.b.c.d``: the same socket), else the address itself."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def classify(address: IPAddress) -> str | None:
    """The class that makes the guard refuse an address (``"loopback"``, ``"private"``,
    ``"6to4 of private"``, …), or None for a public address."""
    address = unwrap(address)
    if isinstance(address, ipaddress.IPv4Address):
        for name, networks in V4_CLASSES:
            if any(address in network for network in networks):
                return name
        return None if address.is_global else "reserved"
    embedded = None
    if address in _NAT64:
        embedded, via = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "nat64"
    elif address.sixtofour is not None:
        embedded, via = address.sixtofour, "6to4"
    if embedded is not None:
        inner = classify(embedded)
        return None if inner is None else f"{via} of {inner}"
    for name, networks in V6_CLASSES:
        if any(address in network for network in networks):
            return name
    return None if address.is_global else "reserved"


def refusal(address: IPAddress, port: int, policy: GuardPolicy) -> str | None:
    """Why the guard refuses ``address:port`` under ``policy`` (for the log), or None."""
    address = unwrap(address)
    if port in policy.own_ports and (address in policy.own_hosts or classify(address)):
        return "one of the arena's own listening sockets"
    if policy.allow_private or any(
        address.version == network.version and address in network
        for network in policy.allowed_networks
    ):
        return None
    return classify(address)


def target_of(address: IPAddress, port: int, endpoint: Endpoint) -> GuardedTarget:
    """The gRPC target and address key of an (already checked) address."""
    address = unwrap(address)
    if isinstance(address, ipaddress.IPv4Address):
        key, target = f"{address}:{port}", f"ipv4:{address}:{port}"
    else:
        key, target = f"[{address}]:{port}", f"ipv6:[{address}]:{port}"
    if endpoint.tls:  # the referee dials the address and checks the certificate's name
        target = f"tls://{endpoint.host}@{target}"
    return GuardedTarget(target, key, endpoint.tls, endpoint.host)


def check_addresses(
    endpoint: Endpoint, addresses: Sequence[IPAddress], policy: GuardPolicy
) -> GuardedTarget:
    """The target to connect to: the first address, once every one passes (a name that
    resolves to one public and one private address is refused: gRPC might pick either);
    ``EndpointRefused`` with ``NOT_ALLOWED`` otherwise, or when there is no address."""
    if not addresses:
        raise EndpointRefused(NOT_ALLOWED, f"{endpoint.host}: no address")
    for address in addresses[:MAX_ADDRESSES]:
        why = refusal(address, endpoint.port, policy)
        if why is not None:
            raise EndpointRefused(NOT_ALLOWED, f"{endpoint.host} -> {address}: {why}")
    return target_of(addresses[0], endpoint.port, endpoint)
