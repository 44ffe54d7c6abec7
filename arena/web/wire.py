"""Protobuf messages as JSON for the web API, and their JSON Schemas for its OpenAPI document.

One mapping, used both ways so the document cannot drift from the answers: field names as in
the .proto, enums by name, 64-bit integers as JSON numbers up to 2**53 (times in microseconds,
scores) and as strings beyond (a seed), bytes as base64, maps as objects; every field of a
message is present (its default when unset) except unset oneof members and sub-messages.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_WIDE = {FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64}
SAFE_INTEGER = 2**53
"""Beyond this a JSON number loses digits in a browser: such a 64-bit value is a string."""
_INTEGERS = {
    FieldDescriptor.CPPTYPE_INT32,
    FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32,
    FieldDescriptor.CPPTYPE_UINT64,
}


def _is_map(field: Any) -> bool:
    message = field.message_type
    return message is not None and bool(message.GetOptions().map_entry)


def _is_repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def _scalar(field: Any, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type.values_by_number.get(value)
        return enum.name if enum is not None else int(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return to_json(value)
    if field.cpp_type in _WIDE and abs(value) > SAFE_INTEGER:
        return str(value)
    return value


def to_json(message: Message) -> dict[str, Any]:
    """``message`` as a JSON object (see the module's mapping)."""
    out: dict[str, Any] = {}
    field: Any
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {str(k): _scalar(value_field, v) for k, v in value.items()}
        elif _is_repeated(field):
            out[field.name] = [_scalar(field, item) for item in value]
        elif field.containing_oneof is not None or field.type == FieldDescriptor.TYPE_MESSAGE:
            if message.HasField(field.name):
                out[field.name] = _scalar(field, value)
        else:
            out[field.name] = _scalar(field, value)
    return out


def _enum_schema(enum: Any) -> dict[str, Any]:
    return {"type": "string", "enum": [value.name for value in enum.values]}


def _field_schema(field: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return {"$ref": ref(field.message_type, defs)}
    if field.type == FieldDescriptor.TYPE_ENUM:
        return _enum_schema(field.enum_type)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "format": "byte"}
    if field.cpp_type in _WIDE:
        return {"type": ["integer", "string"], "pattern": "^-?[0-9]+$"}
    if field.cpp_type in _INTEGERS:
        return {"type": "integer"}
    if field.cpp_type in (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT):
        return {"type": "number"}
    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        return {"type": "boolean"}
    return {"type": "string"}


def ref(descriptor: Any, defs: dict[str, Any]) -> str:
    """A ``$ref`` to the schema of messages ``descriptor``, added (with every message it
    holds) to ``defs``, the OpenAPI document's ``components.schemas``."""
    name = descriptor.full_name.replace(".", "_")
    if name not in defs:
        defs[name] = {}  # placed first: a message may hold itself
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in descriptor.fields:
            if _is_map(field):
                value_field = field.message_type.fields_by_name["value"]
                schema: dict[str, Any] = {
                    "type": "object",
                    "additionalProperties": _field_schema(value_field, defs),
                }
            elif _is_repeated(field):
                schema = {"type": "array", "items": _field_schema(field, defs)}
            else:
                schema = _field_schema(field, defs)
                if field.containing_oneof is not None or field.type == FieldDescriptor.TYPE_MESSAGE:
                    properties[field.name] = schema
                    continue
            properties[field.name] = schema
            required.append(field.name)
        defs[name] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
    return f"#/components/schemas/{name}"
