"""Ratings: openskill's Plackett-Luce model for any number of seats, μ − 3σ displayed.

A match (or a duplicate set of matches) is rated as one free-for-all: each bot is a team of
one, ranked by its finishing rank (ties share a rank). Over a duplicate set each bot's ranks are
summed and the sums ranked, so the luck of the deal cancels out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
INITIAL_MU = MODEL.mu
INITIAL_SIGMA = MODEL.sigma
DISPLAY_SIGMAS = 3
"""How many σ below μ the displayed (conservative) rating sits."""
DISPLAY_SQL = f"e.mu - {DISPLAY_SIGMAS} * e.sigma"
"""``displayed_rating`` of a ladder entry row ``e`` in SQL (standings sort by it)."""


def displayed_rating(mu: float, sigma: float) -> float:
    """The conservative rating shown in standings and used by matchmaking: μ − 3σ."""
    return mu - DISPLAY_SIGMAS * sigma


@dataclass(frozen=True)
class Rating:
    """A bot's skill estimate."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA

    @property
    def display(self) -> float:
        """The conservative rating shown in standings: μ − 3σ."""
        return displayed_rating(self.mu, self.sigma)


def rate(ratings: Mapping[str, Rating], ranks: Mapping[str, int]) -> dict[str, Rating]:
    """New ratings of the bots in ``ranks`` (1 = best; equal ranks tie)."""
    bots = list(ranks)
    teams = [[MODEL.rating(mu=ratings[bot].mu, sigma=ratings[bot].sigma)] for bot in bots]
    rated = MODEL.rate(teams, ranks=[float(ranks[bot]) for bot in bots])
    return {bot: Rating(team[0].mu, team[0].sigma) for bot, team in zip(bots, rated, strict=True)}


def set_ranks(matches: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Rank bots over several matches by the sum of their ranks (competition ranking)."""
    totals: dict[str, int] = {}
    for ranks in matches:
        for bot, rank in ranks.items():
            totals[bot] = totals.get(bot, 0) + rank
    return {
        bot: 1 + sum(1 for other in totals.values() if other < total)
        for bot, total in totals.items()
    }
