"""Flat Monte Carlo over determinizations, shared by every game's search bot.

Each iteration samples one world consistent with the request's observation (an engine state in
which the bot is to act, the hidden cards dealt at random), then plays every legal action in that
same world followed by a quick playout policy to the end of the hand, and adds up the bot's
result. The action with the best total wins. The loop stops at the move budget (the smaller of
``budget_ms`` and a fraction of ``request.time_control.move_time_ms``) or after ``max_worlds``.

Any internal error, or no world sampled in time, falls back to the game's heuristic bot, whose
answer is always one of the legal actions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from botkit import Bot, time_left_s
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2
from referee.codec.base import GameCodec
from referee.games.api import RulesError, State
from referee.games.registry import codec_for, game_from_settings

MAX_BAD_WORLDS = 20
"""Give up on a decision's search after this many sampled worlds failed to replay."""

SHARE_OF_MOVE_TIME = 0.5
"""Never plan to use more than this share of the move time (the round trip needs the rest)."""

Clock = Callable[[], float]
"""Seconds on a monotonic clock: ``time.perf_counter``, or a test's simulated time."""


class Adapter(Protocol):
    """What the search needs to know about one game."""

    def should_search(self, request: bot_service_pb2.ChooseActionRequest) -> bool:
        """Whether this decision is searched (else the heuristic bot answers)."""

    def world(self, request: bot_service_pb2.ChooseActionRequest, rng: random.Random) -> State:
        """An engine state consistent with the observation, the requesting seat to act."""

    def playout(self, state: State, seat: int, rng: random.Random) -> float:
        """Play ``state`` on to the end of the hand; ``seat``'s result (higher is better)."""


def clone(state: State) -> State:
    """An independent copy of an engine state (``State.copy``)."""
    return state.copy()


@dataclass
class SearchStats:
    """How the last decision went (for tests and tuning)."""

    worlds: int = 0
    searched: bool = False


class _Codecs:
    """Codecs by game settings (wire actions to engine ints and back)."""

    def __init__(self) -> None:
        self._cache: dict[bytes, GameCodec] = {}

    def get(self, request: bot_service_pb2.ChooseActionRequest) -> GameCodec:
        key = request.settings.SerializeToString(deterministic=True)
        codec = self._cache.get(key)
        if codec is None:
            settings = request.settings
            game = game_from_settings(settings)
            codec = self._cache[key] = codec_for(game)
        return codec


def budget_seconds(request: bot_service_pb2.ChooseActionRequest, budget_ms: float) -> float:
    """The time this decision may take: the budget, capped by a share of the move time and of
    what is really left before the referee's deadline (``botkit.time_left_s``) when served."""
    move_ms = request.time_control.move_time_ms
    if move_ms:
        budget_ms = min(budget_ms, SHARE_OF_MOVE_TIME * move_ms)
    left_s = time_left_s()
    if left_s is not None:
        budget_ms = min(budget_ms, SHARE_OF_MOVE_TIME * left_s * 1000)
    return max(0.0, budget_ms) / 1000


def search(
    request: bot_service_pb2.ChooseActionRequest,
    actions: Sequence[int],
    adapter: Adapter,
    rng: random.Random,
    deadline: float,
    max_worlds: int,
    stats: SearchStats,
    clock: Clock = time.perf_counter,
) -> int | None:
    """Index in ``actions`` of the best action, or None when no world was finished in time.
    The first world is always finished; a later one is dropped when ``deadline`` passes."""
    seat = request.seat
    totals = [0.0] * len(actions)
    worlds = 0
    failures = 0
    while worlds < max_worlds and clock() < deadline:
        try:
            base = adapter.world(request, rng)
        except RulesError:  # a sampled deal the observed moves rule out: draw another
            failures += 1
            if failures > MAX_BAD_WORLDS:
                break
            continue
        results = []
        for action in actions:
            state = clone(base)
            state.apply(action)
            results.append(adapter.playout(state, seat, rng))
            if clock() >= deadline and worlds:
                break
        else:
            for index, result in enumerate(results):
                totals[index] += result
            worlds += 1
    stats.worlds = worlds
    if not worlds:
        return None
    return max(range(len(actions)), key=lambda index: totals[index])


def make_search_bot(
    name: str,
    game: str,
    adapter: Adapter,
    fallback: Bot,
    seed: int | None,
    budget_ms: float,
    max_worlds: int,
    clock: Clock = time.perf_counter,
) -> tuple[Bot, SearchStats]:
    """A bot that searches where ``adapter`` says so and asks ``fallback`` otherwise, timing
    its budget on ``clock``."""
    rng = random.Random(seed)
    codecs = _Codecs()
    stats = SearchStats()

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        started = clock()
        legal = list(request.legal_actions)
        stats.searched, stats.worlds = False, 0
        if len(legal) == 1:
            return legal[0]
        try:
            if adapter.should_search(request):
                codec = codecs.get(request)
                actions = [codec.decode_action(action) for action in legal]
                deadline = started + budget_seconds(request, budget_ms)
                best = search(request, actions, adapter, rng, deadline, max_worlds, stats, clock)
                if best is not None:
                    stats.searched = True
                    return legal[best]
        except Exception:  # a bug in the search: let the heuristic answer
            stats.searched = False
        try:
            answer = fallback.choose(request)
            return answer if answer in legal else legal[0]
        except Exception:  # never answer an illegal action
            return legal[0]

    bot = Bot(choose=choose, name=name, version="1", games=(game,))
    return bot, stats
