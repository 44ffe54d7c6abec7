"""Duplicate scoring: a bot's result on a deal is compared with the other bots' in its seat.

A duplicate set replays one deal once per seat rotation, so every seat's cards are held by
each bot of the set in turn. As duplicate bridge scores a board against the other tables that
played it (matchpoints), a set is scored seat by seat: the bots that held seat s on this deal
are ranked by what they made of it, and each seat gives one comparison (one rating event).
Good or bad cards then count for nobody: they were the same for everyone compared.

What a bot made of a seat is, in order: its finishing rank at that table (lower is better:
the game's own verdict, also what a forfeit sets), then its score margin, its score minus
the mean score of the other seats at the table (a finer measure, comparable across tables
because the cards are the same), negated where a lower score wins (Mau-Mau's tallies:
``Rotation.lower_score_wins``). Equal results share a rank. A seat where every bot made the
same of its cards is a push (as duplicate bridge calls a board scored alike at every table)
and compares nothing: the cards decided it, not the bots (two identical bots never move).

Pure: no I/O; ``arena.ratings.rate_duplicate`` feeds the comparisons to openskill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rotation:
    """One rated match of a duplicate set: the bot, finishing rank and score of each seat."""

    seats: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    lower_score_wins: bool = False
    """The game's scores count against a seat (Mau-Mau's tallies): its margin is negated."""

    def __post_init__(self) -> None:
        if not len(self.seats) == len(self.ranks) == len(self.scores) or len(self.seats) < 2:
            raise ValueError("a rotation needs a bot, rank and score for each of 2+ seats")


def less_luck(rotation: Rotation, luck: Sequence[float]) -> Rotation:
    """The rotation with each seat's score less its luck (in score units, as the game's
    ``luck`` hook gives it): margins then count what the bots made of their cards, not what
    chance dealt them after the deal (Mau-Mau's draws)."""
    scores = tuple(s - lucky for s, lucky in zip(rotation.scores, luck, strict=True))
    return Rotation(rotation.seats, rotation.ranks, scores, rotation.lower_score_wins)


def margin(rotation: Rotation, seat: int) -> float:
    """A seat's score minus the mean score of the other seats at its table, larger is
    better: the other way round where a lower score wins."""
    others = [score for i, score in enumerate(rotation.scores) if i != seat]
    ahead = rotation.scores[seat] - sum(others) / len(others)
    return -ahead if rotation.lower_score_wins else ahead


def seat_result(rotation: Rotation, seat: int) -> tuple[int, float]:
    """What the seat's bot made of its cards, larger is better: (−rank, margin)."""
    return -rotation.ranks[seat], margin(rotation, seat)


def seat_comparisons(rotations: Sequence[Rotation]) -> list[dict[str, int]]:
    """For each seat of the deal (in seat order), the bots that held it ranked by their
    result there (1 = best; equal results share the better rank). A seat that fewer than two
    bots held (a rotation voided) or a push (every result equal) compares nothing and is
    left out; a bot that held one seat twice counts with its better result."""
    if not rotations:
        return []
    seats = len(rotations[0].seats)
    if any(len(r.seats) != seats for r in rotations):
        raise ValueError("the rotations of a duplicate set have different seat counts")
    comparisons = []
    for seat in range(seats):
        results: dict[str, tuple[int, float]] = {}
        for rotation in rotations:
            bot, result = rotation.seats[seat], seat_result(rotation, seat)
            results[bot] = max(result, results.get(bot, result))
        if len(results) < 2 or len(set(results.values())) == 1:
            continue
        comparisons.append(
            {
                bot: 1 + sum(1 for other in results.values() if other > result)
                for bot, result in results.items()
            }
        )
    return comparisons


def matchpoints(rotations: Sequence[Rotation]) -> dict[str, float]:
    """Each bot's matchpoints over the set: per seat, one for every bot it beat there and a
    half for every tie (the comparisons' sum, as duplicate bridge shows it)."""
    points: dict[str, float] = {}
    for ranks in seat_comparisons(rotations):
        for bot, rank in ranks.items():
            beaten = sum(1 for other in ranks.values() if other > rank)
            tied = sum(1 for other in ranks.values() if other == rank) - 1
            points[bot] = points.get(bot, 0.0) + beaten + 0.5 * tied
    return points


def first_places(rotations: Sequence[Rotation]) -> dict[str, int]:
    """Matches of the set each bot finished first in (alone or shared): what the standings'
    first places count, in a duplicate ladder as in a plain one."""
    firsts: dict[str, int] = {}
    for rotation in rotations:
        for bot, rank in zip(rotation.seats, rotation.ranks, strict=True):
            firsts[bot] = firsts.get(bot, 0) + (rank == 1)
    return firsts
