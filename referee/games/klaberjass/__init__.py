"""Klaberjass: see ``rules`` for the game and its options."""

from referee.games.klaberjass.rules import KLABERJASS, KlaberjassObservation, KlaberjassState

__all__ = ["KLABERJASS", "KlaberjassObservation", "KlaberjassState"]
