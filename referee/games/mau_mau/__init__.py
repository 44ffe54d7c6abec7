"""Mau-Mau: the rules (``rules``), what a seat sees (``view``), positions as values
(``positions``) and the wire form (``codec``). Outside this folder, import these names only."""

from referee.games.mau_mau.positions import MauMauPosition, position_of
from referee.games.mau_mau.rules import (
    FINE,
    HAND_SIZE,
    JACKS,
    MAU_MAU,
    MauMauState,
    deal_multiplier,
    hand_points,
    playable_after_card,
    playable_after_jack,
)
from referee.games.mau_mau.view import (
    ANNOUNCE_SHIFT,
    DRAW,
    LAST_CARD,
    PASS,
    SECOND_JACK_SHIFT,
    DealResult,
    MauMauObservation,
    MauMauTable,
    action_cards,
    discard_action,
)

__all__ = [
    "ANNOUNCE_SHIFT",
    "DRAW",
    "FINE",
    "HAND_SIZE",
    "JACKS",
    "LAST_CARD",
    "MAU_MAU",
    "PASS",
    "SECOND_JACK_SHIFT",
    "DealResult",
    "MauMauObservation",
    "MauMauPosition",
    "MauMauState",
    "MauMauTable",
    "action_cards",
    "deal_multiplier",
    "discard_action",
    "hand_points",
    "playable_after_card",
    "playable_after_jack",
    "position_of",
]
