"""The Monte Carlo search bots: legal answers, the time budget, seeded determinism, sound worlds."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.api import State
from referee.games.registry import codec_for, make_game
from referee.match import FaultPolicy, Match, TimeControl
from sample_bots.oh_hell_heuristic import make_oh_hell_heuristic_bot
from sample_bots.search import (
    make_king_search_bot,
    make_klaberjass_search_bot,
    make_oh_hell_search_bot,
    make_pinochle_search_bot,
)
from sample_bots.search.core import Adapter, make_search_bot
from sample_bots.search.deal import deal_unseen
from sample_bots.search.king import KingAdapter
from sample_bots.search.klaberjass import KlaberjassAdapter
from sample_bots.search.oh_hell import OhHellAdapter
from sample_bots.search.pinochle import PinochleAdapter

GAMES: list[tuple[str, int, dict[str, object], Callable[..., Bot]]] = [
    ("oh-hell", 4, {"deal_style": "short_high_low"}, make_oh_hell_search_bot),
    ("oh-hell", 3, {"scoring": "negative", "deal_style": "short_low"}, make_oh_hell_search_bot),
    ("king", 4, {}, make_king_search_bot),
    ("king", 4, {"auction": "simplified", "trump_lead_restricted": True}, make_king_search_bot),
    ("klaberjass", 2, {}, make_klaberjass_search_bot),
    ("klaberjass", 2, {"dix_with_named_trump": True}, make_klaberjass_search_bot),
    ("pinochle", 2, {}, make_pinochle_search_bot),
    ("pinochle", 2, {"declare_out": "disabled"}, make_pinochle_search_bot),
]


def _requests(
    name: str, seats: int, options: dict[str, object], seed: int, limit: int, move_ms: int = 1000
) -> Iterator[tuple[Match, bot_service_pb2.ChooseActionRequest]]:
    """Requests of a random-play match (the caller's answers are not played)."""
    game = make_game(name, seats, options)
    codec = codec_for(game)
    settings = game_settings(game)
    control = TimeControl(move_time_ms=move_ms)
    match = Match(game, seed, policy=FaultPolicy(max_faults=0), time_control=control)
    rng = random.Random(seed)
    for _ in range(limit):
        if match.is_over:
            return
        yield match, choose_action_request(match, codec, settings, "test")
        match.play(rng.choice(list(match.legal_actions())), 0)


@pytest.mark.parametrize(("name", "seats", "options", "factory"), GAMES)
def test_search_bot_answers_legal_actions(
    name: str, seats: int, options: dict[str, object], factory: Callable[..., Bot]
) -> None:
    bot = factory(7, budget_ms=50, max_worlds=4)
    for _, request in _requests(name, seats, options, seed=3, limit=400):
        assert bot.choose(request) in request.legal_actions


class SimulatedClock:
    """Seconds that pass only when a playout runs: the search's time budget, without timing."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _CostlyPlayouts:
    """``adapter`` with every playout taking ``cost_s`` of ``clock``'s time."""

    def __init__(self, adapter: Adapter, clock: SimulatedClock, cost_s: float) -> None:
        self.adapter, self.clock, self.cost_s = adapter, clock, cost_s

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        return self.adapter.should_search(request)

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        return self.adapter.world(request, rng)

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        self.clock.now += self.cost_s
        return self.adapter.playout(state, seat, rng)


ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "oh-hell": OhHellAdapter,
    "king": KingAdapter,
    "klaberjass": KlaberjassAdapter,
    "pinochle": PinochleAdapter,
}

PLAYOUT_S = 0.0005

# One variant a game; Pinochle's without declaring out, which random play does within a few moves.
TIMED_GAMES = [GAMES[0], GAMES[2], GAMES[4], GAMES[7]]


@pytest.mark.parametrize(("name", "seats", "options", "factory"), TIMED_GAMES)
def test_search_bot_stops_at_half_a_tiny_move_time(
    name: str, seats: int, options: dict[str, object], factory: Callable[..., Bot]
) -> None:
    clock = SimulatedClock()
    adapter = _CostlyPlayouts(ADAPTERS[name](), clock, PLAYOUT_S)
    first_legal = Bot(choose=lambda r: r.legal_actions[0], name="first", games=(name,))
    # budget_ms alone would allow 200 ms; a 20 ms move time leaves the search half of it.
    bot, stats = make_search_bot("timed", name, adapter, first_legal, 1, 200, 100_000, clock)
    budget_s = 0.010
    searched = 0
    for _, request in _requests(name, seats, options, seed=5, limit=120, move_ms=20):
        started = clock.now
        assert bot.choose(request) in request.legal_actions
        searched += stats.searched
        if len(request.legal_actions) * PLAYOUT_S < budget_s:  # else the first world runs over
            # The search ends within the playout that crossed the deadline.
            assert clock.now - started <= budget_s + PLAYOUT_S + 1e-9
    assert searched >= 10


@pytest.mark.parametrize(("name", "seats", "options", "factory"), GAMES[::2])
def test_search_bot_is_deterministic_with_a_seed(
    name: str, seats: int, options: dict[str, object], factory: Callable[..., Bot]
) -> None:
    # A long move time, so that max_worlds (not the clock) ends every search.
    requests = [r for _, r in _requests(name, seats, options, 11, 150, move_ms=600_000)]
    answers = []
    for _ in range(2):
        bot = factory(42, budget_ms=10_000, max_worlds=6)
        answers.append([bot.choose(request) for request in requests])
    assert answers[0] == answers[1]


TRICKS = ("hand", "current_trick", "completed_tricks", "dealer")


@pytest.mark.parametrize(
    ("name", "seats", "options", "adapter", "fields"),
    [
        ("oh-hell", 4, {}, OhHellAdapter(), (*TRICKS, "bids", "tricks_won", "trump_card")),
        ("oh-hell", 5, {"deal_style": "short_high"}, OhHellAdapter(), TRICKS),
        ("king", 4, {"stop_when_penalties_exhausted": True}, KingAdapter(), (*TRICKS, "trump")),
        (
            "klaberjass",
            2,
            {"sequences_scored": "all_of_best_holder"},
            KlaberjassAdapter(),
            (*TRICKS, "trump", "maker", "sequence_winner", "phase", "seats", "card_points"),
        ),
        (
            "pinochle",
            2,
            {"declare_out": "disabled"},  # random play would declare out before phase 2
            PinochleAdapter(),
            (*TRICKS, "trump", "trick_points", "hand_sizes"),
        ),
    ],
)
def test_worlds_agree_with_the_observation(
    name: str, seats: int, options: dict[str, object], adapter: Adapter, fields: tuple[str, ...]
) -> None:
    rng = random.Random(2)
    checked = 0
    for match, request in _requests(name, seats, options, seed=9, limit=700):
        if not adapter.should_search(request):
            continue
        world: State = adapter.world(request, rng)
        real = match.state
        seat = request.seat
        assert world.current_seat() == seat
        assert sorted(world.legal_actions()) == sorted(match.legal_actions())
        mine, theirs = world.observe(seat), real.observe(seat)
        for field in fields:
            assert getattr(mine, field) == getattr(theirs, field), field
        known = real.public_cards() | real.private_cards(seat)
        for other in range(seats):
            hidden = world.private_cards(other)
            assert len(hidden) == len(real.private_cards(other))
            if other != seat:
                assert not hidden & known
        adapter.playout(world, seat, rng)
        checked += 1
    assert checked > 50


def test_deal_respects_sizes_and_voids() -> None:
    rng = random.Random(0)
    unseen = list(range(20))  # suits by card // 5: four suits of five
    for _ in range(200):
        voids = [frozenset({0, 1}), frozenset({2}), frozenset()]
        hands = deal_unseen(unseen, [6, 7, 7], voids, lambda card: card // 5, rng)
        assert [len(hand) for hand in hands] == [6, 7, 7]
        assert sorted(card for hand in hands for card in hand) == unseen
        for hand, void in zip(hands, voids, strict=True):
            assert not any(card // 5 in void for card in hand)


class _BrokenAdapter(OhHellAdapter):
    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        raise ValueError("a bug")


def test_a_failing_search_falls_back_to_the_heuristic() -> None:
    heuristic = make_oh_hell_heuristic_bot(0)
    bot, stats = make_search_bot("broken", "oh-hell", _BrokenAdapter(), heuristic, 0, 50, 10)
    for _, request in _requests("oh-hell", 4, {}, seed=1, limit=100):
        assert bot.choose(request) == heuristic.choose(request)
        assert not stats.searched
