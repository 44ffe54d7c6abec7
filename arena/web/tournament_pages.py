"""The web UI's tournament pages: the list and one tournament's crosstable (pure; no I/O).

The crosstable is read as the ACPC publishes its results: the row entrant's score against the
column entrant (its share of their seat comparisons, 0 to 1) with the 95 % confidence
interval under it; a cell whose interval holds 1/2 is shaded (not significant), a significant
win or loss is coloured. Exports: ``/tournaments/{id}.json`` (the crosstable as ``arena
tournament show`` reads it) and ``.csv`` (one row per ordered pairing).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.tournament import Crosstable
from arena.web.pages import (
    REFRESH,
    bot_link,
    esc,
    layout,
    match_link,
    options_text,
    seg,
    table,
    when,
)
from cardarena.arena.v1 import arena_service_pb2 as pb

STATE_TEXT = {
    pb.TOURNAMENT_STATE_RUNNING: "running",
    pb.TOURNAMENT_STATE_FINISHED: "finished",
    pb.TOURNAMENT_STATE_STOPPED: "stopped at its deadline",
}
FORMAT_TEXT = {pb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round robin", pb.TOURNAMENT_FORMAT_SWISS: "Swiss"}


def tournament_link(tournament: pb.Tournament) -> str:
    return (
        f'<a href="/tournaments/{seg(tournament.tournament_id)}">{esc(tournament.config.name)}</a>'
    )


def _progress(tournament: pb.Tournament) -> str:
    return f"{tournament.sets_played}/{tournament.sets_planned} sets"


def tournaments_page(tournaments: Sequence[pb.Tournament]) -> str:
    """``/tournaments``: every tournament, newest first."""
    rows = (
        f"<tr><td>{tournament_link(t)}</td><td>{esc(t.config.settings.game)}</td>"
        f"<td>{FORMAT_TEXT.get(t.config.format, '')}</td><td class='num'>{len(t.entrants)}</td>"
        f"<td class='num'>{_progress(t)}</td><td>{STATE_TEXT.get(t.state, '')}</td>"
        f"<td>{when(t.created_at_us)}</td></tr>"
        for t in tournaments
    )
    body = "<h1>Tournaments</h1>" + table(
        ["Tournament", "Game", "Format", "Entrants", "Played", "State", "Created"],
        rows,
        cls="tournaments",
    )
    return layout("Tournaments", body, active="/tournaments")


def _cell(table_: Crosstable, row: str, column: str) -> str:
    if row == column:
        return '<td class="self" aria-label="itself">—</td>'
    pairing = table_.pairings.get((row, column))
    if pairing is None:
        return '<td class="unmet">·</td>'
    if not pairing.significant:
        cls, meaning = "ns", "not significant at 95 %"
    elif pairing.score > 0.5:
        cls, meaning = "win", "significantly ahead"
    else:
        cls, meaning = "loss", "significantly behind"
    return (
        f'<td class="num {cls}" title="{esc(row)} vs {esc(column)}: {meaning}, '
        f'{pairing.comparisons} comparisons over {pairing.sets} sets">'
        f'<span class="score">{pairing.score:.3f}</span>'
        f'<span class="ci">{pairing.low:.2f}–{pairing.high:.2f}</span></td>'
    )


def crosstable_html(table_: Crosstable, bot_ids: dict[str, str]) -> str:
    """The crosstable, best first in rows and columns."""
    names = [entrant for entrant, _ in table_.standings]
    rows = (
        f'<tr><td class="num">{position}</td><th scope="row">'
        f"{bot_link(bot_ids.get(entrant, ''), entrant)}</th>"
        f'<td class="num strong">{mean:.3f}</td>'
        + "".join(_cell(table_, entrant, other) for other in names)
        + "</tr>"
        for position, (entrant, mean) in enumerate(table_.standings, start=1)
    )
    headers = ["#", "Entrant", '<abbr title="mean score over its pairings">Mean</abbr>']
    headers += [f'<span class="col">{esc(name)}</span>' for name in names]
    return table(headers, rows, cls="crosstable")


def in_play_html(matches: Sequence[pb.ListedMatch]) -> str:
    """The rotations in play that may be watched, each linked to its live table."""
    rows = (
        f"<tr><td>{match_link(m.match_id)}</td><td><ul class='seats'>"
        + "".join(f"<li>{bot_link(s.bot_id, s.bot_name)}</li>" for s in m.seats)
        + f"</ul></td><td>{when(m.started_at_us)}</td></tr>"
        for m in matches
    )
    return (
        '<section class="in-play"><h2>Played now</h2>'
        + table(["Match", "Seats", "Started"], rows, cls="matches live")
        + '<p class="hint">Only the last rotation of a deal is shown while it is played: the '
        "moves of the others show the cards of a deal still to be played again.</p></section>"
    )


def tournament_page(
    tournament: pb.Tournament, table_: Crosstable, in_play: Sequence[pb.ListedMatch] = ()
) -> str:
    """``/tournaments/{id}``: progress, the rotations in play that may be watched
    (``in_play``: the caller leaves out the withheld ones), the crosstable and the
    downloads."""
    config = tournament.config
    base = f"/tournaments/{seg(tournament.tournament_id)}"
    bot_ids = {f"{bot.owner}/{bot.name}": bot.bot_id for bot in tournament.entrants}
    rounds = f", {config.rounds} rounds" if config.format == pb.TOURNAMENT_FORMAT_SWISS else ""
    options = options_text(config.settings)
    body = (
        f"<h1>{esc(config.name)}</h1>"
        f'<p class="sub">{FORMAT_TEXT.get(config.format, "")}{rounds} · '
        f"{esc(config.settings.game)}, {config.settings.num_seats} seats"
        f"{' (' + esc(options) + ')' if options else ''} · {config.sets} duplicate sets per "
        f"table · seed {config.seed}</p>"
        f'<p class="sub"><span class="state">{STATE_TEXT.get(tournament.state, "")}</span> · '
        f"{_progress(tournament)}, {tournament.matches_played} matches · deadline "
        f"{when(config.deadline_us)}</p>"
        + (in_play_html(in_play) if tournament.state == pb.TOURNAMENT_STATE_RUNNING else "")
        + crosstable_html(table_, bot_ids)
        + '<p class="hint">Each cell: the row entrant\'s share of its seat comparisons with '
        "the column entrant (a win 1, a tie ½) and its 95 % confidence interval. Shaded "
        "cells are not significant (the interval holds ½).</p>"
        f'<p>Download: <a href="{base}.json" download>JSON</a> · '
        f'<a href="{base}.csv" download>CSV</a> · '
        f'<a href="/api/v1/tournaments/{seg(tournament.tournament_id)}">API</a></p>'
    )
    head = REFRESH if tournament.state == pb.TOURNAMENT_STATE_RUNNING else ""
    return layout(config.name, body, active="/tournaments", head=head)
