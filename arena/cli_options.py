"""Game options as a command line gives them (``--option NAME=VALUE``), shared by commands."""

from __future__ import annotations

from collections.abc import Sequence

from referee.games.api import GameType, OptionValue


def parse_options(game_type: GameType, pairs: Sequence[str]) -> dict[str, OptionValue]:
    """``["scoring=negative", …]`` typed by each option's default."""
    specs = {spec.name: spec for spec in game_type.options}
    options: dict[str, OptionValue] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in specs:
            known = ", ".join(specs) or "none"
            raise SystemExit(f"bad --option {pair!r}: expected NAME=VALUE with NAME one of {known}")
        default = specs[name].default
        if isinstance(default, bool):
            options[name] = text.lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            options[name] = int(text)
        else:
            options[name] = text
    return options
