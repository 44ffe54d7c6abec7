"""Ratings: openskill's Plackett-Luce model for any number of seats, μ − 3σ displayed.

A match (or a duplicate set of matches) is rated as one free-for-all: each bot is a team of
one, ranked by its finishing rank (ties share a rank). Over a duplicate set each bot's ranks are
summed and the sums ranked, so the luck of the deal cancels out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
INITIAL_MU = MODEL.mu
INITIAL_SIGMA = MODEL.sigma


@dataclass(frozen=True)
class Rating:
    """A bot's skill estimate."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA

    @property
    def display(self) -> float:
        """The conservative rating shown in standings: μ − 3σ."""
        return self.mu - 3 * self.sigma


def rate(ratings: Mapping[str, Rating], ranks: Mapping[str, int]) -> dict[str, Rating]:
    """New ratings of the bots in ``ranks`` (1 = best; equal ranks tie): ``MODEL.rate`` with
    each bot a team of one, as ``rate_with_openskill`` calls it, to the last bit.

    Computed here, step for step in openskill's order (``PlackettLuce.rate`` and ``_compute``
    for one-player teams and the default parameters checked below), because ``MODEL.rate`` spends
    most of its time on a uuid and a deep copy per player: a tenth of the ladder's bookkeeping
    per finished match. tests/test_matchmaking.py compares the two on random ratings and ranks.
    """
    order = sorted(ranks, key=ranks.__getitem__)  # stable, as openskill's sort by rank
    tau_squared = MODEL.tau * MODEL.tau
    sigmas = [math.sqrt(ratings[b].sigma * ratings[b].sigma + tau_squared) for b in order]
    mus = [ratings[b].mu for b in order]
    variances = [sigma**2 for sigma in sigmas]
    levels = [int(float(ranks[b])) for b in order]
    collective = 0.0
    for variance in variances:
        collective += variance + _BETA_SQUARED
    c = math.sqrt(collective)
    strengths = [math.exp(mu / c) for mu in mus]
    sum_q = [0.0] * len(order)
    for i, strength in enumerate(strengths):
        for q, level in enumerate(levels):
            if levels[i] >= level:
                sum_q[q] += strength
    ties = [levels.count(level) for level in levels]
    new: dict[str, Rating] = {}
    for i, bot in enumerate(order):
        omega = delta = 0.0
        for q, level in enumerate(levels):
            share = strengths[i] / sum_q[q]
            if level <= levels[i]:
                delta += share * (1 - share) / ties[q]
                omega += (1 - share) / ties[q] if q == i else -share / ties[q]
        omega *= variances[i] / c
        delta *= variances[i] / c**2
        delta *= math.sqrt(variances[i]) / c
        weight = sigmas[i] ** 2 / variances[i]
        mu = mus[i] + weight * omega
        sigma = sigmas[i] * math.sqrt(max(1 - weight * delta, MODEL.kappa))
        new[bot] = Rating(mu, sigma)
    return new


def rate_with_openskill(
    ratings: Mapping[str, Rating], ranks: Mapping[str, int]
) -> dict[str, Rating]:
    """``rate`` through openskill's own ``PlackettLuce.rate`` (the reference for tests)."""
    bots = list(ranks)
    teams = [[MODEL.rating(mu=ratings[bot].mu, sigma=ratings[bot].sigma)] for bot in bots]
    rated = MODEL.rate(teams, ranks=[float(ranks[bot]) for bot in bots])
    return {bot: Rating(team[0].mu, team[0].sigma) for bot, team in zip(bots, rated, strict=True)}


_BETA_SQUARED = MODEL.beta**2
assert not (MODEL.limit_sigma or MODEL.balance or MODEL.margin), "rate() assumes the defaults"


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
