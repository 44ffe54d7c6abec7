"""The interface every game implements: a declarative game type, validated options, a state.

Modelled on OpenSpiel's split between a game (metadata + parameters) and a state
(``current_seat``, ``legal_actions``, ``apply``, ``is_terminal``, ``returns``), with chance
driven by an injected ``random.Random`` so that one seed replays a match exactly.

Actions are small non-negative integers whose meaning each game defines (``describe_action``
renders one for people). Integers keep random playouts fast; the codec at the gRPC edge turns
them into protobuf messages and back.

This module, like every rules module, imports only the standard library.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

OptionValue = int | str | bool


class RulesError(Exception):
    """Base class for everything the rules reject."""


class InvalidOptionsError(RulesError):
    """Game options that are unknown, of the wrong type or out of bounds."""


class IllegalActionError(RulesError):
    """A well-formed action that the rules forbid in this state."""


class InvalidPositionError(RulesError):
    """A position (``referee.games.<game>.positions``) that no game of these rules reaches."""


@dataclass(frozen=True)
class OptionSpec:
    """One named game option (a house rule) with its default and what it may be."""

    name: str
    default: OptionValue
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def validate(self, value: object) -> OptionValue:
        """Return ``value`` if this option accepts it, else raise ``InvalidOptionsError``."""
        expected = type(self.default)
        if type(value) is not expected:
            raise InvalidOptionsError(
                f"option {self.name!r} takes a {expected.__name__}, got {value!r}"
            )
        assert isinstance(value, int | str | bool)
        if self.choices and value not in self.choices:
            raise InvalidOptionsError(
                f"option {self.name!r} must be one of {', '.join(self.choices)}; got {value!r}"
            )
        if isinstance(value, int) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise InvalidOptionsError(f"option {self.name!r} must be >= {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise InvalidOptionsError(f"option {self.name!r} must be <= {self.maximum}")
        return value


@dataclass(frozen=True)
class GameType:
    """What a game is, declared once: its name, seat range and options."""

    name: str
    title: str
    min_seats: int
    max_seats: int
    options: tuple[OptionSpec, ...] = ()
    rules_section: str = ""
    lower_score_wins: bool = False

    def resolve_options(self, given: Mapping[str, object] | None = None) -> dict[str, OptionValue]:
        """Defaults overlaid with ``given``, every value validated."""
        given = dict(given or {})
        specs = {spec.name: spec for spec in self.options}
        unknown = sorted(set(given) - set(specs))
        if unknown:
            raise InvalidOptionsError(
                f"{self.name} has no option(s) {', '.join(unknown)}; "
                f"known: {', '.join(specs) or 'none'}"
            )
        return {
            name: spec.validate(given[name]) if name in given else spec.default
            for name, spec in specs.items()
        }

    def check_seats(self, num_seats: int) -> None:
        """Raise ``InvalidOptionsError`` unless this game seats ``num_seats`` players."""
        if not self.min_seats <= num_seats <= self.max_seats:
            seats = (
                str(self.min_seats)
                if self.min_seats == self.max_seats
                else f"{self.min_seats} to {self.max_seats}"
            )
            raise InvalidOptionsError(f"{self.title} seats {seats} players, not {num_seats}")


@dataclass(frozen=True)
class Outcome:
    """The end of a game: a score per seat and a finishing rank per seat (1 = best, ties share)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class PublicTable:
    """The public facts of the table now, as anyone at a real table sees them: never a card
    hidden from a seat. A fact the game does not have (or not now) is None or empty."""

    turn_up: int | None = None
    """The card turned up (Oh Hell's trump card, the Klaberjass and Pinochle turn-up)."""
    pile_top: int | None = None
    """The top card of the discard pile."""
    announced_suit: int = 0
    """The ``Suit`` value a Jack announced for the next discard; 0 for none."""
    hand_sizes: tuple[int, ...] = ()
    """How many cards each seat holds, by seat, where players draw (empty if not given)."""


def ranks_from_keys(keys: Sequence[Any]) -> tuple[int, ...]:
    """Competition ranking ("1224") where a larger key is better and equal keys share a rank."""
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)


class State(ABC):
    """A game in progress. Subclasses hold the rules; the referee only uses this interface.

    A subclass's ``__init__`` takes the same three arguments, calls ``super().__init__`` and
    deals, drawing every random choice from ``rng``.
    """

    game_type: ClassVar[GameType]

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        self.num_seats = num_seats
        self.options = options
        self.rng = rng

    @abstractmethod
    def current_seat(self) -> int:
        """The seat that must act now; -1 once the game is over."""

    @abstractmethod
    def legal_actions(self) -> Sequence[int]:
        """The actions the current seat may take, in a stable order; empty once terminal."""

    @abstractmethod
    def apply(self, action: int) -> None:
        """Play ``action`` for the current seat; raise ``IllegalActionError`` if it is illegal."""

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.current_seat() < 0

    @abstractmethod
    def outcome(self) -> Outcome:
        """Final scores and ranks; only valid once terminal."""

    def lower_score_wins(self) -> bool:
        """Whether a lower score ranks higher in this game under its options."""
        return self.game_type.lower_score_wins

    def returns(self) -> tuple[int, ...]:
        """Final score per seat (OpenSpiel's name for it)."""
        return self.outcome().scores

    @abstractmethod
    def observe(self, seat: int) -> Any:
        """Everything ``seat`` may see now, and nothing more, as a frozen dataclass."""

    @abstractmethod
    def describe_action(self, action: int) -> str:
        """A short human-readable form of ``action`` ("bid 2", "play QS")."""

    def describe_public_action(self, action: int) -> str:
        """What spectators may be told of ``action`` while the match is live.

        The same as ``describe_action`` unless the action carries something the other seats
        learn only later (a game overrides it then). Only asked of public actions
        (``is_public_action``).
        """
        return self.describe_action(action)

    @abstractmethod
    def is_public_action(self, action: int) -> bool:
        """Whether every seat learns, when it is taken, that ``action`` was taken.

        False for declining an optional decision that only some hands are offered (keep the 7
        of trumps, declare no sequence, end a meld turn unmelded): that the decision was asked
        at all tells of the hand, so nothing that reaches another seat or a spectator may show
        it. Depends on the action alone, so it may be asked before or after it is applied.
        """

    def public_table(self) -> PublicTable:
        """What spectators see on the table now (the live tables draw it); a game with public
        table facts overrides it. Only what every seat already sees, and nothing that depends
        on a decision not yet made public (``is_public_action``)."""
        return PublicTable()

    def arrange_deal(self, cards: list[int]) -> list[int]:
        """The cards of a new deal as shuffled, in dealing order; returns what is dealt.

        Every game deals through it, once per deal, and the rules never override it: a test
        subclass does, to make two deals that differ only in where some cards lie (the
        conformance suite's hidden-card test). A game that deals only part of its deck lists
        only the cards that leave it.
        """
        return cards

    @abstractmethod
    def private_cards(self, seat: int) -> frozenset[int]:
        """Cards only ``seat`` may see now (its concealed hand); the conformance suite's oracle."""

    @abstractmethod
    def concealed_cards(self) -> frozenset[int]:
        """Cards no seat may see now (stock, undealt cards)."""

    @abstractmethod
    def public_cards(self) -> frozenset[int]:
        """Cards every seat may see now or that are out of play (played, tabled, turned up).

        With ``private_cards`` of every seat and ``concealed_cards`` this partitions
        ``all_cards``: the conformance suite's card-conservation check.
        """

    @abstractmethod
    def all_cards(self) -> frozenset[int]:
        """Every card id of this game's deck."""

    def scores_so_far(self) -> tuple[int, ...]:
        """Running score per seat; games override this when scores accrue during play."""
        return tuple(0 for _ in range(self.num_seats))

    def copy(self) -> State:
        """An independent copy of this game, its random generator included: search bots and
        tests branch from copies.

        This default copies every top-level list, dict and set of the state and shares the
        rest, which is enough for rules whose nested containers are immutable (tuples) or are
        replaced, not mutated, by ``apply``; a game whose rules mutate deeper overrides it.
        A copy starts without the views' caches (attributes named ``*_cache``): it shares
        nothing with the original, and the conformance suite compares its fresh views with
        the original's cached ones.
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(
            {
                key: value.copy() if isinstance(value, list | dict | set) else value
                for key, value in self.__dict__.items()
                if not key.endswith("_cache")
            }
        )
        clone.rng = random.Random()
        clone.rng.setstate(self.rng.getstate())
        return clone


class Game:
    """A game type bound to validated options; makes new states from a seed."""

    def __init__(
        self,
        state_class: type[State],
        num_seats: int,
        options: Mapping[str, object] | None = None,
    ) -> None:
        self.type = state_class.game_type
        self.type.check_seats(num_seats)
        self.num_seats = num_seats
        self.options = self.type.resolve_options(options)
        self._state_class = state_class

    def new_state(self, seed: int) -> State:
        """A fresh game whose every chance event comes from ``random.Random(seed)``."""
        return self._state_class(self.num_seats, self.options, random.Random(seed))
