"""Views that ``observe`` builds from an engine's lists once, not at every decision (stdlib only).

An engine appends to some lists during a hand (finished tricks) and starts a new list for the
next hand; ``observe`` shows them as tuples of immutable views. ``extended_views`` keeps those
views against the very list they came from and converts only what was appended since, so
consecutive observations share one tuple (codecs then compare it by identity).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
V = TypeVar("V")

ViewCache = tuple[list[T], tuple[V, ...]]
"""A list and the views of its items, in order."""


def extended_views(
    cached: ViewCache[T, V] | None, items: list[T], view: Callable[[T], V]
) -> ViewCache[T, V]:
    """``items`` with the views of all of them: ``cached``'s if they are views of this very
    list (which only grows), extended with views of the items appended since; else new ones.
    Returns ``cached`` itself when nothing changed."""
    if cached is not None and cached[0] is items and len(cached[1]) <= len(items):
        views = cached[1]
        if len(views) == len(items):
            return cached
    else:
        views = ()
    return items, views + tuple(map(view, items[len(views) :]))
