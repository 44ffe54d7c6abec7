"""What the ``arena`` command accepts: typed option values, house rules and token files, each
refused with one line (``error: …``) and a non-zero exit, never a traceback.

A boolean house rule takes ``true``/``false``, ``yes``/``no``, ``on``/``off`` or ``1``/``0``
(any case); any other word is an error, so a typo is never read as false.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from referee.games.api import GameType, InvalidOptionsError, OptionValue

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: PROG: MESSAGE (PROG --help)`` and exit 2."""
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def count(text: str) -> int:
    """A command-line count: a whole number, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    """A command-line count of at least 1 (a move time in ms, a number of matches)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def positive_float(text: str) -> float:
    """A command-line number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def seconds_or_zero(text: str) -> float:
    """A command-line number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def parse_bool(name: str, text: str) -> bool:
    """``text`` as a boolean house rule, or ``InvalidOptionsError``."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise InvalidOptionsError(
        f"option {name!r} takes true or false (yes/no, on/off, 1/0), got {text!r}"
    )


def parse_options(game_type: GameType, pairs: Sequence[str]) -> dict[str, OptionValue]:
    """``["scoring=negative", …]`` typed by each option's default and checked against its
    choices and bounds; a bad pair exits with one line."""
    specs = {spec.name: spec for spec in game_type.options}
    options: dict[str, OptionValue] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in specs:
            known = ", ".join(specs) or "none"
            fail(
                f"bad --option {pair!r} for {game_type.name}: expected NAME=VALUE with NAME "
                f"one of {known}"
            )
        default = specs[name].default
        try:
            value: OptionValue
            if isinstance(default, bool):
                value = parse_bool(name, text)
            elif isinstance(default, int):
                if not text.strip().lstrip("-").isdigit():
                    raise InvalidOptionsError(f"option {name!r} takes a whole number, got {text!r}")
                value = int(text)
            else:
                value = text
            options[name] = specs[name].validate(value)
        except InvalidOptionsError as error:
            fail(f"bad --option {pair!r}: {error}")
    return options


def game_type_of(game: str) -> GameType:
    """The registered game called ``game``, or exit with one line naming the games."""
    from referee.games.registry import STATE_CLASSES

    if game not in STATE_CLASSES:
        fail(f"unknown game {game!r}; the games are {', '.join(sorted(STATE_CLASSES))}")
    return STATE_CLASSES[game].game_type


def read_token_file(path: str | Path) -> str:
    """The token in ``path`` (surrounding white space dropped), or exit with one line."""
    try:
        token = Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        fail(f"cannot read the token file {str(path)!r}: {reason}")
    if not token:
        fail(f"the token file {str(path)!r} is empty")
    return token


def fail(message: str) -> NoReturn:
    """Exit with ``error: MESSAGE`` on stderr and status 1."""
    sys.exit(f"error: {message}")
