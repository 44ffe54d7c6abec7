"""Matchmaking: who plays whom next, and in which seats (pure; no I/O).

Continuous and fair over time, like the Battlesnake arena's matchmaker: the next match is built
around the entrant that is most owed a match (fewest scheduled, with new bots counted as owed
more until their rating settles), joined by entrants near it in rating, chosen after a random
jitter and a penalty for having played more, so close ratings meet most, everyone meets a
spread of opponents, and match counts stay even. Seats are shuffled by a
seeded generator; with duplicate deals a set replays one deal with the seats rotated.

Seats belong to different owners: a match never has two entrants of one owner, nor two at one
address (the endpoint resolved at registration), so no process answers for two seats and sees
two hands; a ladder may allow self-play explicitly (an operator's own bots).
"""

from __future__ import annotations

import bisect
import heapq
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
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
    owner: str = ""
    """Who registered the bot: no two of one owner meet (empty: the bot is its own owner)."""
    address: str = ""
    """Where the bot answers (its address key): no two at one address meet (empty: unknown)."""


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
    Each bot's owner and address are kept with it, and the owners counted, so a pool with too
    few owners to fill a match answers at once.
    """

    def __init__(self, entrants: Sequence[Entrant], rng: random.Random) -> None:
        self._rng = rng
        self._keys: dict[str, tuple[str, str]] = {}
        """Each bot's owner and address, as given (``entrant`` gives them back)."""
        self._owners: Counter[str] = Counter()
        """Bots per owner group (an entrant without an owner is a group of its own)."""
        for e in entrants:
            self._set_keys(e.bot_id, e.owner, e.address)
        columns = [e[:4] for e in entrants]
        bots, ratings, sigmas, scheduled = zip(*columns, strict=True) if columns else [()] * 4
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
        owner, address = self._keys[bot]
        return Entrant(
            bot, self._rating[bot], self._sigma[bot], self._scheduled[bot], owner, address
        )

    def _most_owed(self) -> str:
        while True:
            value, _, bot = self._heap[0]
            if value == self._owed.get(bot):
                return bot
            heapq.heappop(self._heap)  # stale: the bot was scheduled, rated or removed since

    def pick(self, seats: int, allow_self_play: bool = False) -> list[str]:
        """The most owed bot plus the ``seats - 1`` best opponents near it in rating, each of
        another owner and address than every other seat (unless ``allow_self_play``); [] if
        the pool cannot fill a match.

        The opponents come from the ``WINDOW`` neighbours on each side of the anchor in rating
        order; when those hold too few other owners the window widens fourfold until it does
        (or holds the whole pool), so the cost stays that of a window unless a few owners
        crowd one stretch of the ladder."""
        if len(self._owed) < seats or (not allow_self_play and len(self._owners) < seats):
            return []
        anchor = self._most_owed()
        lowest = self._owed[anchor]
        rating = self._rating[anchor]
        middle = bisect.bisect_left(self._by_rating, (rating, anchor))
        window = max(WINDOW, 2 * seats)
        draw, owed_now, size = self._rng.getrandbits, self._owed, len(self._by_rating)
        while True:
            low, high = max(0, middle - window), min(size, middle + window + 1)
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
            if allow_self_play:
                return [anchor, *(bot for _, bot in scored[: seats - 1])]
            chosen = self._distinct(anchor, (bot for _, bot in scored), seats)
            if chosen or (low == 0 and high == size):
                return chosen
            window *= 4

    def _distinct(self, anchor: str, candidates: Iterable[str], seats: int) -> list[str]:
        """The anchor and the first candidates, in order, that share no owner and no address
        with a seat already taken; [] if there are not enough of them."""
        owner, address = self._group(anchor)
        owners, addresses = {owner}, {address}
        chosen = [anchor]
        for bot in candidates:
            owner, address = self._group(bot)
            if owner in owners or address in addresses:
                continue
            chosen.append(bot)
            if len(chosen) == seats:
                return chosen
            owners.add(owner)
            addresses.add(address)
        return []

    def _group(self, bot: str) -> tuple[str, str]:
        """The keys no two seats may share: the owner (the bot itself if it has none) and the
        address (the bot itself if unknown)."""
        owner, address = self._keys[bot]
        return owner or bot, address or bot

    def _set_keys(self, bot: str, owner: str, address: str) -> None:
        old = self._keys.get(bot)
        if old is not None:
            self._drop_owner(old[0] or bot)
        self._keys[bot] = (owner, address)
        self._owners[owner or bot] += 1

    def _drop_owner(self, group: str) -> None:
        self._owners[group] -= 1
        if not self._owners[group]:
            del self._owners[group]

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
            self._set_keys(e.bot_id, e.owner, e.address)
            self._set(e.bot_id, e.rating, e.sigma, e.scheduled)

    def remove(self, bots: Sequence[str]) -> None:
        """Take bots out of matchmaking (those not in the pool are ignored); their heap
        entries go stale."""
        for bot in bots:
            if bot in self._scheduled:
                rating = self._rating.pop(bot)
                del self._by_rating[bisect.bisect_left(self._by_rating, (rating, bot))]
                del self._sigma[bot], self._owed[bot], self._scheduled[bot]
                self._drop_owner(self._group(bot)[0])
                del self._keys[bot]

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


def pick_players(
    entrants: Sequence[Entrant], seats: int, rng: random.Random, allow_self_play: bool = False
) -> list[Entrant]:
    """One-off form of ``MatchmakingPool.pick`` for a list of entrants."""
    by_id = {e.bot_id: e for e in entrants}
    return [by_id[bot] for bot in MatchmakingPool(entrants, rng).pick(seats, allow_self_play)]


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
