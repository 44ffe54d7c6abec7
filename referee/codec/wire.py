"""Protobuf wire-format primitives for writing serialized messages directly.

The codecs' fast paths (``GameCodec.observation_bytes``) write an observation's bytes without
building messages, splicing in bytes cached per card, per trick, per finished hand, etc.
Protobuf's wire format is a concatenation of fields, so parts concatenate; the result is
byte-identical to ``SerializeToString`` when fields are written in field-number order with
proto3's rules: a scalar at zero and an empty repeated field are omitted, an ``optional``
scalar or a sub-message that is set is written even when zero or empty, repeated scalars are
packed. Tags come from the generated descriptors (``tag(Message, "field")``), never from
hand-written numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, Generic, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_SMALL_VARINTS = tuple(bytes((value,)) for value in range(128))
_LENGTH_DELIMITED_TYPES = {
    FieldDescriptor.TYPE_MESSAGE,
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BYTES,
}
_VARINT_TYPES = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_ENUM,
}
_INT64_WRAP = 1 << 64


def varint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative int."""
    if value < 128:
        return _SMALL_VARINTS[value]
    if value < 0x4000:
        return bytes((value & 0x7F | 0x80, value >> 7))
    if value < 0x200000:  # message ids on a stream, times in µs
        return bytes((value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14))
    return _long_varint(value)


@lru_cache(maxsize=4096)
def _long_varint(value: int) -> bytes:
    """Varints of 3 bytes and more (scores, clocks, negatives), computed once each."""
    out = bytearray()
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def signed_varint(value: int) -> bytes:
    """Varint of an ``int32``/``int64`` value: negatives as 64-bit two's complement (10 bytes)."""
    return varint(value) if value >= 0 else _long_varint(value + _INT64_WRAP)


def length_delimited(tag: bytes, payload: bytes) -> bytes:
    """One length-delimited protobuf field: its tag, the payload's length, the payload."""
    return tag + varint(len(payload)) + payload


def tag(message_type: type[Message], name: str) -> bytes:
    """The encoded tag (field number and wire type) of ``message_type.name``.

    Repeated scalars are packed (proto3's default), so their wire type is length-delimited.
    """
    field = message_type.DESCRIPTOR.fields_by_name[name]
    if field.type in _LENGTH_DELIMITED_TYPES:
        wire_type = 2
    elif field.is_repeated:
        if not field.is_packed:
            raise ValueError(f"{message_type.__name__}.{name} is not packed")
        wire_type = 2
    elif field.type in _VARINT_TYPES:
        wire_type = 0
    else:  # fixed-width types are not used by the game protos
        raise ValueError(f"unsupported field type for {message_type.__name__}.{name}")
    return varint(field.number << 3 | wire_type)


def length_prefix(field_tag: bytes, length: int) -> bytes:
    """The head of a length-delimited field: its tag and the payload's length."""
    return field_tag + varint(length)


HEADS_LIMIT = 2048
"""Payload lengths below this have their field head in a ``length_heads`` table."""


def length_heads(field_tag: bytes) -> tuple[bytes, ...]:
    """``heads[n]``: the head (``length_prefix``) of a field of that tag with an ``n``-byte
    payload, for ``n < HEADS_LIMIT``: a tuple index costs a third of a ``FieldMemo`` subscript,
    which matters once or twice per request. Longer payloads: ``length_prefix``."""
    return tuple(length_prefix(field_tag, length) for length in range(HEADS_LIMIT))


def uint_field(field_tag: bytes, value: int) -> bytes:
    """A non-negative varint field (uint32, enum, bool) as proto3 writes it: omitted at zero."""
    return field_tag + varint(value) if value else b""


def int_field(field_tag: bytes, value: int) -> bytes:
    """An ``int32`` field, omitted at zero."""
    return field_tag + signed_varint(value) if value else b""


def optional_uint_field(field_tag: bytes, value: int) -> bytes:
    """An ``optional`` varint field that is set: written even at zero."""
    return field_tag + varint(value)


def packed_uints(field_tag: bytes, values: Iterable[int]) -> bytes:
    """A packed repeated uint32/enum/bool field; omitted when empty."""
    payload = b"".join([varint(value) for value in values])
    return field_tag + varint(len(payload)) + payload if payload else b""


def packed_ints(field_tag: bytes, values: Iterable[int]) -> bytes:
    """A packed repeated int32 field; omitted when empty."""
    payload = b"".join([signed_varint(value) for value in values])
    return field_tag + varint(len(payload)) + payload if payload else b""


def message_fields(field_tag: bytes, messages: Iterable[Message]) -> tuple[bytes, ...]:
    """Each message as a complete field under ``field_tag`` (for per-value tables, e.g. cards)."""
    return tuple(length_delimited(field_tag, message.SerializeToString()) for message in messages)


def suit_tables(fields: tuple[bytes, ...], suit_size: int) -> tuple[tuple[bytes, ...], ...]:
    """Repeated card fields of a hand bitmask in one lookup per suit: ``tables[s][bits]`` holds
    the fields (from ``fields``, by card id) of suit ``s``'s cards whose in-suit bits are
    ``bits``, in card-id order, where suit ``s`` owns ids ``suit_size * s`` onwards.

    Built once at import, each entry from the one without its lowest card (one concatenation
    each); a tuple index is cheaper on every decision than a memo's subscript.
    """
    tables = []
    for suit in range(len(fields) // suit_size):
        table = [b""] * (1 << suit_size)
        for bits in range(1, 1 << suit_size):
            low = bits & -bits
            table[bits] = fields[suit_size * suit + low.bit_length() - 1] + table[bits ^ low]
        tables.append(tuple(table))
    return tuple(tables)


K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A dict of encoded parts that empties itself when full (a codec lives for one match).

    ``get`` is the dict's own method, so a lookup costs one C call; ``put`` stores and returns
    the value.
    """

    __slots__ = ("_data", "_limit", "get")

    def __init__(self, limit: int = 4096) -> None:
        self._data: dict[K, V] = {}
        self._limit = limit
        self.get = self._data.get

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` (clearing everything first when the cache is full)."""
        if len(self._data) >= self._limit:
            self._data.clear()
        self._data[key] = value
        return value

    def __len__(self) -> int:
        return len(self._data)


class Memo(dict[K, V]):
    """Values computed from their key on first use: ``memo[key]``, emptied when full.

    For encoded parts keyed by what they encode (tricks, seat entries, bidding sequences):
    a hit is a subscript, a miss calls ``compute(key)``.
    """

    __slots__ = ("_compute", "_limit")

    def __init__(self, compute: Callable[[K], V], limit: int = 4096) -> None:
        super().__init__()
        self._compute, self._limit = compute, limit

    def __missing__(self, key: K) -> V:
        if len(self) >= self._limit:
            self.clear()
        value = self[key] = self._compute(key)
        return value


class FieldMemo(dict[int, bytes]):
    """One scalar field's encodings by value, computed on first use: ``memo[value]``.

    A dict whose misses fill themselves (``__missing__``): for values that are not bounded
    (scores, lengths); it empties itself when full. A hit still goes through the subclass's
    subscript slot (~550 instructions under callgrind, about a Python call), so for small
    bounded values a prefilled tuple indexed by value is cheaper (~200).
    """

    __slots__ = ("_encode", "_field_tag", "_limit")

    def __init__(
        self,
        field_tag: bytes,
        encode: Callable[[bytes, int], bytes] = uint_field,
        limit: int = 4096,
    ) -> None:
        super().__init__()
        self._field_tag, self._encode, self._limit = field_tag, encode, limit

    def __missing__(self, value: int) -> bytes:
        if len(self) >= self._limit:
            self.clear()
        encoded = self[value] = self._encode(self._field_tag, value)
        return encoded


class IdentityCache(Generic[V]):
    """Encoded parts of immutable objects, by identity (no hashing of frozen dataclasses).

    The cache keeps each object alive with its value, so an ``id`` is never reused while its
    entry exists. For objects the engine keeps (finished hands): looked up on every decision.
    """

    __slots__ = ("_data", "_limit")

    def __init__(self, limit: int = 1024) -> None:
        self._data: dict[int, tuple[Any, V]] = {}
        self._limit = limit

    def get(self, obj: object) -> V | None:
        """The value stored for this very object, or None."""
        entry = self._data.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        return None

    def put(self, obj: object, value: V) -> V:
        """Store ``value`` for ``obj`` (clearing everything first when the cache is full)."""
        if len(self._data) >= self._limit:
            self._data.clear()
        self._data[id(obj)] = (obj, value)
        return value


class SequenceCache(Generic[K]):
    """Bytes of a repeated field whose entries only get appended (finished tricks, history).

    Called with the field's entries (hashable, immutable) on every decision: the same entries
    as last time give the last bytes; entries that extend the last ones give the last bytes
    plus the new entries' bytes; anything else is rebuilt from ``entries``, a ``Memo`` of each
    entry's complete field, tag included (a codec's own, or one shared by every match where
    entries repeat across matches). The comparisons are tuple comparisons in C that stop at
    identical elements, so entries the engine keeps (and a tuple rebuilt around them by each
    ``observe``) cost a few ns each.
    """

    __slots__ = ("_entries", "_last_items", "_last_value")

    def __init__(self, entries: Memo[K, bytes]) -> None:
        self._entries = entries
        self._last_items: tuple[K, ...] = ()
        self._last_value = b""

    def __call__(self, items: tuple[K, ...]) -> bytes:
        last = self._last_items
        if items is last or items == last:
            return self._last_value
        entries = self._entries
        count = len(last)
        if count and len(items) > count and items[:count] == last:
            value = self._last_value + b"".join([entries[item] for item in items[count:]])
        else:
            value = b"".join([entries[item] for item in items])
        self._last_items, self._last_value = items, value
        return value
