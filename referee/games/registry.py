"""Every game the referee can run, by its wire name (``oh-hell``, ``pinochle``, …)."""

from __future__ import annotations

from collections.abc import Mapping

from referee.games.api import Game, GameType, InvalidOptionsError, State
from referee.games.king import KingState
from referee.games.klaberjass import KlaberjassState
from referee.games.mau_mau import MauMauState
from referee.games.oh_hell import OhHellState
from referee.games.pinochle import PinochleState

STATE_CLASSES: dict[str, type[State]] = {
    cls.game_type.name: cls
    for cls in (OhHellState, KlaberjassState, MauMauState, KingState, PinochleState)
}


def game_types() -> list[GameType]:
    """The declared types of all registered games, in registry order."""
    return [cls.game_type for cls in STATE_CLASSES.values()]


def make_game(name: str, num_seats: int, options: Mapping[str, object] | None = None) -> Game:
    """A game bound to validated options; raises ``InvalidOptionsError`` on anything wrong."""
    try:
        state_class = STATE_CLASSES[name]
    except KeyError:
        known = ", ".join(STATE_CLASSES)
        raise InvalidOptionsError(f"unknown game {name!r}; known games: {known}") from None
    return Game(state_class, num_seats, options)
