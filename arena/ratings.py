"""Ratings: openskill's Plackett-Luce model for any number of seats, μ − 3σ displayed.

A plain match is rated as one free-for-all: each bot is a team of one, ranked by its finishing
rank (ties share a rank). A duplicate set is rated from its seat comparisons
(``arena.duplicate_scoring``): one event per seat of the deal, ranking the bots that held that
seat's cards by what they made of them, so the luck of the deal counts for nobody.

Ratings do not freeze: a bot idle for a while gets back uncertainty (``after_idle``), and a
ladder may keep σ from going below a floor, so a rating can still move after many matches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from arena.duplicate_scoring import Rotation, seat_comparisons

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


DAY_US = 86_400_000_000


def rate(
    ratings: Mapping[str, Rating],
    ranks: Mapping[str, int],
    min_sigma: float = 0.0,
    *,
    model: PlackettLuce = MODEL,
) -> dict[str, Rating]:
    """New ratings of the bots in ``ranks`` (1 = best; equal ranks tie); σ no lower than
    ``min_sigma``. ``model``: the ladder's unless a benchmark measures with another (e.g. its
    τ set to 0, a rating that does not forget)."""
    bots = list(ranks)
    teams = [[model.rating(mu=ratings[bot].mu, sigma=ratings[bot].sigma)] for bot in bots]
    rated = model.rate(teams, ranks=[float(ranks[bot]) for bot in bots])
    return {
        bot: Rating(team[0].mu, max(min_sigma, team[0].sigma))
        for bot, team in zip(bots, rated, strict=True)
    }


def rate_duplicate(
    ratings: Mapping[str, Rating],
    rotations: Sequence[Rotation],
    min_sigma: float = 0.0,
    *,
    model: PlackettLuce = MODEL,
) -> dict[str, Rating]:
    """New ratings of the bots of a duplicate set: each seat comparison of the deal rated in
    turn as one event (seat order), the bots compared being those that held that seat."""
    current = {bot: ratings[bot] for rotation in rotations for bot in rotation.seats}
    for ranks in seat_comparisons(rotations):
        current.update(rate(current, ranks, min_sigma, model=model))
    return current


def after_idle(rating: Rating, idle_us: int, growth_per_day: float) -> Rating:
    """The rating of a bot that played no rated match for ``idle_us``: σ grown as openskill's
    additive dynamics factor τ grows it before every match (σ² + τ²), with τ² =
    ``growth_per_day``² per idle day, never above the initial σ (a long absence makes the
    bot as uncertain as a new one, no more)."""
    if idle_us <= 0 or growth_per_day <= 0 or rating.sigma >= INITIAL_SIGMA:
        return rating
    grown = math.sqrt(rating.sigma**2 + (idle_us / DAY_US) * growth_per_day**2)
    return Rating(rating.mu, min(INITIAL_SIGMA, grown))


def idle_since(rated_us: int, now_us: int) -> int:
    """How long an entry last rated at ``rated_us`` (0: never rated) has been idle at
    ``now_us``: never negative, and nothing for an entry never rated (it is at its prior)."""
    return max(0, now_us - rated_us) if rated_us else 0


def rating_as_of(rating: Rating, rated_us: int, now_us: int, growth_per_day: float) -> Rating:
    """The rating as it stands at ``now_us``: the stored one (last changed at ``rated_us``)
    with σ grown by the idle time since, exactly as the next rated set will grow it
    (``after_idle``). Standings and profiles show this, so idle growth is visible before the
    bot plays again; the stored rating changes only when a set is rated."""
    return after_idle(rating, idle_since(rated_us, now_us), growth_per_day)


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


def new_version_rating(prior: Rating, inherit: bool) -> Rating:
    """Where a bot's new version starts: fresh, or (``inherit``) at the previous version's μ
    with σ raised back to the initial σ, so it moves as fast as a new bot's."""
    return Rating(prior.mu, INITIAL_SIGMA) if inherit else Rating()


@dataclass(frozen=True)
class RatingPolicy:
    """A ladder's rating options."""

    min_sigma: float = 0.0
    """σ never goes below this (0: openskill's own course)."""
    sigma_growth_per_day: float = 0.0
    """σ regained per idle day, in quadrature as openskill's τ (0: none)."""


def rate_set(
    current: Mapping[str, Rating],
    rotations: Sequence[Rotation],
    duplicate: bool,
    policy: RatingPolicy = RatingPolicy(),
    idle_us: Mapping[str, int] | None = None,
) -> dict[str, Rating]:
    """New ratings after a set's rated matches: a plain ladder rates its one match by the
    finishing ranks; a duplicate set is rated from its seat comparisons. Each bot's σ first
    grows with its idle time (``idle_us``) by the policy."""
    idle = idle_us or {}
    grown = {
        bot: after_idle(rating, idle.get(bot, 0), policy.sigma_growth_per_day)
        for bot, rating in current.items()
    }
    if duplicate:
        return rate_duplicate(grown, rotations, policy.min_sigma)
    new: dict[str, Rating] = {}
    for rotation in rotations:
        ranks = dict(zip(rotation.seats, rotation.ranks, strict=True))
        new.update(rate({**grown, **new}, ranks, policy.min_sigma))
    return new
