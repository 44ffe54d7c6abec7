"""Matchmaking: who plays whom next, and in which seats (pure; no I/O).

Continuous and fair over time, like the Battlesnake arena's matchmaker: the next match is built
around the entrant that is most owed a match (fewest scheduled, with new bots counted as owed
more until their rating settles), joined by the entrants whose ratings are closest to it after a
random jitter, so close ratings meet most but everyone meets everyone. Seats are shuffled by a
seeded generator; with duplicate deals a set replays one deal with the seats rotated.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena.ratings import INITIAL_SIGMA

NEW_BOT_BONUS = 8.0
"""Matches a brand-new bot is owed over a settled one, fading as its σ shrinks."""

SETTLED_SIGMA = 2.0
"""σ below which a rating counts as settled (no more bonus)."""

JITTER = 4.0
"""Standard deviation of the random noise added to rating distances when picking opponents."""

OWED_WEIGHT = 3.0
"""Rating points one extra scheduled match weighs against an opponent (keeps counts even)."""


@dataclass(frozen=True)
class Entrant:
    """A bot eligible for matchmaking in one ladder."""

    bot_id: str
    rating: float
    sigma: float
    scheduled: int


@dataclass(frozen=True)
class PlannedMatch:
    """A match to enqueue: its seed and the bot in each seat."""

    seed: int
    seats: tuple[str, ...]


def owed(entrant: Entrant) -> float:
    """Lower is more owed: matches scheduled, minus a bonus for unsettled ratings."""
    unsettled = (entrant.sigma - SETTLED_SIGMA) / (INITIAL_SIGMA - SETTLED_SIGMA)
    return entrant.scheduled - NEW_BOT_BONUS * min(1.0, max(0.0, unsettled))


def pick_players(entrants: Sequence[Entrant], seats: int, rng: random.Random) -> list[Entrant]:
    """The most-owed entrant plus the ``seats - 1`` closest in rating after jitter.

    An opponent's distance also grows with how many more matches it has had than the most owed
    entrant, so match counts stay even while close ratings still meet most often.
    """
    if len(entrants) < seats:
        return []
    lowest = min(owed(e) for e in entrants)
    candidates = [e for e in entrants if owed(e) - lowest < 1.0]
    anchor = rng.choice(candidates)
    others = [e for e in entrants if e.bot_id != anchor.bot_id]
    others.sort(
        key=lambda e: (
            abs(e.rating - anchor.rating)
            + abs(rng.gauss(0.0, JITTER))
            + OWED_WEIGHT * (owed(e) - lowest)
        )
    )
    return [anchor, *others[: seats - 1]]


def plan_set(players: Sequence[Entrant], rng: random.Random, duplicate: bool) -> list[PlannedMatch]:
    """One match with shuffled seats, or with ``duplicate`` one deal per seat rotation."""
    order = [p.bot_id for p in players]
    rng.shuffle(order)
    seed = rng.getrandbits(48)
    if not duplicate:
        return [PlannedMatch(seed, tuple(order))]
    n = len(order)
    return [
        PlannedMatch(seed, tuple(order[(i + shift) % n] for i in range(n))) for shift in range(n)
    ]
