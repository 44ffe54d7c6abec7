"""Each game's card table drawn as JSON from the engine's observations (one module per game)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena.web.frames import king, klaberjass, mau_mau, oh_hell, pinochle
from arena.web.frames.common import Json

TableBuilder = Callable[[Sequence[Any], Any, Callable[[int], str]], Json]
"""``table(observations of every seat, card namer, describe_action)``."""

TABLES: dict[str, TableBuilder] = {
    "oh-hell": oh_hell.table,
    "king": king.table,
    "mau-mau": mau_mau.table,
    "klaberjass": klaberjass.table,
    "pinochle": pinochle.table,
}
"""The table builder of each registered game, by its wire name."""
