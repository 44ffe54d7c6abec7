"""Oh Hell's direct observation bytes follow every field the codec keeps parts of.

``OhHellCodec.observation_bytes`` keeps the header, the seats and the finished tricks and hands
from the last observation and rebuilds each when its fields change. Whole playouts change
several of those fields at once (a new hand brings new bids and scores together), so here one
field at a time changes between two observations encoded by the same codec.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.games.oh_hell import OhHellObservation, OhHellState
from referee.games.registry import codec_for, make_game


def mid_game_observation() -> OhHellObservation:
    """Seat to act's view in the second hand, after two tricks (bids, scores, history set)."""
    state = make_game("oh-hell", 4, {}).new_state(7)
    assert isinstance(state, OhHellState)
    rng = random.Random(7)
    while state.hand_index < 1 or len(state.completed_tricks) < 2 or not state.trick:
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    observation: OhHellObservation = state.observe(state.current_seat())
    return observation


BASE = mid_game_observation()
CHANGES: dict[str, Any] = {
    "deal_style": "short_low",
    "scoring": "negative",
    "hand_number": BASE.hand_number + 1,
    "num_hands": BASE.num_hands - 1,
    "hand_size": BASE.hand_size - 1,
    "dealer": (BASE.dealer + 1) % 4,
    "trump_card": (BASE.trump_card + 13) % 52,
    "hand": BASE.hand[1:],
    "bids": (None, *BASE.bids[1:]),
    "tricks_won": (BASE.tricks_won[0] + 1, *BASE.tricks_won[1:]),
    "trick_leader": (BASE.trick_leader + 1) % 4,
    "current_trick": BASE.current_trick[:-1],
    "completed_tricks": BASE.completed_tricks[:-1],
    "scores": (BASE.scores[0] - 7, *BASE.scores[1:]),
    "previous_hands": (),
    "bidding": not BASE.bidding,
}


@pytest.mark.parametrize("field", list(CHANGES))
def test_one_changed_field_shows_in_the_bytes(field: str) -> None:
    codec = codec_for(make_game("oh-hell", 4, {}))
    changed = BASE._replace(**{field: CHANGES[field]})
    for observation in (BASE, changed, BASE):
        expected = codec.observation(observation).SerializeToString()
        assert codec.observation_bytes(observation) == expected, field
