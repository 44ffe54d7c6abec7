"""Bot versions: each version of a bot is its own entry in a ladder, linked to the bot.

When an owner changes a bot's version (UpdateBot), every entry of the bot is closed for the
old version (its figures kept in ``version_entries``) and opened again for the new one, rated
as each ladder's ``new_version_rating`` says: fresh, or the old μ with σ back at the prior's.
A new version's σ is then the initial σ, so matchmaking gives it the new-bot bonus (more
matches until its rating settles). The profile lists every version's figures.
"""

from __future__ import annotations

from typing import Any

from arena.ratings import Rating, displayed_rating, new_version_rating, rating_as_of
from arena.store.db import Tx
from cardarena.arena.v1 import arena_service_pb2 as pb


def start_new_version(tx: Tx, bot_id: str, old: str, new: str, at_us: int) -> None:
    """Close the bot's entries for version ``old`` and open them for ``new``."""
    rows = tx.all(
        "SELECT e.ladder_id, e.mu, e.sigma, e.matches, e.first_places, l.config "
        "FROM entries e JOIN ladders l ON l.ladder_id = e.ladder_id WHERE e.bot_id = ?",
        (bot_id,),
    )
    for ladder_id, mu, sigma, matches, first_places, config in rows:
        tx.execute(
            "INSERT INTO version_entries (ladder_id, bot_id, version, mu, sigma, matches, "
            "first_places, replaced_at_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (ladder_id, bot_id, version) DO UPDATE SET mu = excluded.mu, "
            "sigma = excluded.sigma, matches = version_entries.matches + excluded.matches, "
            "first_places = version_entries.first_places + excluded.first_places, "
            "replaced_at_us = excluded.replaced_at_us",
            (ladder_id, bot_id, old, mu, sigma, matches, first_places, at_us),
        )
        inherit = (
            pb.LadderConfig.FromString(bytes(config)).new_version_rating
            == pb.NEW_VERSION_RATING_INHERIT
        )
        start = new_version_rating(Rating(mu, sigma), inherit)
        tx.execute(
            "UPDATE entries SET mu = ?, sigma = ?, matches = 0, first_places = 0, "
            "moves_played = 0, faults = 0, rated_us = 0, version = ?, changed_us = ? "
            "WHERE ladder_id = ? AND bot_id = ?",
            (start.mu, start.sigma, new, at_us, ladder_id, bot_id),
        )


def _figures(row: Any, **extra: Any) -> pb.VersionFigures:
    """One version's figures in one ladder from ``(ladder, version, μ, σ, matches, firsts)``."""
    ladder_id, version, mu, sigma, matches, first_places = row[:6]
    return pb.VersionFigures(
        version=version,
        ladder_id=ladder_id,
        rating=displayed_rating(mu, sigma),
        mu=mu,
        sigma=sigma,
        matches=matches,
        first_places=first_places,
        **extra,
    )


def version_figures(tx: Tx, bot_id: str, now_us: int) -> list[pb.VersionFigures]:
    """Every version's figures per ladder: the current version's entries first, with σ as of
    ``now_us`` (grown by the ladder's idle growth since the entry was last rated), then the
    earlier versions, latest replaced first (as they were when replaced)."""
    current = []
    for ladder_id, version, mu, sigma, matches, first_places, rated_us, config in tx.all(
        "SELECT e.ladder_id, e.version, e.mu, e.sigma, e.matches, e.first_places, e.rated_us, "
        "l.config FROM entries e JOIN ladders l ON l.ladder_id = e.ladder_id "
        "WHERE e.bot_id = ? ORDER BY e.ladder_id",
        (bot_id,),
    ):
        growth = pb.LadderConfig.FromString(bytes(config)).sigma_growth_per_day
        shown = rating_as_of(Rating(mu, sigma), rated_us, now_us, growth)
        current.append((ladder_id, version, shown.mu, shown.sigma, matches, first_places))
    replaced = tx.all(
        "SELECT ladder_id, version, mu, sigma, matches, first_places, replaced_at_us "
        "FROM version_entries WHERE bot_id = ? ORDER BY replaced_at_us DESC, ladder_id",
        (bot_id,),
    )
    return [_figures(row, current=True) for row in current] + [
        _figures(row, replaced_at_us=row[6]) for row in replaced
    ]


def version_at(replacements: list[tuple[int, str]], current: str, at_us: int) -> str:
    """The version a bot played at ``at_us``, from when each version was replaced
    (``(replaced_at_us, version)``, oldest first)."""
    for replaced_at, version in replacements:
        if at_us <= replaced_at:
            return version
    return current
