"""Every rotation of a duplicate set is dealt the same cards, deal after deal of the match.

A duplicate set replays one seed once per seat rotation; the cards only cancel out of the
comparison if hand k of one rotation is hand k of every other one, however differently the
bots played the hands before it. Each rotation here plays the seed with its own random
choices, and every deal's cards (``State.arrange_deal``, once per deal) are compared.
"""

from __future__ import annotations

import random

import pytest

from referee.games.api import Game, OptionValue, State
from referee.games.entry import GameEntry
from referee.games.registry import GAMES

ROTATIONS = 4
SEEDS = range(3)
LONGER: dict[str, dict[str, OptionValue]] = {
    "pinochle": {"declare_out": "disabled"},
    "mau-mau": {"target": 5000},
}
"""Options that keep random play going for several deals (a random Pinochle player declares
out at once; random Mau-Mau players pay fines fast)."""


def played(entry: GameEntry, seed: int, choices: int) -> tuple[list[tuple[int, ...]], list[int]]:
    """A match of ``seed`` played to the end with random legal actions drawn from
    ``Random(choices)``: every deal's cards in dealing order, and the actions."""
    deals: list[tuple[int, ...]] = []

    class Recorded(entry.state_class):  # type: ignore[name-defined, misc]
        def arrange_deal(self, cards: list[int]) -> list[int]:
            deals.append(tuple(cards))
            return cards

    options = LONGER.get(entry.state_class.game_type.name, {})
    state: State = Game(Recorded, entry.demo_seats, options).new_state(seed)
    rng = random.Random(choices)
    actions = []
    while not state.is_terminal():
        legal = state.legal_actions()
        actions.append(legal[rng.randrange(len(legal))])
        state.apply(actions[-1])
    return deals, actions


@pytest.mark.parametrize("entry", GAMES, ids=lambda entry: entry.name)
def test_rotations_of_a_seed_are_dealt_the_same_hands(entry: GameEntry) -> None:
    compared = 0
    for seed in SEEDS:
        rotations = [played(entry, seed, 1000 * seed + r) for r in range(ROTATIONS)]
        assert len({tuple(actions) for _, actions in rotations}) == ROTATIONS, "play differs"
        dealt = [deals for deals, _ in rotations]
        for k in range(min(map(len, dealt))):
            assert len({deals[k] for deals in dealt}) == 1, f"seed {seed}: deal {k + 1} differs"
            compared += 1
    assert compared >= 2 * len(SEEDS), "several deals a match compared"
