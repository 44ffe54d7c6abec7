"""The shared conformance suite, run over every registered game and seat count."""

from __future__ import annotations

import random

import pytest
from _pytest.mark.structures import ParameterSet

from referee.games.api import Game, IllegalActionError, InvalidOptionsError
from referee.games.registry import game_types, make_game
from tests.conformance import (
    check_cached_observations,
    check_card_conservation,
    compare_two_deals,
    exchange_for,
    hidden_decisions,
    random_playout,
)

PLAYOUTS = 400
VIEW_CHECKED_PLAYOUTS = 6
VARIANT_PLAYOUTS = 40

GAMES = [
    pytest.param((game_type.name, seats), id=f"{game_type.name}-{seats}p")
    for game_type in game_types()
    for seats in range(game_type.min_seats, game_type.max_seats + 1)
]


@pytest.fixture(params=GAMES)
def game(request: pytest.FixtureRequest) -> Game:
    name, seats = request.param
    return make_game(name, seats)


def test_random_playouts_end_with_consistent_scores_and_ranks(game: Game) -> None:
    for seed in range(PLAYOUTS):
        state, _ = random_playout(game, seed)
        sign = -1 if state.lower_score_wins() else 1
        outcome = state.outcome()
        assert len(outcome.scores) == len(outcome.ranks) == game.num_seats
        assert outcome.scores == state.scores_so_far(), "final scores differ from running scores"
        assert min(outcome.ranks) == 1
        for a in range(game.num_seats):
            for b in range(game.num_seats):
                if sign * outcome.scores[a] > sign * outcome.scores[b]:
                    assert outcome.ranks[a] <= outcome.ranks[b], (seed, outcome)


def test_same_seed_same_game(game: Game) -> None:
    for seed in (0, 1, 12345):
        first, first_actions = random_playout(game, seed)
        second, second_actions = random_playout(game, seed)
        assert first_actions == second_actions
        assert first.outcome() == second.outcome()


def test_observations_hide_other_hands_and_cards_are_conserved(game: Game) -> None:
    for seed in range(VIEW_CHECKED_PLAYOUTS):
        state = game.new_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            check_card_conservation(state)
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        random_playout(game, seed, check_views=True)


def test_cached_observations_equal_fresh_ones_at_every_decision(game: Game) -> None:
    """observe() reuses parts between calls; none of them may go stale as play goes on."""
    for seed in range(VIEW_CHECKED_PLAYOUTS):
        state = game.new_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            state.observe(state.current_seat())  # as the referee does: fills the caches
            check_cached_observations(state)
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        check_cached_observations(state)


def test_illegal_actions_are_rejected_and_change_nothing(game: Game) -> None:
    state = game.new_state(3)
    rng = random.Random(3)
    for _ in range(60):
        if state.is_terminal():
            break
        legal = set(state.legal_actions())
        illegal = next(a for a in range(10_000) if a not in legal)
        before = (state.current_seat(), tuple(state.legal_actions()))
        with pytest.raises(IllegalActionError):
            state.apply(illegal)
        assert (state.current_seat(), tuple(state.legal_actions())) == before
        state.apply(rng.choice(sorted(legal)))


def test_options_are_validated_once_at_construction() -> None:
    for game_type in game_types():
        with pytest.raises(Exception, match="no option"):
            make_game(game_type.name, game_type.min_seats, {"no_such_option": 1})
        with pytest.raises(Exception, match="seats"):
            make_game(game_type.name, game_type.max_seats + 1)


def option_variants() -> list[ParameterSet]:
    """Every game with each option set, one at a time, to each value other than its default."""
    variants = []
    for game_type in game_types():
        for spec in game_type.options:
            values: list[object] = [c for c in spec.choices if c != spec.default]
            if isinstance(spec.default, bool):
                values = [not spec.default]
            for value in values:
                variants.append(
                    pytest.param(
                        game_type.name,
                        {spec.name: value},
                        id=f"{game_type.name}-{spec.name}={value}",
                    )
                )
    return variants


@pytest.mark.parametrize(("name", "options"), option_variants())
def test_every_house_rule_plays_out_with_the_same_invariants(
    name: str, options: dict[str, object]
) -> None:
    game_type = next(t for t in game_types() if t.name == name)
    played = 0
    for seats in sorted({game_type.min_seats, game_type.max_seats}):
        game = make_game(name, seats, options)
        try:
            game.new_state(0)
        except InvalidOptionsError:  # an option may narrow the seat range (e.g. Mau-Mau)
            continue
        played += 1
        for seed in range(VARIANT_PLAYOUTS):
            state, _ = random_playout(game, seed, check_views=seed == 0)
            outcome = state.outcome()
            assert outcome.scores == state.scores_so_far()
            assert min(outcome.ranks) == 1
        state = game.new_state(1)
        rng = random.Random(1)
        while not state.is_terminal():
            check_card_conservation(state)
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
    assert played, "the option allows neither the fewest nor the most seats"


TWO_DEAL_SEEDS = 50

TWO_DEAL_CASES = [
    pytest.param(game_type.name, seats, {}, id=f"{game_type.name}-{seats}p")
    for game_type in game_types()
    for seats in range(game_type.min_seats, game_type.max_seats + 1)
] + [
    pytest.param(name, seats, options, id=f"{name}-{seats}p-{option}={value}")
    for name, seats_range, option, values in (
        ("klaberjass", (2,), "dix_with_named_trump", (True,)),
        ("pinochle", (2,), "declare_out", ("disabled",)),
        ("pinochle", (2,), "dix_points", (10,)),
        ("mau-mau", (2, 4, 6), "cannot_discard", ("draw_then_may_play", "barred_for_deal")),
    )
    for seats in seats_range
    for value in values
    for options in ({option: value},)
]
"""Every game and seat count, and the options that open or change a decision only some hands
are offered."""


@pytest.mark.parametrize(("name", "seats", "options"), TWO_DEAL_CASES)
def test_nothing_a_seat_is_sent_depends_on_cards_hidden_from_it(
    name: str, seats: int, options: dict[str, object]
) -> None:
    """Two deals that differ only in where two cards hidden from seat S lie: every message that
    reaches S (StartMatch, each ChooseActionRequest's bytes, every live move event, EndMatch)
    is identical in both until S sees a card that differs, for every seat S. The other seats
    decline every optional decision they are offered, so where one deal offers it and the
    other does not, that decision must leave no trace; the test fails unless it has seen each
    such decision (each action ``is_public_action`` calls not public) taken in one deal only."""
    game = make_game(name, seats, options)
    compared = 0
    exercised: set[int] = set()
    for seed in range(TWO_DEAL_SEEDS):
        for seat in range(seats):
            pairs = exchange_for(game, seed, seat)
            if pairs:
                found = compare_two_deals(game, seed, seat, pairs)
                compared += found.compared
                exercised |= found.declined_unseen
    assert compared > 10 * TWO_DEAL_SEEDS * seats, "the deals diverged almost at once"
    declines = hidden_decisions(game)
    if not (name == "mau-mau" and options.get("cannot_discard") != "draw_then_may_play"):
        # (Mau-Mau offers its one optional decision, the drawn card, only under that option.)
        assert exercised == declines, f"not exercised: {sorted(declines - exercised)}"
