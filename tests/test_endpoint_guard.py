"""The endpoint guard: the parser and the classifier on tables (no network), the policy's
switches, and the check at connection time against a resolver stub whose answers change."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.endpoint_guard import (
    NOT_ALLOWED,
    SYNTAX,
    EndpointRefused,
    GuardPolicy,
    IPAddress,
    check_addresses,
    classify,
    parse_endpoint,
    parse_networks,
    refusal,
)
from arena.endpoint_resolver import EndpointGuard
from arena.house_bot import start_house_bot
from arena.ladder import REFUSED_DETAIL, Arena
from arena.store.claims import HOUSE_RANDOM, Claim
from cardarena.game.v1 import record_pb2
from referee import aio_bridge
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool, Refused
from referee.runner import play_match

ADDRESSES: list[tuple[str, str | None]] = [
    # public: allowed
    ("8.8.8.8", None),
    ("1.1.1.1", None),
    ("203.0.114.1", None),
    ("2606:4700:4700::1111", None),
    ("2001:4860:4860::8888", None),
    ("::ffff:8.8.8.8", None),  # IPv4-mapped public: the same socket as 8.8.8.8
    ("64:ff9b::808:808", None),  # NAT64 of 8.8.8.8
    ("2002:808:808::1", None),  # 6to4 of 8.8.8.8
    # loopback
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    # private (RFC 1918, RFC 4193)
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("fd00::1", "private"),
    ("fc00::1", "private"),
    ("fec0::1", "private"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:192.168.0.1", "private"),
    # link-local, the cloud metadata address among them
    ("169.254.169.254", "link-local"),
    ("169.254.0.1", "link-local"),
    ("fe80::1", "link-local"),
    ("::ffff:169.254.169.254", "link-local"),
    # CGNAT
    ("100.64.0.1", "cgnat"),
    ("100.127.255.254", "cgnat"),
    # multicast
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("ff05::1:3", "multicast"),
    # unspecified
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("::", "unspecified"),
    # reserved, documentation, benchmarking
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.0.8", "reserved"),
    ("192.0.2.1", "reserved"),
    ("198.51.100.7", "reserved"),
    ("203.0.113.9", "reserved"),
    ("198.18.0.1", "reserved"),
    ("192.88.99.1", "reserved"),
    ("2001:db8::1", "reserved"),
    ("100::1", "reserved"),
    ("3fff::1", "reserved"),
    # IPv6 forms that carry an IPv4 address inside
    ("::127.0.0.1", "ipv4-compatible"),
    ("::8.8.8.8", "ipv4-compatible"),
    ("::ffff:0:10.0.0.1", "ipv4-translated"),
    ("64:ff9b::7f00:1", "nat64 of loopback"),
    ("64:ff9b::a9fe:a9fe", "nat64 of link-local"),
    ("64:ff9b::a00:1", "nat64 of private"),
    ("64:ff9b:1::a00:1", "nat64-local"),
    ("2002:7f00:1::1", "6to4 of loopback"),
    ("2002:a00:1::1", "6to4 of private"),
    ("2002:a9fe:a9fe::", "6to4 of link-local"),
    ("2002:6440:1::", "6to4 of cgnat"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"),
]
"""Every address the guard is tested on, with the class it refuses it for (None: allowed)."""


@pytest.mark.parametrize(("text", "expected"), ADDRESSES)
def test_the_classifier_refuses_every_non_public_class(text: str, expected: str | None) -> None:
    assert classify(ipaddress.ip_address(text)) == expected


ENDPOINTS: list[tuple[str, tuple[str, int, bool] | None]] = [
    ("bot.example.com:50051", ("bot.example.com", 50051, False)),
    ("Bot.Example.COM.:443", ("bot.example.com", 443, False)),
    ("8.8.8.8:1", ("8.8.8.8", 1, False)),
    ("[2001:db8::1]:65535", ("2001:db8::1", 65535, False)),
    ("[2001:DB8:0::1]:80", ("2001:db8::1", 80, False)),
    ("tls://bot.example.com:443", ("bot.example.com", 443, True)),
    ("TLS://[2606:4700::1]:443", ("2606:4700::1", 443, True)),
    ("localhost:5432", ("localhost", 5432, False)),  # parses; resolves to loopback: refused
    ("unix:/var/run/docker.sock", None),
    ("unix:///tmp/x.sock", None),
    ("unix-abstract:grpc", None),
    ("unix-abstract:x:80", None),
    ("vsock:2:50051", None),
    ("dns:///bot.example.com:50051", None),
    ("ipv4:1.2.3.4:80", None),
    ("ipv6:[::1]:80", None),
    ("http://bot.example.com:80", None),
    ("xds:///svc:80", None),
    ("bot.example.com", None),
    ("bot.example.com:0", None),
    ("bot.example.com:65536", None),
    ("bot.example.com:+80", None),
    ("bot.example.com:080000", None),
    ("2001:db8::1:80", None),  # an IPv6 literal needs brackets
    ("[fe80::1%eth0]:80", None),  # no zones
    ("[1.2.3.4]:80", None),
    ("127.1:80", None),  # inet_aton spellings of addresses are not names
    ("2130706433:80", None),
    ("0x7f.0.0.1:80", None),
    ("user@host:80", None),
    ("host/path:80", None),
    ("-bad.example:80", None),
    ("bad_.example:80", None),
    ("exa mple.com:80", None),
    ("bücher.example:80", None),
    ("a" * 64 + ".example:80", None),
    (("a" * 60 + ".") * 5 + "com:80", None),
    ("", None),
    (":80", None),
    ("host:80\n", None),
]


@pytest.mark.parametrize(("text", "expected"), ENDPOINTS)
def test_the_parser_takes_tcp_endpoints_only(
    text: str, expected: tuple[str, int, bool] | None
) -> None:
    if expected is None:
        with pytest.raises(EndpointRefused) as refused:
            parse_endpoint(text)
        assert refused.value.public == SYNTAX
        return
    endpoint = parse_endpoint(text)
    assert (endpoint.host, endpoint.port, endpoint.tls) == expected


@given(st.text(max_size=300))
def test_the_parser_never_fails_otherwise_and_never_echoes_its_input(text: str) -> None:
    try:
        parse_endpoint(text)
    except EndpointRefused as refused:
        assert refused.public == SYNTAX


def ip(text: str) -> IPAddress:
    return ipaddress.ip_address(text)


def test_the_allow_list_the_off_switch_and_the_arenas_own_sockets() -> None:
    house = GuardPolicy(allowed_networks=parse_networks(["10.1.0.0/16", "fd00:1::/64"]))
    assert refusal(ip("10.1.2.3"), 80, house) is None
    assert refusal(ip("::ffff:10.1.2.3"), 80, house) is None, "the mapped form is the same"
    assert refusal(ip("fd00:1::5"), 80, house) is None
    assert refusal(ip("10.2.0.1"), 80, house) == "private"
    assert refusal(ip("2002:a01:203::"), 80, house) == "6to4 of private", "only direct forms"
    assert refusal(ip("169.254.169.254"), 80, house) == "link-local"

    off = GuardPolicy(allow_private=True)
    for text, _ in ADDRESSES:
        assert refusal(ip(text), 80, off) is None

    local = off.with_own_socket("127.0.0.1", 50050).with_own_socket("0.0.0.0", 9464)
    public = GuardPolicy().with_own_socket("203.0.114.5", 50050)
    own = "one of the arena's own listening sockets"
    assert refusal(ip("127.0.0.1"), 50050, local) == own
    assert refusal(ip("10.0.0.7"), 9464, local) == own, "a wildcard covers every local address"
    assert refusal(ip("::ffff:127.0.0.1"), 50050, local) == own
    assert refusal(ip("127.0.0.1"), 50051, local) is None
    assert refusal(ip("203.0.114.5"), 50050, public) == own
    assert refusal(ip("203.0.114.6"), 50050, public) is None, "another host's port 50050"
    with pytest.raises(ValueError, match="not a network"):
        parse_networks(["10.0.0.0/33"])


def test_a_name_is_refused_if_any_address_it_resolves_to_is() -> None:
    endpoint = parse_endpoint("mixed.example:50051")
    policy = GuardPolicy()
    with pytest.raises(EndpointRefused) as refused:
        check_addresses(endpoint, [ip("8.8.8.8"), ip("10.0.0.1")], policy)
    assert refused.value.public == NOT_ALLOWED
    assert "10.0.0.1: private" in refused.value.detail, "the operator's log says why"
    with pytest.raises(EndpointRefused):
        check_addresses(endpoint, [], policy)
    target = check_addresses(endpoint, [ip("2606:4700::1"), ip("8.8.8.8")], policy)
    assert (target.target, target.address_key) == (
        "ipv6:[2606:4700::1]:50051",
        "[2606:4700::1]:50051",
    )
    mapped = check_addresses(endpoint, [ip("::ffff:8.8.8.8")], policy)
    assert (mapped.target, mapped.address_key) == ("ipv4:8.8.8.8:50051", "8.8.8.8:50051")
    secure = check_addresses(parse_endpoint("tls://bot.example:443"), [ip("8.8.8.8")], policy)
    assert (secure.target, secure.address_key) == (
        "tls://bot.example@ipv4:8.8.8.8:443",
        "8.8.8.8:443",
    )


class ChangingDns:
    """A resolver stub: each name's answers, changed by the test between calls."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("Name or service not known")
        return [ip(a) for a in self.answers[host]]


class OneBotStore:
    """What ``Arena._spec_for`` reads of the store for a validation match."""

    db = None  # the arena's coordination is built on it; this test never registers

    def bot(self, bot_id: str) -> SimpleNamespace:
        return SimpleNamespace(bot_id=bot_id, game="pinochle")


async def direct(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def test_the_guard_checks_again_at_connection_when_dns_has_changed_since() -> None:
    """Registration saw a public address; by the match the name points at the metadata
    service: the arena does not connect, the seat is an UNREACHABLE fault with a neutral
    detail, and the match is void. Back to a public address, the seat gets the IP target."""
    dns = ChangingDns()
    guard = EndpointGuard(GuardPolicy(allowed_networks=parse_networks(["127.0.0.0/8"])), dns)

    async def main() -> None:
        house_server, house = await await_aio(start_house_bot)
        pool = BotPool()
        arena = Arena(OneBotStore(), pool, None, house, guard=guard)  # type: ignore[arg-type]
        arena.db = direct  # type: ignore[method-assign]
        try:
            dns.answers["bot.example"] = ["8.8.4.4"]
            registered = await await_aio(lambda: guard.check("bot.example:50051"))
            assert registered.address_key == "8.8.4.4:50051"

            dns.answers["bot.example"] = ["169.254.169.254"]
            assert await arena.connect_target("bot.example:50051") == Refused(REFUSED_DETAIL)
            dns.answers.pop("bot.example")
            assert await arena.connect_target("bot.example:50051") == Refused(REFUSED_DETAIL)
            dns.answers["bot.example"] = ["8.8.4.4", "::ffff:10.0.0.1"]
            assert await arena.connect_target("bot.example:50051") == Refused(REFUSED_DETAIL)
            dns.answers["bot.example"] = ["1.0.0.1"]
            assert await arena.connect_target("bot.example:50051") == "ipv4:1.0.0.1:50051"
            assert dns.lookups == ["bot.example"] * 5, "resolved every time, never cached"
            house_host, house_port = house.rsplit(":", 1)
            assert await arena.connect_target(house) == f"ipv4:{house}", "allow-listed"
            guard.add_own_socket(house_host, int(house_port))
            assert await arena.connect_target(house) == Refused(REFUSED_DETAIL), "own socket"

            dns.answers["bot.example"] = ["10.9.8.7"]
            claim = Claim("m1", None, "validation", 7, ("b1", HOUSE_RANDOM), ("bot.example:1", ""))
            spec = await arena._spec_for(claim)
            assert spec.endpoints == [Refused(REFUSED_DETAIL), house]
            record = await play_match(spec, pool)
            assert record.status == record_pb2.MATCH_STATUS_VOIDED
            assert record.status_detail == (
                f"unreachable at the start: seat 0 ((refused)): {REFUSED_DETAIL}"
            )
            assert "10.9.8.7" not in str(record) and "bot.example" not in str(record)
            assert record.seats[1].bot_name, "the other seat was reached"
        finally:
            await pool.close()
            await await_aio(lambda: house_server.stop(0))

    aio_bridge.run(main)


def test_the_command_line_takes_the_guards_switches_and_self_play() -> None:
    from arena.cli import build_parser

    parser = build_parser()
    serve = parser.parse_args(
        ["serve", "--allow-endpoint-network", "10.1.0.0/24", "--allow-endpoint-network", "fd00::/8"]
    )
    assert serve.allow_endpoint_network == ["10.1.0.0/24", "fd00::/8"]
    assert not serve.allow_private_endpoints
    assert parser.parse_args(["serve", "--allow-private-endpoints"]).allow_private_endpoints
    ladder = parser.parse_args(["create-ladder", "x", "--game", "oh-hell", "--allow-self-play"])
    assert ladder.allow_self_play
