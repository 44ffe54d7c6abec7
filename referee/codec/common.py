"""Cards, options and game settings on the wire."""

from __future__ import annotations

from collections.abc import Mapping

from cardarena.game.v1 import cards_pb2, options_pb2
from referee.codec.base import MalformedActionError
from referee.games.api import Game, GameType, OptionSpec, OptionValue
from referee.games.cards import Rank, StandardDeck, Suit


def standard_card(card: int) -> cards_pb2.Card:
    """The wire form of a ``StandardDeck`` card id."""
    return cards_pb2.Card(suit=card // 13 + 1, rank=card % 13 + 2)  # type: ignore[arg-type]


def standard_card_id(card: cards_pb2.Card) -> int:
    """The ``StandardDeck`` id of a wire card; ``MalformedActionError`` if it is not one."""
    if card.suit not in Suit._value2member_map_ or card.rank not in Rank._value2member_map_:
        raise MalformedActionError(f"not a card: suit={card.suit} rank={card.rank}")
    if card.copy:
        raise MalformedActionError("this game uses a single deck: copy must be 0")
    return StandardDeck.card(Suit(card.suit), Rank(card.rank))


def option_value(value: OptionValue) -> options_pb2.OptionValue:
    """The wire form of one option value."""
    if isinstance(value, bool):
        return options_pb2.OptionValue(bool_value=value)
    if isinstance(value, int):
        return options_pb2.OptionValue(int_value=value)
    return options_pb2.OptionValue(string_value=value)


def option_from_wire(value: options_pb2.OptionValue) -> OptionValue:
    """The engine form of one option value (validated later against the game's spec)."""
    kind = value.WhichOneof("value")
    if kind == "bool_value":
        return value.bool_value
    if kind == "int_value":
        return value.int_value
    if kind == "string_value":
        return value.string_value
    raise ValueError("option value is empty")


def options_from_wire(options: Mapping[str, options_pb2.OptionValue]) -> dict[str, OptionValue]:
    """Engine form of a settings' option map."""
    return {name: option_from_wire(value) for name, value in options.items()}


def game_settings(game: Game) -> options_pb2.GameSettings:
    """The wire form of a game and its resolved options."""
    return options_pb2.GameSettings(
        game=game.type.name,
        num_seats=game.num_seats,
        options={name: option_value(value) for name, value in game.options.items()},
    )


def option_spec(spec: OptionSpec) -> options_pb2.OptionSpec:
    """The wire form of an option declaration."""
    message = options_pb2.OptionSpec(
        name=spec.name, doc=spec.doc, default_value=option_value(spec.default)
    )
    message.choices.extend(spec.choices)
    if spec.minimum is not None:
        message.minimum = spec.minimum
    if spec.maximum is not None:
        message.maximum = spec.maximum
    return message


def game_description(game_type: GameType) -> options_pb2.GameDescription:
    """The wire form of a game type."""
    return options_pb2.GameDescription(
        game=game_type.name,
        title=game_type.title,
        min_seats=game_type.min_seats,
        max_seats=game_type.max_seats,
        options=[option_spec(spec) for spec in game_type.options],
        rules_section=game_type.rules_section,
    )
