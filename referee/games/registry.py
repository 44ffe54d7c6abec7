"""Every game the referee can run, registered once: one ``GameEntry`` per game, by wire name.

The list below is the only list of games in the codebase; everything else derives from it.
Adding a game is one line here (see docs/adding-a-game.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cardarena.game.v1.options_pb2 import GameSettings
from referee.codec.common import option_value, options_from_wire
from referee.games.api import Game, GameType, InvalidOptionsError, RulesError, State
from referee.games.entry import GameEntry
from referee.games.king.entry import ENTRY as KING
from referee.games.klaberjass.entry import ENTRY as KLABERJASS
from referee.games.mau_mau.entry import ENTRY as MAU_MAU
from referee.games.oh_hell.entry import ENTRY as OH_HELL
from referee.games.pinochle.entry import ENTRY as PINOCHLE

if TYPE_CHECKING:
    from referee.codec.base import GameCodec

GAMES: tuple[GameEntry, ...] = (OH_HELL, KLABERJASS, MAU_MAU, KING, PINOCHLE)
"""The registered games, in the order lists show them."""

ENTRIES: dict[str, GameEntry] = {entry.name: entry for entry in GAMES}
STATE_CLASSES: dict[str, type[State]] = {entry.name: entry.state_class for entry in GAMES}


def game_types() -> list[GameType]:
    """The declared types of all registered games, in registry order."""
    return [entry.game_type for entry in GAMES]


def entry_for(name: str) -> GameEntry:
    """The registered game called ``name``; ``InvalidOptionsError`` if there is none."""
    try:
        return ENTRIES[name]
    except KeyError:
        known = ", ".join(ENTRIES)
        raise InvalidOptionsError(f"unknown game {name!r}; known games: {known}") from None


def make_game(name: str, num_seats: int, options: Mapping[str, object] | None = None) -> Game:
    """A game bound to validated options; raises ``InvalidOptionsError`` on anything wrong."""
    return Game(entry_for(name).state_class, num_seats, options)


def game_from_settings(settings: GameSettings, num_seats: int | None = None) -> Game:
    """The game a wire ``GameSettings`` names (``num_seats`` overrides its seat count, as a
    ladder's matches do); ``InvalidOptionsError`` or ``ValueError`` on anything wrong."""
    seats = settings.num_seats if num_seats is None else num_seats
    return make_game(settings.game, seats, options_from_wire(settings.options))


def duplicate_settings(settings: GameSettings) -> GameSettings:
    """``settings`` for a duplicate ladder: its game's ``duplicate_options`` added where the
    settings do not name them (an unknown game's settings come back as they are)."""
    entry = ENTRIES.get(settings.game)
    completed = GameSettings()
    completed.CopyFrom(settings)
    for name, value in (entry.duplicate_options if entry else {}).items():
        if name not in completed.options:
            completed.options[name].CopyFrom(option_value(value))
    return completed


def lower_score_wins(settings: GameSettings) -> bool:
    """Whether a lower score ranks higher in the game ``settings`` name under its options
    (Mau-Mau's tallies); False for settings no game accepts. Asked once per settings: the
    answer takes a dealt state (25-46 µs), and every result of a duplicate ladder asks."""
    return _lower_score_wins(settings.SerializeToString(deterministic=True))


@functools.lru_cache(maxsize=256)
def _lower_score_wins(settings: bytes) -> bool:
    try:
        game = game_from_settings(GameSettings.FromString(settings))
    except (RulesError, ValueError):
        return False
    return game.new_state(0).lower_score_wins()


def codec_for(game: Game) -> GameCodec:
    """A codec bound to ``game``."""
    return ENTRIES[game.type.name].codec(game)
