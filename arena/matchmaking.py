"""Matchmaking: who plays whom next, and in which seats (pure; no I/O).

Continuous and fair over time, like the Battlesnake arena's matchmaker: the next match is built
around the entrant that is most owed a match (fewest scheduled, with new bots counted as owed
more until their rating settles), joined by entrants near it in rating, chosen after a random
jitter and a penalty for having played more, so close ratings meet most, everyone meets a
spread of opponents, and match counts stay even. Seats are shuffled by a
seeded generator; with duplicate deals a set replays one deal with the seats rotated.
"""

from __future__ import annotations

import bisect
import heapq
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

from arena.ratings import INITIAL_SIGMA, Rating

NEW_BOT_BONUS = 8.0
"""Matches a brand-new bot is owed over a settled one, fading as its σ shrinks."""

SETTLED_SIGMA = 2.0
"""σ below which a rating counts as settled (no more bonus)."""

JITTER = 4.0
"""Standard deviation of the random noise added to rating distances when picking opponents."""

OWED_WEIGHT = 3.0
"""Rating points one extra scheduled match weighs against an opponent (keeps counts even)."""


class Entrant(NamedTuple):
    """A bot eligible for matchmaking in one ladder (a named tuple: a pool rebuild makes
    10,000 of them at once, straight from database rows)."""

    bot_id: str
    rating: float
    sigma: float
    scheduled: int


@dataclass(frozen=True)
class PlannedMatch:
    """A match to enqueue: its seed and the bot in each seat."""

    seed: int
    seats: tuple[str, ...]


WINDOW = 24
"""Neighbours in rating order considered as opponents (each side of the anchor)."""

_JITTER_BITS = 10
_HALF_NORMAL_JITTER = [
    JITTER * NormalDist().inv_cdf(0.5 + (i + 0.5) / 2 ** (_JITTER_BITS + 1))
    for i in range(2**_JITTER_BITS)
]
"""|N(0, JITTER)| drawn by an index: 1,024 equally likely quantiles (48 ``random.gauss`` calls
a match cost more than the rest of matchmaking)."""


def owed(entrant: Entrant) -> float:
    """Lower is more owed: matches scheduled, minus a bonus for unsettled ratings."""
    return _owed(entrant.scheduled, entrant.sigma)


def _owed(scheduled: int, sigma: float) -> float:
    unsettled = (sigma - SETTLED_SIGMA) / (INITIAL_SIGMA - SETTLED_SIGMA)
    return scheduled - NEW_BOT_BONUS * min(1.0, max(0.0, unsettled))


class MatchmakingPool:
    """The entrants of one ladder, kept so that each next match costs O(log n), not O(n).

    A heap orders entrants by how owed they are (ties broken at random); a rating-sorted list
    gives each anchor's neighbours by bisection. Scheduling an entrant pushes it back with one
    more match owed (stale heap entries are skipped). The pool lives across scheduling ticks:
    ``rated`` applies new ratings, ``update`` and ``remove`` the bots that joined or left.
    """

    def __init__(self, entrants: Sequence[Entrant], rng: random.Random) -> None:
        self._rng = rng
        bots, ratings, sigmas, scheduled = zip(*entrants, strict=True) if entrants else [()] * 4
        self._scheduled: dict[str, int] = dict(zip(bots, scheduled, strict=True))
        self._sigma: dict[str, float] = dict(zip(bots, sigmas, strict=True))
        self._owed: dict[str, float] = dict(zip(bots, map(_owed, scheduled, sigmas), strict=True))
        self._rating: dict[str, float] = dict(zip(bots, ratings, strict=True))
        self._by_rating = sorted(zip(ratings, bots, strict=True))
        draw = rng.random
        self._heap: list[tuple[float, float, str]] = [
            (value, draw(), bot) for bot, value in self._owed.items()
        ]
        heapq.heapify(self._heap)

    def __len__(self) -> int:
        return len(self._owed)

    def __contains__(self, bot: object) -> bool:
        return bot in self._owed

    def entrant(self, bot: str) -> Entrant:
        """A bot as the pool sees it now."""
        return Entrant(bot, self._rating[bot], self._sigma[bot], self._scheduled[bot])

    def _most_owed(self) -> str:
        while True:
            value, _, bot = self._heap[0]
            if value == self._owed.get(bot):
                return bot
            heapq.heappop(self._heap)  # stale: the bot was scheduled, rated or removed since

    def pick(self, seats: int) -> list[str]:
        """The most owed bot plus the ``seats - 1`` best opponents near it in rating."""
        if len(self._owed) < seats:
            return []
        anchor = self._most_owed()
        lowest = self._owed[anchor]
        rating = self._rating[anchor]
        middle = bisect.bisect_left(self._by_rating, (rating, anchor))
        window = max(WINDOW, 2 * seats)
        low, high = max(0, middle - window), min(len(self._by_rating), middle + window + 1)
        draw, owed_now = self._rng.getrandbits, self._owed
        scored = sorted(
            (
                abs(other - rating)
                + _HALF_NORMAL_JITTER[draw(_JITTER_BITS)]
                + OWED_WEIGHT * (owed_now[bot] - lowest),
                bot,
            )
            for other, bot in self._by_rating[low:high]
            if bot != anchor
        )
        return [anchor, *(bot for _, bot in scored[: seats - 1])]

    def scheduled(self, bots: Sequence[str]) -> None:
        """Count one more match for each of ``bots`` (once per appearance)."""
        for bot in bots:
            if bot in self._scheduled:
                self._set(bot, self._rating[bot], self._sigma[bot], self._scheduled[bot] + 1)

    def rated(self, ratings: Mapping[str, Rating]) -> None:
        """New ratings of bots in the pool (others are ignored)."""
        for bot, new in ratings.items():
            if bot in self._scheduled:
                self._set(bot, new.display, new.sigma, self._scheduled[bot])

    def update(self, entrants: Sequence[Entrant]) -> None:
        """Add bots, or replace what the pool knows of them (rating, σ, matches scheduled)."""
        for e in entrants:
            self._set(e.bot_id, e.rating, e.sigma, e.scheduled)

    def remove(self, bots: Sequence[str]) -> None:
        """Take bots out of matchmaking (those not in the pool are ignored); their heap
        entries go stale."""
        for bot in bots:
            if bot in self._scheduled:
                rating = self._rating.pop(bot)
                del self._by_rating[bisect.bisect_left(self._by_rating, (rating, bot))]
                del self._sigma[bot], self._owed[bot], self._scheduled[bot]

    def _set(self, bot: str, rating: float, sigma: float, scheduled: int) -> None:
        """Store a bot's figures, moving it in the rating order and the heap only if its
        rating or owed value changed."""
        old_rating = self._rating.get(bot)
        if old_rating != rating:
            if old_rating is not None:
                del self._by_rating[bisect.bisect_left(self._by_rating, (old_rating, bot))]
            bisect.insort(self._by_rating, (rating, bot))
            self._rating[bot] = rating
        self._sigma[bot], self._scheduled[bot] = sigma, scheduled
        value = _owed(scheduled, sigma)
        if self._owed.get(bot) != value:
            self._owed[bot] = value
            heapq.heappush(self._heap, (value, self._rng.random(), bot))


def pick_players(entrants: Sequence[Entrant], seats: int, rng: random.Random) -> list[Entrant]:
    """One-off form of ``MatchmakingPool.pick`` for a list of entrants."""
    by_id = {e.bot_id: e for e in entrants}
    return [by_id[bot] for bot in MatchmakingPool(entrants, rng).pick(seats)]


def plan_set(
    players: Sequence[Entrant] | Sequence[str], rng: random.Random, duplicate: bool
) -> list[PlannedMatch]:
    """One match with shuffled seats, or with ``duplicate`` one deal per seat rotation."""
    order = [p if isinstance(p, str) else p.bot_id for p in players]
    rng.shuffle(order)
    seed = rng.getrandbits(48)
    if not duplicate:
        return [PlannedMatch(seed, tuple(order))]
    n = len(order)
    return [
        PlannedMatch(seed, tuple(order[(i + shift) % n] for i in range(n))) for shift in range(n)
    ]
