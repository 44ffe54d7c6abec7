"""King: see ``rules`` for the game and its options."""

from referee.games.king.rules import KING, KingObservation, KingState

__all__ = ["KING", "KingObservation", "KingState"]
