"""The web UI's pages as HTML: pure functions from API answers to text, no I/O.

Every page is complete without scripts (what ``curl`` or a crawler gets holds the ladder names,
bot names, ranks and figures); ``/static/app.js`` only enhances (search as you type, live
refresh). Every text that comes from a user (bot, owner and ladder names, versions) goes
through ``esc``; nothing here reads a hidden card: pages show API answers, which are public.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote, urlencode

from arena.web.operator import Panel
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2, record_pb2

STATE_WORDS: dict[int, tuple[str, str]] = {
    pb.BOT_STATE_VALIDATING: ("validating", "playing its validation matches against the house bot"),
    pb.BOT_STATE_ACTIVE: ("active", "plays ladder matches"),
    pb.BOT_STATE_PAUSED: ("paused", "out of matchmaking until it is resumed"),
    pb.BOT_STATE_RETIRED: ("retired", "no longer plays; its results stay"),
    pb.BOT_STATE_REJECTED: ("rejected", "failed validation; a new version is validated again"),
    pb.BOT_STATE_UNHEALTHY: (
        "unhealthy",
        "pulled from matchmaking by the health sweep until it answers again",
    ),
}
"""Each bot state's name and what it means, in plain words."""

STATUS_WORDS = {
    record_pb2.MATCH_STATUS_UNSPECIFIED: "playing",
    record_pb2.MATCH_STATUS_COMPLETED: "completed",
    record_pb2.MATCH_STATUS_FORFEITED: "forfeited",
    record_pb2.MATCH_STATUS_VOIDED: "voided",
    record_pb2.MATCH_STATUS_ABORTED: "aborted",
}


REFRESH = '<meta name="arena-refresh" content="5">'
"""Asks ``app.js`` to reload the page's main content every 5 s."""


def esc(value: object) -> str:
    """``value`` as HTML text (quotes too: safe in attributes)."""
    return escape(str(value), quote=True)


def url(path: str, **query: object) -> str:
    """``path`` with the query parameters that are set (escaped for an attribute)."""
    kept = {k: str(v) for k, v in query.items() if v not in (None, "", 0)}
    return esc(path + ("?" + urlencode(kept) if kept else ""))


def seg(value: str) -> str:
    """``value`` as one path segment."""
    return quote(value, safe="")


def when(at_us: int) -> str:
    """A time in microseconds as UTC text in a ``<time>`` element (the script shows it in
    the reader's time zone)."""
    if not at_us:
        return ""
    seconds = at_us / 1e6
    text = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    return f'<time datetime="{iso}">{text}</time>'


def layout(title: str, body: str, *, active: str = "", head: str = "") -> str:
    """A whole page: the navigation, ``body`` and the shared style and script."""
    links = [
        ("/", "Ladders"),
        ("/tournaments", "Tournaments"),
        ("/live", "Live"),
        ("/operator", "Operator"),
    ]
    nav = "".join(
        f'<a href="{href}"{" aria-current=page" if href == active else ""}>{name}</a>'
        for href, name in links
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · Card Arena</title>"
        '<link rel="stylesheet" href="/static/style.css">'
        f'<script type="module" src="/static/app.js"></script>{head}</head>'
        f'<body><header><a class="brand" href="/">Card Arena</a><nav>{nav}</nav></header>'
        f"<main>{body}</main>"
        '<footer>Read-only views of this arena · <a href="/api/v1/openapi.json">JSON API</a>'
        "</footer></body></html>\n"
    )


def table(headers: Sequence[str], rows: Iterable[str], *, cls: str = "") -> str:
    """A table in a box that scrolls sideways on a narrow screen (the page never does)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join(rows) or f'<tr><td colspan="{len(headers)}" class="empty">none yet</td></tr>'
    return (
        f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def option_text(value: options_pb2.OptionValue) -> str:
    """An option's value as text."""
    kind = value.WhichOneof("value")
    if kind == "bool_value":
        return "yes" if value.bool_value else "no"
    return str(getattr(value, kind)) if kind else ""


def options_text(settings: options_pb2.GameSettings) -> str:
    """A game's options as ``name=value`` pairs."""
    return ", ".join(f"{k}={option_text(v)}" for k, v in sorted(settings.options.items()))


def ladder_link(ladder: pb.Ladder) -> str:
    return f'<a href="/ladders/{seg(ladder.config.name)}">{esc(ladder.config.name)}</a>'


def bot_link(bot_id: str, name: str) -> str:
    if not bot_id or bot_id.startswith("house"):
        return esc(name or "house bot")
    return f'<a href="/bots/{seg(bot_id)}">{esc(name)}</a>'


def match_link(match_id: str, text: str | None = None) -> str:
    return f'<a href="/matches/{seg(match_id)}">{esc(text or match_id[:12])}</a>'


def tournament_href(tournament_id: str, name: str) -> str:
    """A link to a tournament's page, named ``name``."""
    return f'<a href="/tournaments/{seg(tournament_id)}">{esc(name)}</a>'


def played_in(
    match: pb.ListedMatch,
    ladder_names: Mapping[str, str],
    tournament_names: Mapping[str, str],
) -> str:
    """What a match is played in: its tournament (linked), else its ladder's name, else its
    kind (a validation match)."""
    if match.tournament_id:
        name = tournament_names.get(match.tournament_id, match.tournament_id[:12])
        return f"{tournament_href(match.tournament_id, name)} (tournament)"
    return esc(ladder_names.get(match.ladder_id, match.kind))


# -- pages ---------------------------------------------------------------------------------------


def ladders_page(ladders: Sequence[pb.Ladder], in_flight: Mapping[str, int]) -> str:
    """``/``: every ladder with its game, options and counts."""
    rows = (
        f"<tr><td>{ladder_link(ladder)}</td><td>{esc(ladder.config.settings.game)}</td>"
        f"<td>{ladder.config.settings.num_seats}</td>"
        f'<td class="options">{esc(options_text(ladder.config.settings))}'
        f"{' · duplicate deals' if ladder.config.duplicate_deals else ''}</td>"
        f'<td class="num">{ladder.bots}</td>'
        f'<td class="num"><a href="/ladders/{seg(ladder.config.name)}/matches">'
        f"{ladder.matches_finished}</a></td>"
        f'<td class="num">{in_flight.get(ladder.ladder_id, 0)}</td></tr>'
        for ladder in ladders
    )
    body = (
        "<h1>Ladders</h1>"
        + table(
            ["Ladder", "Game", "Seats", "Options", "Entrants", "Matches played", "In flight"],
            rows,
        )
        + '<p class="hint">A bot is rated by μ − 3σ: its estimated skill μ less three times '
        "the uncertainty σ, which shrinks as it plays.</p>"
    )
    return layout("Ladders", body, active="/")


@dataclass(frozen=True)
class StandingsQuery:
    """A page of standings: where it starts, how long it is, the search."""

    offset: int = 0
    limit: int = 50
    search: str = ""


def _trend(value: float) -> str:
    if abs(value) < 0.005:
        return '<span class="flat">±0</span>'
    arrow, cls = ("▲", "up") if value > 0 else ("▼", "down")
    return f'<span class="{cls}">{arrow} {abs(value):.2f}</span>'


def standings_page(response: pb.GetStandingsResponse, query: StandingsQuery) -> str:
    """``/ladders/{ladder}``: one page of its standings, searchable."""
    ladder = response.ladder
    name = ladder.config.name
    rows = (
        f'<tr><td class="num">{s.position}</td><td>{bot_link(s.bot.bot_id, s.bot.name)}'
        f"{'' if s.bot.state == pb.BOT_STATE_ACTIVE else state_badge(s.bot.state)}</td>"
        f"<td>{esc(s.bot.owner)}</td><td class='num strong'>{s.rating:.2f}</td>"
        f'<td class="num">{s.mu:.2f}</td><td class="num">{s.sigma:.2f}</td>'
        f'<td class="num">{s.matches}</td><td class="num">{s.first_places}</td>'
        f'<td class="num">{s.fault_rate:.2f}</td><td class="num">{_trend(s.trend)}</td></tr>'
        for s in response.standings
    )
    base = f"/ladders/{seg(name)}"
    pages = _pager(base, query, response.found)
    found = (
        f"{response.found} of {response.total} bots match “{esc(query.search)}”"
        if query.search
        else f"{response.total} bots"
    )
    body = (
        f"<h1>{esc(name)}</h1>"
        f'<p class="sub">{esc(ladder.config.settings.game)}, '
        f"{ladder.config.settings.num_seats} seats · {found} · "
        f'<a href="{base}/matches">{ladder.matches_finished} matches played</a></p>'
        f'<form class="search" method="get" action="{base}" role="search">'
        f'<input type="search" name="q" value="{esc(query.search)}" maxlength="64" '
        'placeholder="Search bots or owners" aria-label="Search bots or owners">'
        '<button type="submit">Search</button></form>'
        + table(
            [
                "Rank",
                "Bot",
                "Owner",
                '<abbr title="displayed rating: μ − 3σ">Rating</abbr>',
                "μ",
                "σ",
                "Matches",
                "Firsts",
                '<abbr title="faults per 100 decisions">Faults</abbr>',
                '<abbr title="change of the rating over the last 10 matches">Trend</abbr>',
            ],
            rows,
            cls="standings",
        )
        + pages
    )
    return layout(name, body)


def _pager(base: str, query: StandingsQuery, found: int) -> str:
    if found <= query.limit:
        return ""
    last = (found - 1) // query.limit * query.limit
    previous = max(0, query.offset - query.limit)
    following = query.offset + query.limit
    parts = []
    if query.offset > 0:
        parts.append(f'<a href="{url(base, q=query.search)}">« first</a>')
        parts.append(
            f'<a rel="prev" href="{url(base, q=query.search, offset=previous)}">‹ previous</a>'
        )
    page = query.offset // query.limit + 1
    parts.append(f"<span>page {page} of {math.ceil(found / query.limit)}</span>")
    if following < found:
        parts.append(
            f'<a rel="next" href="{url(base, q=query.search, offset=following)}">next ›</a>'
        )
        parts.append(f'<a href="{url(base, q=query.search, offset=last)}">last »</a>')
    return f'<nav class="pager">{"".join(parts)}</nav>'


def state_badge(state: int) -> str:
    name, meaning = STATE_WORDS.get(state, ("unknown", ""))
    return f' <span class="badge {name}" title="{esc(meaning)}">{name}</span>'


def _seats_text(match: pb.ListedMatch, finished: bool) -> str:
    parts = []
    for seat in match.seats:
        result = ""
        if finished and not match.withheld and seat.rank:
            result = f' <span class="result">#{seat.rank} · {seat.score}</span>'
        parts.append(f"<li>{bot_link(seat.bot_id, seat.bot_name)}{result}</li>")
    return f'<ul class="seats">{"".join(parts)}</ul>'


def match_rows(
    matches: Iterable[pb.ListedMatch],
    ladder_names: Mapping[str, str],
    tournament_names: Mapping[str, str] | None = None,
) -> list[str]:
    """Table rows for listed matches (live first, as listed)."""
    rows = []
    for match in matches:
        live = match.phase == pb.MATCH_PHASE_PLAYING
        status = '<span class="badge live">live</span>' if live else STATUS_WORDS[match.status]
        if match.withheld:
            status += (
                ' <span class="badge" title="its duplicate set is not finished">withheld</span>'
            )
        ladder = played_in(match, ladder_names, tournament_names or {})
        rows.append(
            f"<tr><td>{match_link(match.match_id)}</td><td>{ladder}</td><td>{status}</td>"
            f"<td>{_seats_text(match, not live)}</td>"
            f"<td>{when(match.finished_at_us or match.started_at_us)}</td></tr>"
        )
    return rows


def matches_page(
    ladder: pb.Ladder,
    listed: pb.ListMatchesResponse,
    bot: pb.Bot | None,
    next_url: str,
) -> str:
    """``/ladders/{ladder}/matches``: live then finished, newest first, maybe for one bot."""
    name = ladder.config.name
    base = f"/ladders/{seg(name)}/matches"
    rows = match_rows(listed.matches, {ladder.ladder_id: name})
    filtered = (
        f' for {bot_link(bot.bot_id, bot.name)} · <a href="{base}">all bots</a>' if bot else ""
    )
    more = f'<nav class="pager"><a rel="next" href="{esc(next_url)}">older ›</a></nav>'
    body = (
        f'<h1>Matches of <a href="/ladders/{seg(name)}">{esc(name)}</a></h1>'
        f'<p class="sub">Live first, then finished, newest first{filtered}</p>'
        f'<form class="search" method="get" action="{base}">'
        f'<input name="bot" value="{esc(bot.bot_id if bot else "")}" maxlength="64" '
        'placeholder="Bot id (from its page)" aria-label="Bot id">'
        '<button type="submit">Filter</button></form>'
        + table(["Match", "Ladder", "Status", "Seats", "When"], rows, cls="matches")
        + (more if listed.next_page_token else "")
    )
    return layout(f"Matches of {name}", body)


def live_page(
    matches: Sequence[pb.ListedMatch],
    ladder_names: Mapping[str, str],
    tournament_names: Mapping[str, str] | None = None,
) -> str:
    """``/live``: the matches being played that may be watched (the caller leaves out the
    rotations whose moves are withheld), each linked to its live table."""
    body = (
        "<h1>Live</h1>"
        f'<p class="sub" data-live-count>{len(matches)} matches in play</p>'
        + table(
            ["Match", "Ladder or tournament", "Status", "Seats", "Started"],
            match_rows(matches, ladder_names, tournament_names),
            cls="matches live",
        )
    )
    return layout("Live", body, active="/live", head=REFRESH)


def _history_chart(points: Sequence[pb.RatingPoint], width: int = 640, height: int = 200) -> str:
    """The rating history as an inline SVG line (μ − 3σ per rated match, in order)."""
    if not points:
        return '<p class="empty">No rated match yet.</p>'
    values = [p.rating for p in points]
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    pad = 24
    step = (width - 2 * pad) / max(1, len(values) - 1)

    def y(value: float) -> float:
        return pad + (high - value) / (high - low) * (height - 2 * pad)

    coords = " ".join(f"{pad + i * step:.1f},{y(v):.1f}" for i, v in enumerate(values))
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="rating history: {len(values)} matches, from {values[0]:.2f} '
        f'to {values[-1]:.2f}" preserveAspectRatio="none">'
        f'<line x1="{pad}" y1="{y(high):.1f}" x2="{width - pad}" y2="{y(high):.1f}" class="grid"/>'
        f'<line x1="{pad}" y1="{y(low):.1f}" x2="{width - pad}" y2="{y(low):.1f}" class="grid"/>'
        f'<polyline points="{coords}"/></svg>'
        f'<p class="hint">{len(values)} rated matches · from {values[0]:.2f} to '
        f"{values[-1]:.2f} · lowest {min(values):.2f}, highest {max(values):.2f}</p>"
    )


def versions_table(versions: Sequence[pb.VersionFigures], ladder_names: Mapping[str, str]) -> str:
    """Every version's figures in each ladder (each version is rated as its own entry): the
    current version's first, then the replaced ones, latest replaced first."""
    rows = []
    for v in versions:
        ladder = ladder_names.get(v.ladder_id, v.ladder_id)
        status = "current" if v.current else f"replaced {when(v.replaced_at_us)}"
        mark = ' class="current"' if v.current else ""
        rows.append(
            f"<tr{mark}><td>{esc(v.version or '0')}</td>"
            f'<td><a href="/ladders/{seg(ladder)}">{esc(ladder)}</a></td>'
            f'<td class="num strong">{v.rating:.2f}</td><td class="num">{v.mu:.2f}</td>'
            f'<td class="num">{v.sigma:.2f}</td><td class="num">{v.matches}</td>'
            f'<td class="num">{v.first_places}</td><td>{status}</td></tr>'
        )
    return table(
        [
            "Version",
            "Ladder",
            '<abbr title="displayed rating: μ − 3σ">Rating</abbr>',
            "μ",
            "σ",
            "Matches",
            "Firsts",
            "Status",
        ],
        rows,
        cls="versions",
    )


def bot_page(profile: pb.GetBotProfileResponse, ladder_names: Mapping[str, str]) -> str:
    """``/bots/{bot}``: the bot's profile."""
    bot = profile.bot
    name, meaning = STATE_WORDS.get(bot.state, ("unknown", ""))
    detail = f" ({esc(bot.state_detail)})" if bot.state_detail else ""
    matches = []
    for m in profile.recent_matches:
        result = "withheld until its set ends" if m.withheld else f"#{m.rank} · {m.score}"
        matches.append(
            f"<tr><td>{match_link(m.match_id)}</td>"
            f"<td>{esc(ladder_names.get(m.ladder_id, m.ladder_id or 'validation'))}</td>"
            f"<td>{STATUS_WORDS.get(m.status, '')}</td><td>{m.seat}</td><td>{result}</td>"
            f'<td class="num">{m.faults}</td><td>{when(m.finished_at_us)}</td></tr>'
        )
    faults = [
        f'<tr><td>{esc(kind)}</td><td class="num">{count}</td></tr>'
        for kind, count in sorted(profile.faults.items())
    ]
    body = (
        f"<h1>{esc(bot.name)}</h1>"
        f'<p class="sub">by {esc(bot.owner)} · plays {esc(bot.game)} · version '
        f"{esc(bot.version or '0')}</p>"
        f'<p class="state">{state_badge(bot.state)} {esc(name)}: {esc(meaning)}{detail}</p>'
        '<section><h2>Rating history</h2><p class="hint">μ − 3σ after each rated match</p>'
        f"{_history_chart(profile.rating_history)}</section>"
        '<section><h2>Versions</h2><p class="hint">each version is rated as its own entry '
        "in each ladder</p>"
        f"{versions_table(profile.versions, ladder_names)}</section>"
        '<div class="cols"><section><h2>Latency</h2>'
        f"<dl><dt>p50</dt><dd>{profile.latency_p50_ms:.1f} ms</dd><dt>p95</dt>"
        f"<dd>{profile.latency_p95_ms:.1f} ms</dd><dt>decisions</dt><dd>{profile.moves}</dd>"
        "</dl></section>"
        f"<section><h2>Faults by kind</h2>{table(['Kind', 'Count'], faults)}</section></div>"
        "<section><h2>Recent matches</h2>"
        + table(["Match", "Ladder", "Status", "Seat", "Result", "Faults", "Finished"], matches)
        + "</section>"
    )
    return layout(bot.name, body)


def match_page(
    match_id: str,
    record: record_pb2.MatchRecord | None,
    listed: pb.ListedMatch,
    ladder_name: str,
    refusal: str = "",
) -> str:
    """``/matches/{id}``: the replay viewer of a finished match (``record``), the live table
    of one in play (no record), or why neither can be shown (``refusal``: a rotation of an
    unfinished duplicate set). Seats are named as the listing names them (the registered
    bots, linked); scores and ranks come from the record. ``ladder_name`` names what it is
    played in: its ladder, its tournament (a tournament match) or its kind."""
    live = record is None and not refusal
    if listed.tournament_id:
        ladder = f"{tournament_href(listed.tournament_id, ladder_name)} (tournament)"
    elif listed.ladder_id:
        ladder = f'<a href="/ladders/{seg(ladder_name)}/matches">{esc(ladder_name)}</a>'
    else:
        ladder = esc(ladder_name)
    versions = {s.seat: s.bot_version for s in record.seats} if record else {}
    scores = list(record.outcome.scores) if record else []
    ranks = list(record.outcome.ranks) if record else []

    def cell(values: Sequence[int], seat: int) -> str:
        return f'<td class="num">{values[seat] if seat < len(values) else ""}</td>'

    rows = [
        f"<tr><td>{s.seat}</td><td>{bot_link(s.bot_id, s.bot_name or 'house bot')}</td>"
        f"<td>{esc(s.owner)}</td><td>{esc(versions.get(s.seat, ''))}</td>"
        f"{cell(scores, s.seat)}{cell(ranks, s.seat)}</tr>"
        for s in listed.seats
    ]
    if record is not None:
        facts = (
            f"{esc(record.settings.game)} · {ladder} · {STATUS_WORDS.get(record.status, '')}: "
            f"{esc(record.status_detail)} · {len(record.moves)} moves · "
            f"{when(record.finished_at_us)}"
        )
    elif live:
        started = when(listed.started_at_us)
        facts = f'<span class="badge live">live</span> {ladder} · started {started}'
    else:
        facts = f"{ladder} · {esc(refusal)}"
    summary = f'<p class="sub">{facts}</p>' + table(
        ["Seat", "Bot", "Owner", "Version", "Score", "Rank"], rows, cls="result"
    )
    viewer = ""
    if not refusal:
        frames = f"/api/v1/matches/{seg(match_id)}/{'live' if live else 'frames'}"
        viewer = (
            f'<div id="table" class="table" data-frames="{esc(frames)}" '
            f'data-live="{"true" if live else "false"}"></div>'
            '<script type="module">'
            'import { mount } from "/static/replay/viewer.js";'
            'const el = document.getElementById("table");'
            'mount(el, el.dataset.frames, { live: el.dataset.live === "true" });'
            "</script>"
        )
    body = f"<h1>Match {esc(match_id[:12])}</h1>{summary}{viewer}"
    return layout(f"Match {match_id[:12]}", body)


def operator_page(panel: Panel) -> str:
    """``/operator``: the at-a-glance figures of this process."""
    fault_rows = [
        f'<tr><td>{esc(k)}</td><td class="num">{v}</td></tr>'
        for k, v in sorted(panel.faults_by_kind.items())
    ]
    tiles = [
        ("matches per minute", f"{panel.matches_per_minute:.1f}"),
        ("decisions per second", f"{panel.decisions_per_second:.1f}"),
        ("matches in flight", str(panel.matches_in_flight)),
        ("matches waiting", str(panel.matches_waiting)),
        ("bots active", str(panel.bots_active)),
        ("bots unhealthy", str(panel.bots_unhealthy)),
        ("matches parked", str(panel.matches_parked)),
        ("arena processes alive", str(panel.workers_alive)),
    ]
    tile_html = "".join(
        f'<div class="tile"><span class="value">{esc(v)}</span>'
        f'<span class="label">{esc(k)}</span></div>'
        for k, v in tiles
    )
    body = (
        "<h1>Operator</h1>"
        f'<p class="sub">This process, over the last {panel.window_s} s · Grafana keeps '
        "the long view</p>"
        f'<div class="tiles">{tile_html}</div>'
        f"<section><h2>Faults by kind (since start)</h2>{table(['Kind', 'Count'], fault_rows)}"
        "</section>"
    )
    return layout("Operator", body, active="/operator", head=REFRESH)


def error_page(status: int, detail: str) -> str:
    """A refusal, in the page's frame."""
    return layout(f"{status}", f"<h1>{status}</h1><p>{esc(detail)}</p>")
