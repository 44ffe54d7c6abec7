"""Two-handed Pinochle: see ``rules`` for the game, its options and action encoding."""

from referee.games.pinochle.rules import PINOCHLE_GAME, PinochleObservation, PinochleState

__all__ = ["PINOCHLE_GAME", "PinochleObservation", "PinochleState"]
