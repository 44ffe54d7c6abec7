"""Mau-Mau: the rules (``rules``), what a seat sees (``view``), positions as values
(``positions``), the wire form (``codec``) and the luck of its draws (``luck``). Outside this
folder, import these names only."""

from referee.games.mau_mau.luck import (
    LUCK_FEATURES,
    ChanceDraw,
    draw_luck_features,
    draws_from,
    luck_of,
    match_draws,
    match_luck,
    seat_luck_features,
)
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
    "LUCK_FEATURES",
    "MAU_MAU",
    "PASS",
    "SECOND_JACK_SHIFT",
    "ChanceDraw",
    "DealResult",
    "MauMauObservation",
    "MauMauPosition",
    "MauMauState",
    "MauMauTable",
    "action_cards",
    "deal_multiplier",
    "discard_action",
    "draw_luck_features",
    "draws_from",
    "hand_points",
    "luck_of",
    "match_draws",
    "match_luck",
    "playable_after_card",
    "playable_after_jack",
    "position_of",
    "seat_luck_features",
]
