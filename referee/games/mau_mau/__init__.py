"""Mau-Mau: see ``rules`` for the game and its options."""

from referee.games.mau_mau.rules import MAU_MAU, MauMauObservation, MauMauState

__all__ = ["MAU_MAU", "MauMauObservation", "MauMauState"]
