"""Reading what a bot sends: strict parsing and text that is safe to record.

A bot's answer is hostile input. ``parse_strictly`` accepts only bytes that parse as the
expected message and carry no field the referee does not know, at any depth: a message of
another type, a truncated or bit-flipped one, or one from a newer contract is refused with a
``MalformedResponseError`` whose message says where it went wrong. ``bounded`` makes any text a
bot controls (status details, names, parse errors) short and printable before it is recorded.
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

M = TypeVar("M", bound=Message)

MAX_DETAIL_CHARS = 200
"""The most characters of bot-controlled text a fault detail carries."""


class MalformedResponseError(ValueError):
    """Bytes from a bot that are not a well-formed message of the expected type."""


def bounded(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` with unprintable characters replaced and cut to ``limit`` characters: its
    start and its end, which in gRPC's own words names the cause ("… last error: …
    CERTIFICATE_VERIFY_FAILED: …"), joined by an ellipsis."""
    if len(text) > limit:
        head = limit // 4
        text = text[:head] + "…" + text[len(text) - (limit - head - 1) :]
    if not text.isprintable():
        text = "".join(char if char.isprintable() else "\ufffd" for char in text)
    return text


def parse_strictly(raw: object, message_type: type[M]) -> M:
    """``raw`` parsed as ``message_type``; ``MalformedResponseError`` unless it parses and
    every field in it, at any depth, is one ``message_type`` defines.

    ``raw`` is what the transport handed over: bytes, or None when the stream ended without
    a whole message.
    """
    name = message_type.DESCRIPTOR.name
    if not isinstance(raw, bytes):
        raise MalformedResponseError(f"the answer carried no {name} message")
    try:
        message = message_type.FromString(raw)
    except DecodeError as error:
        raise MalformedResponseError(
            f"{len(raw)} bytes that do not parse as {name} ({bounded(str(error), 80)})"
        ) from None
    unknown = unknown_field(message)
    if unknown is not None:
        raise MalformedResponseError(
            f"{name} carries a field the contract does not define ({bounded(unknown, 80)})"
        )
    return message


def unknown_field(message: Message, path: str = "") -> str | None:
    """Where ``message`` holds its first unknown field ("action.oh_hell: field 9"), or None."""
    unknown = UnknownFieldSet(message)
    if len(unknown):
        return f"{path or message.DESCRIPTOR.name}: field {unknown[0].field_number}"
    for field, value in message.ListFields():
        entry = field.message_type
        if entry is None:  # a scalar field
            continue
        inner = f"{path}.{field.name}" if path else field.name
        if entry.GetOptions().map_entry:
            if entry.fields_by_name["value"].message_type is None:
                continue
            items: list[tuple[str, Message]] = [(repr(k), v) for k, v in value.items()]
        elif field.is_repeated:
            items = [(str(index), item) for index, item in enumerate(value)]
        else:
            found = unknown_field(value, inner)
            if found is not None:
                return found
            continue
        for key, item in items:
            found = unknown_field(item, f"{inner}[{key}]")
            if found is not None:
                return found
    return None
