"""Bounds of every field the arena API accepts, and the one way an error quotes an input.

Each check returns None when the value is acceptable and otherwise a short message saying what
is wrong, quoting at most ``ECHO_CHARS`` characters of the input (``shown``), so a refusal never
echoes a megabyte back or carries control characters into a log or a terminal. Names are a
strict character set (no control characters, bidi overrides, zero-width characters or markup
can get in); free text (versions, reasons) may use any printable character but no control or
format character (Unicode categories Cc, Cf, ...), which covers the bidi overrides U+202A-U+202E
and U+2066-U+2069 and the zero-width characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

ECHO_CHARS = 32
"""How much of a refused input an error message quotes."""

NAME_CHARS = 64
VERSION_CHARS = 64
ENDPOINT_CHARS = 255
"""A DNS name (253) and a port, or a scheme-prefixed address of about that size."""
ID_CHARS = 64
"""Bot, match and ladder ids (and a ladder's name where an id or name is asked for)."""
REASON_CHARS = 500
OPTIONS = 32
"""Options (house rules) in one ladder's settings."""
OPTION_TEXT_CHARS = 64

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_UNSHOWABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories refused in free text: control, format (bidi, zero-width), surrogate,
private use, unassigned, line and paragraph separators."""


def shown(value: str) -> str:
    """``value`` quoted for an error message: at most ``ECHO_CHARS`` characters, escaped."""
    if len(value) <= ECHO_CHARS:
        return repr(value)
    return f"{value[:ECHO_CHARS]!r}… ({len(value)} characters)"


def unshowable(value: str) -> str | None:
    """The first character of ``value`` that must not be shown (as ``U+XXXX``), if any."""
    for char in value:
        if unicodedata.category(char) in _UNSHOWABLE:
            return f"U+{ord(char):04X}"
    return None


def name(field: str, value: str) -> str | None:
    """A name (owner, bot, ladder): 1-64 letters, digits, '_', '.' or '-', a letter or digit
    first."""
    if _NAME.fullmatch(value):
        return None
    return f"{field} must be 1-64 letters, digits, '_', '.' or '-' (got {shown(value)})"


def text(field: str, value: str, limit: int, *, required: bool = False) -> str | None:
    """Free text on one line: at most ``limit`` characters, no control or format character."""
    if required and not value.strip():
        return f"{field} is required"
    if len(value) > limit:
        return f"{field} must be at most {limit} characters (got {shown(value)})"
    bad = unshowable(value)
    if bad is not None:
        return f"{field} must not contain control or format characters ({bad} in {shown(value)})"
    return None


def version(value: str) -> str | None:
    """A bot's version: free text, at most ``VERSION_CHARS`` characters."""
    return text("version", value, VERSION_CHARS)


def reason(value: str) -> str | None:
    """An operator's reason: required free text, at most ``REASON_CHARS`` characters."""
    return text("reason", value, REASON_CHARS, required=True)


def endpoint_length(value: str) -> str | None:
    """An endpoint's size, checked before its form (at most ``ENDPOINT_CHARS`` characters)."""
    if len(value) > ENDPOINT_CHARS:
        return f"endpoint must be at most {ENDPOINT_CHARS} characters (got {shown(value)})"
    return None


def identifier(field: str, value: str, *, required: bool = True) -> str | None:
    """An id (or a name given where an id is asked for): at most ``ID_CHARS`` characters."""
    if required and not value:
        return f"{field} is required"
    return text(field, value, ID_CHARS)


def bot_reference(field: str, value: str, *, required: bool = True) -> str | None:
    """A bot's id, or ``OWNER/NAME`` (two names and a slash)."""
    if required and not value:
        return f"{field} is required"
    return text(field, value, 2 * ID_CHARS + 1)


def whole(field: str, value: int, low: int, high: int) -> str | None:
    """A number in ``low..high``."""
    if low <= value <= high:
        return None
    return f"{field} must be between {low} and {high} (got {value})"


def between(field: str, value: float, low: float, high: float) -> str | None:
    """A problem if ``value`` is not a finite number in ``[low, high]``."""
    if not low <= value <= high:  # NaN compares false: refused too
        return f"{field} must be between {low:g} and {high:g} (got {value:g})"
    return None


def options(values: Mapping[str, object]) -> str | None:
    """A game's options on the wire: at most ``OPTIONS`` of them, names that are names, text
    values of at most ``OPTION_TEXT_CHARS`` characters (the game checks the values after)."""
    if len(values) > OPTIONS:
        return f"at most {OPTIONS} options (got {len(values)})"
    for key, value in values.items():
        problem = name("option name", key)
        if problem is None:
            text_value = getattr(value, "string_value", "")
            problem = text(f"option {key}", text_value, OPTION_TEXT_CHARS)
        if problem is not None:
            return problem
    return None


def clipped(message: str, limit: int = 200) -> str:
    """A message built from input (a rules error, say) cut to ``limit`` characters."""
    return message if len(message) <= limit else f"{message[: limit - 1]}…"


def first(*problems: str | None) -> str | None:
    """The first problem of several checks, if any."""
    return next((problem for problem in problems if problem is not None), None)
