"""The replay viewer and live table in a real browser (Debian's Chromium, driven by Playwright).

A small HTTP server on a loopback port serves the viewer's static files, a page that mounts
it, frames JSON made from real match records, and a live event stream fed by the test. The
replays step to their end and must show the record's final scores; the live tables must never
hold, in any update of a whole match, a card that was hidden from spectators at that moment.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from arena.web.frames.common import CardNamer, Json
from arena.web.replay import LiveFeed, frames_for_record, namer_for, sse_message
from cardarena.arena.v1 import arena_service_pb2
from referee.codec.common import game_settings
from referee.codec.watch import public_move_event
from referee.games.registry import make_game
from referee.match import Match, MoveLog
from tests.test_replay_frames import hidden_names, played_match, record_of
from tests.web_arena import CHROMIUM_ARGS, chromium_or_skip

STATIC = Path(__file__).resolve().parent.parent / "arena" / "web" / "static"

CASES = [
    ("pinochle", 2, {"declare_out": "disabled"}),
    ("king", 4, {}),
    ("mau-mau", 3, {}),
    ("klaberjass", 2, {}),
    ("oh-hell", 4, {}),
]
"""One table of each game."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Replay</title>
<style>/* a page's own styles, as the arena's pages have */
th { background: #eef1ed; color: #5e6b66; } dt { color: #5e6b66; } td { color: #1d2321; }
</style></head>
<body><main id="replay"></main>
<script type="module">
import { mount } from "/static/replay/viewer.js";
const params = new URLSearchParams(location.search);
const main = document.getElementById("replay");
window.snapshots = [];
new MutationObserver(() => {
  const root = main.querySelector(".ca-replay");
  const board = main.querySelector(".ca-board");
  if (!root || !board) return;
  window.snapshots.push({
    count: Number(root.dataset.count || 0),
    live: root.dataset.live,
    cards: [...main.querySelectorAll("[data-card]")].map((node) => node.dataset.card),
    text: board.textContent,
  });
}).observe(main, { subtree: true, childList: true, attributes: true, characterData: true });
window.viewer = mount(main, params.get("frames"), { live: params.get("live") === "1" });
</script></body></html>
"""


class Site:
    """What the test server serves: frames documents and live streams, by name."""

    def __init__(self) -> None:
        self.documents: dict[str, Json] = {}
        self.streams: dict[str, queue.Queue[Json | str | None]] = {}
        """Messages to send: JSON for a ``LiveFeed`` message, text for a raw event."""


def handler_for(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def send(self, body: bytes, content_type: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = unquote(urlparse(self.path).path)
            if path == "/page":
                self.send(PAGE.encode(), "text/html; charset=utf-8")
            elif path.startswith("/static/replay/"):
                file = (STATIC / path.removeprefix("/static/")).resolve()
                if STATIC not in file.parents or not file.is_file():
                    self.send(b"not found", "text/plain", 404)
                    return
                kind = {".js": "text/javascript", ".css": "text/css"}[file.suffix]
                self.send(file.read_bytes(), f"{kind}; charset=utf-8")
            elif path.startswith("/frames/") and path[8:] in site.documents:
                self.send(json.dumps(site.documents[path[8:]]).encode(), "application/json")
            elif path.startswith("/live/") and path[6:] in site.streams:
                self.stream(site.streams[path[6:]])
            else:
                self.send(b"not found", "text/plain", 404)

        def stream(self, messages: queue.Queue[Json | str | None]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            while (message := messages.get(timeout=120)) is not None:
                raw = message if isinstance(message, str) else sse_message(message)
                self.wfile.write(raw.encode())
                self.wfile.flush()

    return Handler


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[Site, str]]:
    content = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(content))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield content, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        for stream in content.streams.values():
            stream.put(None)
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def open_viewer(browser: Any, url: str, frames: str, *, live: bool, width: int = 1440) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    page.goto(f"{url}/page?frames={frames}&live={int(live)}")
    return page


KEYED = 10
"""Moves stepped with the arrow key before the rest are stepped in the page."""

STEP_TO_END = """() => {
  const root = document.querySelector(".ca-replay");
  const next = document.querySelector("button[aria-label='Next move']");
  const steps = [];
  while (root.dataset.atEnd !== "true") {
    next.click();
    steps.push([Number(root.dataset.position), root.querySelector(".ca-move-text").textContent]);
  }
  return steps;
}"""


def displayed_totals(page: Any) -> list[int]:
    cells = page.locator(".ca-totals td[data-total-seat]")
    return [int(text) for text in cells.all_inner_texts()]


@pytest.mark.parametrize(("name", "seats", "options"), CASES)
def test_a_replay_steps_to_the_end_and_shows_the_recorded_scores(
    site: tuple[Site, str], browser: Any, name: str, seats: int, options: dict[str, object]
) -> None:
    content, url = site
    record = record_of(played_match(name, seats, options, 4), seats)
    replay = frames_for_record(record)
    content.documents[name] = replay
    page = open_viewer(browser, url, f"/frames/{name}", live=False)
    page.wait_for_selector(".ca-replay[data-ready=true]")
    total = len(record.moves) + 1  # the deal, then one position per move
    assert page.locator(".ca-replay").get_attribute("data-count") == str(total)
    page.locator(".ca-replay").focus()
    for step in range(1, KEYED + 1):
        page.keyboard.press("ArrowRight")
        assert page.locator(".ca-replay").get_attribute("data-position") == str(step)
    # The rest with the "Next move" button, in the page (a round trip per move is slow).
    steps = page.evaluate(STEP_TO_END)
    assert [position for position, _ in steps] == list(range(KEYED + 1, total))
    for (position, text), frame in zip(steps, replay["frames"][KEYED:], strict=True):
        assert text.startswith(f"Move {position} · Seat {frame['seat']} · bot-{frame['seat']} ")
    assert page.locator(".ca-replay").get_attribute("data-at-end") == "true"
    assert displayed_totals(page) == list(record.outcome.scores)
    page.keyboard.press("ArrowRight")  # stays on the last move
    assert page.locator(".ca-replay").get_attribute("data-position") == str(total - 1)
    # After the match every hand is face up.
    hands = page.locator(".ca-seat [data-card]").count()
    assert hands == sum(len(s["hand"]) for s in replay["frames"][-1]["table"]["seats"])
    # A fault and the move's time are shown; the scrubber and the back key move too.
    faulty = next(i for i, frame in enumerate(replay["frames"]) if frame["fault"])
    page.locator("input[type=range]").fill(str(faulty + 1))
    assert "illegal action" in page.locator(".ca-fault").inner_text()
    time_ms = replay["frames"][faulty]["time_ms"]
    assert f"{time_ms:.1f} ms" in page.locator(".ca-move-text").inner_text()
    page.locator(".ca-replay").focus()
    page.keyboard.press("ArrowLeft")
    assert page.locator(".ca-replay").get_attribute("data-position") == str(faulty)
    page.keyboard.press("Home")
    assert "the deal" in page.locator(".ca-move-text").inner_text()
    assert not page.errors
    page.close()


@pytest.mark.parametrize("width", [390, 1440])
def test_the_viewer_fits_a_phone_and_a_wide_screen(
    site: tuple[Site, str], browser: Any, width: int
) -> None:
    content, url = site
    wide: list[tuple[str, int, dict[str, object]]] = [
        ("oh-hell", 7, {}),
        ("pinochle", 2, {"declare_out": "disabled"}),
    ]
    for name, seats, options in wide:
        key = f"{name}-{seats}-wide"
        content.documents[key] = frames_for_record(
            record_of(played_match(name, seats, options, 6), seats)
        )
        page = open_viewer(browser, url, f"/frames/{key}", live=False, width=width)
        page.wait_for_selector(".ca-replay[data-ready=true]")
        for position in (0, 10, 40):
            page.evaluate(f"window.viewer.goTo({position})")
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{name} at {width} px scrolls sideways by {overflow} px"
        colours = page.locator(".ca-sheet th, .ca-sheet td, .ca-facts dt").evaluate_all(
            "nodes => nodes.map(node => getComputedStyle(node).color)"
        )
        assert set(colours) == {"rgb(255, 255, 255)"}, "the page's styles show through"
        labels = page.locator(".ca-controls button").evaluate_all(
            "nodes => nodes.map(node => node.getAttribute('aria-label'))"
        )
        assert labels == ["First move", "Previous move", "Play", "Next move", "Last move"]
        page.close()


class Recorder:
    """The spectator events of a match as it plays, and what was hidden after each."""

    def __init__(self, namer: CardNamer) -> None:
        self.namer = namer
        self.events: list[arena_service_pb2.MoveEvent] = []
        self.hidden: list[set[str]] = []

    def on_move(self, match: Match, move: MoveLog) -> None:
        event = public_move_event(match, move, len(self.events))
        if event is not None:
            self.events.append(event)
            self.hidden.append(hidden_names(match.state, self.namer))


def card_text(name: str) -> str:
    """How the viewer writes a card ("10♥")."""
    rank, suit = name[0], name[1]
    return ("10" if rank == "T" else rank) + {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[suit]


STEPPED = 5
"""Live moves sent one at a time, waiting for the table to show each, before the rest at once."""


@pytest.mark.parametrize(("name", "seats", "options"), CASES)
def test_a_live_table_never_holds_a_hidden_card_in_any_update(
    site: tuple[Site, str], browser: Any, name: str, seats: int, options: dict[str, object]
) -> None:
    content, url = site
    game = make_game(name, seats, options)
    recorder = Recorder(namer_for(game))
    match = played_match(name, seats, options, 8, on_move=recorder.on_move)
    record = record_of(match, seats)
    feed = LiveFeed(game_settings(game), match_id=record.match_id)
    stream: queue.Queue[Json | str | None] = queue.Queue()
    content.streams[name] = stream
    stream.put(feed.start())
    page = open_viewer(browser, url, f"/live/{name}", live=True)
    page.wait_for_selector(".ca-replay[data-live=true]")
    root = page.locator(".ca-replay")
    for index, event in enumerate(recorder.events):
        stream.put(feed.on_response(arena_service_pb2.WatchMatchResponse(move=event))[0])
        if index < STEPPED:
            page.wait_for_selector(f".ca-replay[data-count='{index + 1}']")
            assert root.get_attribute("data-at-end") == "true", "the live table follows the play"
    page.wait_for_selector(f".ca-replay[data-count='{len(recorder.events)}']", timeout=60_000)
    snapshots = page.evaluate("window.snapshots")
    seen = set()
    for snapshot in snapshots:
        count = snapshot["count"]
        if snapshot["live"] != "true" or not count:
            continue
        seen.add(count)
        hidden = recorder.hidden[count - 1]
        leaked = set(snapshot["cards"]) & hidden
        assert not leaked, f"update {count} ({recorder.events[count - 1].description}): {leaked}"
        if name != "pinochle":  # its two copies of a card read the same
            shown = [card for card in hidden if card_text(card) in snapshot["text"]]
            assert not shown, f"update {count} writes hidden cards {shown}"
    assert seen == set(range(1, len(recorder.events) + 1)), "an update was not observed"
    assert any(snapshot["cards"] for snapshot in snapshots), "no card was ever shown"
    # The end of the match: the whole replay replaces the live frames, hands face up.
    for message in feed.on_response(arena_service_pb2.WatchMatchResponse(finished=record)):
        stream.put(message)
    stream.put(None)
    page.wait_for_selector(".ca-replay[data-live=false][data-ended=true]")
    assert root.get_attribute("data-at-end") == "true"
    assert displayed_totals(page) == list(record.outcome.scores)
    page.evaluate("window.viewer.goTo(0)")  # the deal, every hand face up now
    dealt = frames_for_record(record)["start"]["seats"]
    assert page.locator(".ca-seat [data-card]").count() == sum(len(s["hand"]) for s in dealt)
    assert not page.errors
    page.close()


def bare_event(kind: str, data: Json) -> str:
    """A named server-sent event: the bare watch events a web app may relay as they come."""
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


def test_a_stream_of_bare_watch_events_shows_moves_then_the_replay(
    site: tuple[Site, str], browser: Any
) -> None:
    """Named ``move``/``finished`` events (MoveEvent's fields, then where the replay is): the
    viewer shows each move and the scores with every hand hidden, then loads the replay."""
    content, url = site
    name, seats = "oh-hell", 3
    game = make_game(name, seats)
    recorder = Recorder(namer_for(game))
    match = played_match(name, seats, {}, 12, on_move=recorder.on_move)
    record = record_of(match, seats)
    content.documents["bare"] = frames_for_record(record)
    stream: queue.Queue[Json | str | None] = queue.Queue()
    content.streams["bare"] = stream
    for event in recorder.events:
        fields = {
            "type": "move",
            "index": event.index,
            "seat": event.seat,
            "description": event.description,
            "defaulted": event.defaulted,
            "scores": list(event.scores),
        }
        stream.put(bare_event("move", fields))
    page = open_viewer(browser, url, "/live/bare", live=True)
    page.wait_for_selector(f".ca-replay[data-count='{len(recorder.events)}']", timeout=60_000)
    last = recorder.events[-1]
    assert displayed_totals(page) == list(last.scores)
    assert page.locator(".ca-move-text").inner_text().startswith(f"Move {last.index + 1} ")
    snapshots = page.evaluate("window.snapshots")
    assert not any(s["cards"] for s in snapshots if s["live"] == "true"), "a card while live"
    finished = {
        "type": "finished",
        "status": "MATCH_STATUS_COMPLETED",
        "frames_url": "/frames/bare",
    }
    stream.put(bare_event("finished", finished))
    stream.put(None)
    page.wait_for_selector(".ca-replay[data-live=false]")
    assert page.locator(".ca-replay").get_attribute("data-count") == str(len(record.moves) + 1)
    assert displayed_totals(page) == list(record.outcome.scores)
    assert not page.errors
    page.close()
