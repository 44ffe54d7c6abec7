"""What a game registers: one ``GameEntry`` per game, listed once in ``referee.games.registry``.

Everything that serves every game (codec lookup, metrics labels, ``arena games``, the demo, the
benchmarks, the conformance and Node bot tests) reads the registry's entries; nothing keeps a
list of games of its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from referee.games.api import Game, GameType, OptionValue, State

if TYPE_CHECKING:
    from referee.codec.base import GameCodec


class Position(Protocol):
    """A game's position value: it makes a state at that position."""

    def state(self, rng: random.Random | None = None) -> State: ...


@dataclass(frozen=True)
class GameEntry:
    """One game: its rules, its codec and how tools should run it."""

    state_class: type[State]
    """The rules (``State`` subclass); its ``game_type`` names the game."""
    codec: Callable[[Game], GameCodec]
    """Makes the game's codec (views ⇄ protobuf) for one bound game."""
    demo_seats: int
    """How many seats ``arena demo`` plays."""
    short_options: Mapping[str, OptionValue] = field(default_factory=dict)
    """Options that shorten a match (end-to-end tests play whole matches)."""
    whole_game_options: tuple[Mapping[str, OptionValue], ...] = ()
    """Option sets the benchmarks measure besides the defaults."""
    position_of: Callable[[State], Position] | None = None
    """Reads a state's position (``<game>.positions``); None while a game has none yet."""
    duplicate_options: Mapping[str, OptionValue] = field(default_factory=dict)
    """Options a duplicate ladder takes unless it names them: those that keep every rotation
    of a set dealt the same cards (``tests/test_duplicate_deals.py``)."""
    luck: Callable[[Game, int, Sequence[int]], tuple[float, ...]] | None = None
    """Each seat's luck in a match replayed from its seed and moves, in score units: what
    chance events handed the seat beyond their expectation (zero on average), so that a score
    less its luck ranks bots with less noise (``<game>.luck``); None: no luck model."""

    @property
    def game_type(self) -> GameType:
        return self.state_class.game_type

    @property
    def name(self) -> str:
        return self.state_class.game_type.name

    def __post_init__(self) -> None:
        self.game_type.check_seats(self.demo_seats)
        self.game_type.resolve_options(self.short_options)
        for options in (*self.whole_game_options, self.duplicate_options):
            self.game_type.resolve_options(options)
