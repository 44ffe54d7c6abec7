"""Oh Hell: the rules (``rules``), what a seat sees (``view``), positions as values
(``positions``) and the wire form (``codec``). Outside this folder, import these names only."""

from referee.games.oh_hell.positions import OhHellPosition, position_of
from referee.games.oh_hell.rules import (
    OH_HELL,
    OhHellState,
    forbidden_dealer_bid,
    hand_points,
    hand_sizes,
    max_hand_size,
    trick_winner,
)
from referee.games.oh_hell.view import BID_BASE, HandResult, OhHellObservation

__all__ = [
    "BID_BASE",
    "OH_HELL",
    "HandResult",
    "OhHellObservation",
    "OhHellPosition",
    "OhHellState",
    "forbidden_dealer_bid",
    "hand_points",
    "hand_sizes",
    "max_hand_size",
    "position_of",
    "trick_winner",
]
