"""Each game's card table drawn as JSON from the engine's observations (one module per game).

A registered game ``referee/games/<package>/`` has its frames module here,
``arena/web/frames/<package>.py``, found by that name: ``table(views, namer, describe)`` draws
the replay's table, and an optional ``Live`` (``live_rules.LiveRules``) says what its live
table may know. ``FRAMES`` is derived from ``referee.games.registry.GAMES``: no list of games
is kept here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.web.frames.common import Json
from arena.web.frames.live_rules import LiveRules
from referee.games.entry import GameEntry
from referee.games.registry import GAMES

TableBuilder = Callable[[Sequence[Any], Any, Callable[[int], str]], Json]
"""``table(observations of every seat, card namer, describe_action)``."""


@dataclass(frozen=True)
class GameFrames:
    """How the web draws one game: its replay table and its live table's rules."""

    table: TableBuilder
    live: type[LiveRules]


def frames_module_name(entry: GameEntry) -> str:
    """``arena.web.frames.oh_hell`` for the game whose rules are ``referee.games.oh_hell``."""
    package = entry.state_class.__module__.removeprefix("referee.games.").split(".")[0]
    return f"{__name__}.{package}"


def frames_of(entry: GameEntry) -> GameFrames:
    """The registered game's frames module, read; ``LookupError`` saying what is missing."""
    name = frames_module_name(entry)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        raise LookupError(
            f"{entry.name}: no frames module {name} (docs/adding-a-game.md)"
        ) from None
    table = getattr(module, "table", None)
    live = getattr(module, "Live", LiveRules)
    if not callable(table) or not (isinstance(live, type) and issubclass(live, LiveRules)):
        raise LookupError(f"{name}: needs table() and, if any, Live(LiveRules)")
    return GameFrames(table, live)


FRAMES: dict[str, GameFrames] = {entry.name: frames_of(entry) for entry in GAMES}
"""How each registered game is drawn, by its wire name."""
