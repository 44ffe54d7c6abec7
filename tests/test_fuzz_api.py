"""Fuzzing the arena API (issue 18): random and mutated requests for every ArenaService method,
through real gRPC on loopback against a real ``arena serve``, without a token, with an owner's
and with the admin's.

Methods and request types come from the service descriptor, and requests from hypothesis
strategies built from the message descriptors: every scalar type (with NaN, infinities and
the extremes of each width), enums (known and unknown numbers), nested messages, repeated and
map fields, oneofs, huge strings, control characters, bidi overrides and markup, and unknown
fields appended to the encoding; mutated requests are valid encodings with one byte flipped,
dropped, duplicated or the encoding cut short. No answer may be UNKNOWN or INTERNAL (a handler
bug) or UNAVAILABLE (the server fell over); the server must answer SERVING at the end, and the
database stays under a stated bound.

Time-bounded for CI (about a minute: ``max_examples`` in the ``fuzz-ci`` profile, derandomized
so a CI run is reproducible); ``HYPOTHESIS_PROFILE=fuzz-long`` runs many more examples.

No generated string reaches a DNS resolver: an endpoint field gets an IP literal or a text no
DNS name can be (it has "__"), and every other string has no ':' (so no mutation that moves it
into an endpoint field makes it a "host:port"). Network traffic stays on loopback.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.client import ArenaClient
from arena.local_bots import BotProcess
from cardarena.arena.v1 import arena_service_pb2 as pb
from referee.games.registry import STATE_CLASSES
from tests.test_operating import ADMIN, ARENA_SERVICE, _raw_call, arena

settings.register_profile(
    "fuzz-ci",
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "fuzz-ci"))

BROKEN = {
    grpc.StatusCode.UNKNOWN,  # an exception escaped a handler
    grpc.StatusCode.INTERNAL,  # a handler bug, caught
    grpc.StatusCode.UNAVAILABLE,  # the server is gone
    grpc.StatusCode.DATA_LOSS,
}
"""Statuses no request may get, however wrong it is."""

METHODS = list(ARENA_SERVICE.methods)
ENDPOINT_FIELDS = {"endpoint"}
INTERESTING = [
    "",
    "oh-hell",
    "king",
    "ann__",
    "bob__",
    "open",
    "house__random",
    "a" * 64,
    "a" * 65,
    "\x00",
    "\x1b[31mred\x1b[0m",
    "\u202eevil\u202c",
    "\u200b",
    "<b>bold</b>",
    "[bold]x[/bold]",
    ".. ..",
    "' OR 1=1 --",
    "%s%s%n",
    "\ud7ff\ue000\U0010ffff",
]
"""Strings worth trying in any string field (none with ':')."""

ENDPOINTS = [
    "127.0.0.1:1",
    "127.0.0.1:65535",
    "127.0.0.1:0",
    "127.0.0.1:99999",
    "[::1]:1",
    "[::ffff:127.0.0.1]:1",
    "10.0.0.1:22",
    "169.254.169.254:80",
    "[fd00::1]:80",
    "0.0.0.0:1",
    "tls://127.0.0.1:1",
    "unix__:/tmp/x",
    "http__://x",
    "__:1",
]
"""Endpoint values: IP literals (never resolved) and texts that are no DNS name."""


def _no_colon(text: str) -> str:
    return text.replace(":", "_")


def texts(endpoint: bool) -> st.SearchStrategy[str]:
    """Any string: short, huge (up to 300,000 characters), with control and format characters;
    for an endpoint field only texts that never reach a resolver."""
    huge = st.builds(
        lambda char, count: char * count, st.characters(codec="utf-8"), st.integers(0, 300_000)
    )
    anything = st.one_of(
        st.text(max_size=40),
        st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp", "Co"]), max_size=20),
        huge,
    )
    if endpoint:
        return st.one_of(st.sampled_from(ENDPOINTS), anything.map(lambda t: f"__{t}"))
    return st.one_of(st.sampled_from(INTERESTING), anything.map(_no_colon))


def _int_range(field: FieldDescriptor) -> tuple[int, int]:
    kind = field.type
    if kind in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return 0, 2**32 - 1
    if kind in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return 0, 2**64 - 1
    if kind in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return -(2**31), 2**31 - 1
    return -(2**63), 2**63 - 1


def integers(low: int, high: int) -> st.SearchStrategy[int]:
    """The extremes, small numbers and anything in between."""
    return st.one_of(
        st.sampled_from([low, high, 0, 1]), st.integers(0, 1000), st.integers(low, high)
    )


def scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    """Values of a non-message field's type."""
    kind = field.type
    if kind == field.TYPE_STRING:
        return texts(field.name in ENDPOINT_FIELDS)
    if kind == field.TYPE_BYTES:
        return st.binary(max_size=64).map(lambda b: b.replace(b":", b"_"))
    if kind == field.TYPE_BOOL:
        return st.booleans()
    if kind == field.TYPE_DOUBLE:
        return st.floats()
    if kind == field.TYPE_FLOAT:
        return st.floats(width=32)
    if kind == field.TYPE_ENUM:
        assert field.enum_type is not None
        known = [value.number for value in field.enum_type.values]
        return st.one_of(st.sampled_from(known), integers(-(2**31), 2**31 - 1))
    return integers(*_int_range(field))


def value_of(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    """Values of one field, as the message constructor takes them."""
    nested = field.message_type
    if nested is not None and nested.GetOptions().map_entry:
        key_field, value_field = nested.fields
        return st.dictionaries(scalar(key_field), value_of(value_field, depth), max_size=4)
    single = messages(nested, depth + 1) if nested is not None else scalar(field)
    if field.is_repeated:
        return st.lists(single, max_size=6)
    return single


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Any]:
    """Messages of ``descriptor``'s type: each field set or not (at most one per oneof),
    nested messages down to depth 3."""
    message_class = _class_of(descriptor)
    if depth > 3:
        return st.just(message_class())
    plain = [f for f in descriptor.fields if f.containing_oneof is None]
    oneofs = [list(oneof.fields) for oneof in descriptor.oneofs]

    @st.composite
    def build(draw: Callable[..., Any]) -> Any:
        values = {}
        for field in plain:
            if draw(st.booleans()):
                values[field.name] = draw(value_of(field, depth))
        for choices in oneofs:
            chosen = draw(st.sampled_from([None, *choices]))
            if chosen is not None:
                values[chosen.name] = draw(value_of(chosen, depth))
        return message_class(**values)

    return build()


def _class_of(descriptor: Descriptor) -> Any:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(descriptor)


def unknown_fields() -> st.SearchStrategy[bytes]:
    """Encoded fields with numbers no request uses (varint, fixed and length-delimited)."""
    number = st.integers(100, 2**29 - 1)
    varint = st.builds(lambda n, v: _tag(n, 0) + _varint(v), number, st.integers(0, 2**64 - 1))
    fixed = st.builds(lambda n, b: _tag(n, 1) + b, number, st.binary(min_size=8, max_size=8))
    blob = st.binary(max_size=200).map(lambda b: b.replace(b":", b"_"))
    delimited = st.builds(lambda n, b: _tag(n, 2) + _varint(len(b)) + b, number, blob)
    return st.lists(st.one_of(varint, fixed, delimited), max_size=3).map(b"".join)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def mutated(payload: bytes, data: st.DataObject) -> bytes:
    """``payload`` with one change: a bit flipped, a byte dropped or doubled, or cut short."""
    if not payload:
        return data.draw(st.binary(min_size=1, max_size=8))
    at = data.draw(st.integers(0, len(payload) - 1))
    how = data.draw(st.sampled_from(["flip", "drop", "double", "cut"]))
    if how == "flip":
        bit = data.draw(st.integers(0, 7))
        return payload[:at] + bytes([payload[at] ^ (1 << bit)]) + payload[at + 1 :]
    if how == "drop":
        return payload[:at] + payload[at + 1 :]
    if how == "double":
        return payload[: at + 1] + payload[at:]
    return payload[:at]


PLAUSIBLE: dict[str, list[Any]] = {
    "owner": ["ann__", *(f"owner__{index}" for index in range(30))],
    "name": ["b__1", "b__2", "open__", "ladder__x"],
    "game": sorted(STATE_CLASSES),
    "endpoint": [*(f"127.0.0.1:{port}" for port in range(1, 40)), "[::1]:3", "10.0.0.1:22"],
    "version": ["1", "2", "v__3"],
    "reason": ["too slow__", "colluding__"],
    "ladder": ["open__", "ladder__x"],
    "num_seats": [0, 2, 3, 4, 7],
    "move_time_ms": [1, 1000, 600_001],
    "time_bank_ms": [0, 5000],
    "max_faults": [0, 3],
    "concurrency": [0, 1, 2, 10_001],
    "limit": [0, 1, 10, 2**32 - 1],
    "offset": [0, 1, 2**32 - 1],
    "recent_matches": [0, 1, 501],
}
"""Values that get a request past its first checks, by field name."""

ID_FIELDS = {"bot_id", "match_id", "ladder_id", "ladder"}
"""Fields that take the id of something that exists (from the answers so far)."""


def plausible(descriptor: Descriptor, known: list[str], data: st.DataObject, depth: int = 0) -> Any:
    """A request of ``descriptor``'s type with every field set to a value that passes its
    first checks (a known id, a good name), so the fuzzing reaches past the validation."""
    message = _class_of(descriptor)()
    for field in descriptor.fields:
        if field.containing_oneof is not None and data.draw(st.booleans()):
            continue
        nested = field.message_type
        if nested is not None:
            if nested.GetOptions().map_entry:
                continue  # options maps: left to the random requests
            if depth < 3 and not field.is_repeated:
                getattr(message, field.name).CopyFrom(plausible(nested, known, data, depth + 1))
            continue
        choices = list(PLAUSIBLE.get(field.name, []))
        if field.name in ID_FIELDS and known:
            choices += known
        if field.type == field.TYPE_ENUM:
            assert field.enum_type is not None
            choices = [value.number for value in field.enum_type.values]
        pick = data.draw(st.integers(0, 255))  # one draw whatever is known (hypothesis
        if not choices or field.is_repeated:  # replays draws: they cannot depend on state)
            continue
        setattr(message, field.name, choices[pick % len(choices)])
    return message


class Fuzzer:
    """A channel to the arena and what was sent: calls, and the statuses they got."""

    def __init__(self, service: BotProcess, owner_token: str) -> None:
        self.channel = grpc.insecure_channel(service.address)
        self.tokens = {"none": None, "owner": owner_token, "admin": ADMIN}
        self.calls = 0
        self.codes: dict[str, int] = {}
        self.known: list[str] = []
        """Ids and names seen in answers (bots, ladders, matches), for later requests."""

    def send(self, method: Any, payload: bytes, who: str) -> None:
        token = self.tokens[who]
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.calls += 1
        try:
            answer = _raw_call(self.channel, method, ARENA_SERVICE, payload, metadata)
            code = grpc.StatusCode.OK
            self._learn(_class_of(method.output_type).FromString(answer))
        except grpc.RpcError as error:
            code = error.code()
            assert code not in BROKEN, (method.name, who, code, error.details(), payload[:200])
        self.codes[code.name] = self.codes.get(code.name, 0) + 1

    def _learn(self, message: Any) -> None:
        for field, value in message.ListFields():
            values = value if field.is_repeated else [value]
            for one in values:
                if field.message_type is not None and not field.message_type.GetOptions().map_entry:
                    self._learn(one)
                elif field.name in ID_FIELDS and isinstance(one, str) and one not in self.known:
                    self.known.append(one)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BotProcess, Path]]:
    tmp_path = tmp_path_factory.mktemp("fuzz")
    limits = ("--limit-peer-new-owners", "1000/min", "--limit-token-writes", "10000/s")
    with arena(tmp_path, *limits) as process:
        yield process, tmp_path / "a.db"


@pytest.fixture(scope="module")
def fuzzer(service: tuple[BotProcess, Path]) -> Iterator[Fuzzer]:
    process, _ = service
    channel = grpc.insecure_channel(process.address)
    stub = channel.unary_unary(
        f"/{ARENA_SERVICE.full_name}/CreateOwner",
        request_serializer=pb.CreateOwnerRequest.SerializeToString,
        response_deserializer=pb.CreateOwnerResponse.FromString,
    )
    created = stub(
        pb.CreateOwnerRequest(owner="ann__"),
        metadata=(("authorization", f"Bearer {ADMIN}"),),
        timeout=10,
    )
    channel.close()
    fuzzing = Fuzzer(process, created.owner_token)
    yield fuzzing
    fuzzing.channel.close()


WHO = st.sampled_from(["none", "owner", "admin"])


@PROFILE
@given(data=st.data())
def test_random_requests_for_every_method(fuzzer: Fuzzer, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(METHODS))
    request = data.draw(messages(method.input_type))
    payload = request.SerializeToString() + data.draw(unknown_fields())
    fuzzer.send(method, payload, data.draw(WHO))


@PROFILE
@given(data=st.data())
def test_mutated_requests_for_every_method(fuzzer: Fuzzer, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(METHODS))
    request = data.draw(messages(method.input_type))
    for field in ENDPOINT_FIELDS & set(method.input_type.fields_by_name):
        setattr(request, field, "__" + getattr(request, field).replace(":", "_"))
    fuzzer.send(method, mutated(request.SerializeToString(), data), data.draw(WHO))


@PROFILE
@given(data=st.data())
def test_plausible_requests_with_one_random_field(fuzzer: Fuzzer, data: st.DataObject) -> None:
    """Requests that pass the first checks (known ids, good names: bots get registered,
    ladders created, states changed), one field of them random, or none."""
    method = data.draw(st.sampled_from(METHODS))
    request = plausible(method.input_type, fuzzer.known, data)
    fields = [f for f in method.input_type.fields if not f.is_repeated]
    field = data.draw(st.sampled_from([None, *fields]))
    if field is not None:
        value = data.draw(value_of(field, 1))
        if field.message_type is not None:
            getattr(request, field.name).CopyFrom(value)
        else:
            setattr(request, field.name, value)
    fuzzer.send(method, request.SerializeToString(), data.draw(WHO))


DB_BASE_BYTES = 4 * 1024 * 1024
DB_BYTES_PER_CALL = 8 * 1024
"""The database's bound after the run: 4 MB (schema, WAL, the arena's own bookkeeping) plus
8 kB per request sent: every stored field is bounded (names 64, versions 64, endpoints 255,
reasons 500 characters), so no request may store more than a few hundred bytes, let alone a
huge string it carried."""


def test_the_server_is_serving_and_the_database_is_bounded(
    service: tuple[BotProcess, Path], fuzzer: Fuzzer
) -> None:
    process, db = service
    assert fuzzer.calls >= 2 * min(PROFILE.max_examples, 100), fuzzer.calls
    assert fuzzer.codes.get("OK", 0) > 0 and fuzzer.codes.get("INVALID_ARGUMENT", 0) > 0, (
        fuzzer.codes
    )
    client = ArenaClient(process.address, timeout_s=10)
    assert client.serving(), "health: SERVING after the run"
    client.close()
    files = [db, db.with_name(db.name + "-wal")]
    size = sum(path.stat().st_size for path in files if path.exists())
    assert size <= DB_BASE_BYTES + DB_BYTES_PER_CALL * fuzzer.calls, (size, fuzzer.calls)
    with sqlite3.connect(db) as connection:
        rows = {
            table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("owners", "bots", "ladders", "matches")
        }
        longest = connection.execute(
            "SELECT MAX(LENGTH(name) + LENGTH(version) + LENGTH(endpoint)) FROM bots"
        ).fetchone()[0]
    assert rows["owners"] <= fuzzer.calls + 1 and rows["bots"] <= fuzzer.calls, rows
    assert rows["ladders"] <= fuzzer.calls and rows["matches"] <= 2 * rows["bots"] + 1000, rows
    assert (longest or 0) <= 64 + 64 + 255, longest
    print(f"fuzz: {fuzzer.calls} calls {fuzzer.codes}; db {size} bytes, rows {rows}")
