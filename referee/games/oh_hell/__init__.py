"""Oh Hell (seed 004): see ``rules`` for the game and its options."""

from referee.games.oh_hell.rules import OH_HELL, OhHellObservation, OhHellState

__all__ = ["OH_HELL", "OhHellObservation", "OhHellState"]
