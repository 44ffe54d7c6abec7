"""Every rotation of a duplicate set is dealt the same cards, deal after deal of the match.

A duplicate set replays one seed once per seat rotation; the cards only cancel out of the
comparison if hand k of one rotation is hand k of every other one, however differently the
bots played the hands before it. Each rotation here plays the seed with its own random
choices, and every deal's cards (``State.arrange_deal``, once per deal) are compared.
"""

from __future__ import annotations

import random

import pytest

from cardarena.game.v1.options_pb2 import GameSettings
from referee.codec.common import option_value, options_from_wire
from referee.games.api import Game, OptionValue, State
from referee.games.entry import GameEntry
from referee.games.registry import GAMES, duplicate_settings

ROTATIONS = 4
SEEDS = range(3)
LONGER: dict[str, dict[str, OptionValue]] = {
    "pinochle": {"declare_out": "disabled"},
    "mau-mau": {"target": 5000},
}
"""Options that keep random play going for several deals (a random Pinochle player declares
out at once; random Mau-Mau players pay fines fast)."""


def duplicate_options(entry: GameEntry) -> dict[str, OptionValue]:
    """The options a duplicate ladder of ``entry``'s game plays with (plus ``LONGER``)."""
    return {**entry.duplicate_options, **LONGER.get(entry.name, {})}


def played(
    entry: GameEntry, seed: int, choices: int, options: dict[str, OptionValue]
) -> tuple[list[tuple[int, ...]], list[int]]:
    """A match of ``seed`` under ``options`` played to the end with random legal actions drawn
    from ``Random(choices)``: every deal's cards in dealing order, and the actions."""
    deals: list[tuple[int, ...]] = []

    class Recorded(entry.state_class):  # type: ignore[name-defined, misc]
        def arrange_deal(self, cards: list[int]) -> list[int]:
            deals.append(tuple(cards))
            return cards

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
        rotations = [
            played(entry, seed, 1000 * seed + r, duplicate_options(entry)) for r in range(ROTATIONS)
        ]
        assert len({tuple(actions) for _, actions in rotations}) == ROTATIONS, "play differs"
        dealt = [deals for deals, _ in rotations]
        for k in range(min(map(len, dealt))):
            assert len({deals[k] for deals in dealt}) == 1, f"seed {seed}: deal {k + 1} differs"
            compared += 1
    assert compared >= 2 * len(SEEDS), "several deals a match compared"


def test_mau_mau_needs_its_duplicate_option_for_the_same_hands() -> None:
    """Without ``reshuffle=deal_seeded`` (the default, as records before it replay) a rotation
    that ran the stock out more often is dealt other cards later: why duplicate ladders get it."""
    (entry,) = (entry for entry in GAMES if entry.name == "mau-mau")
    rotations = [played(entry, 0, r, LONGER["mau-mau"]) for r in range(ROTATIONS)]
    dealt = [deals for deals, _ in rotations]
    differing = [k for k in range(min(map(len, dealt))) if len({d[k] for d in dealt}) > 1]
    assert differing, "every deal the same: the option would not be needed"


def test_a_duplicate_ladder_takes_its_games_duplicate_options_unless_it_names_them() -> None:
    named = GameSettings(game="mau-mau", num_seats=4)
    named.options["reshuffle"].CopyFrom(option_value("game_generator"))
    filled = duplicate_settings(GameSettings(game="mau-mau", num_seats=4))
    assert options_from_wire(filled.options) == {"reshuffle": "deal_seeded"}
    assert options_from_wire(duplicate_settings(named).options) == {"reshuffle": "game_generator"}
    assert duplicate_settings(GameSettings(game="nope")) == GameSettings(game="nope")
