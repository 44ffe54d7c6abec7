"""The web UI in a real browser (Debian's Chromium driven by Playwright) against a real
``arena serve`` with real sample bots playing: every page at a phone's 390 px and a desktop's
1440 px without sideways overflow and without script errors, the standings listing the bots
and searched as one types, a live table fed while a match plays without a hidden card."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from arena.web.app import STATIC
from arena.web.frames.common import wire_card_name
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.web_arena import CHROMIUM_ARGS, LADDER, WebArena, chromium_or_skip, wait_for, web_arena

WIDTHS = (390, 1440)
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9TJQKA])([CDHS♣♦♥♠])(?![A-Za-z])")
"""A card as text: "AD", "10H", "Q♠"."""
SUITS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


def cards_in(text: str) -> set[str]:
    """Every card named in ``text``, as rank and suit letter."""
    return {rank.replace("T", "10") + SUITS.get(suit, suit) for rank, suit in CARD.findall(text)}


def public_text(move: pb.MoveEvent) -> str:
    """What a spectator is told of a move: its description and the cards its public table
    shows face up (a trump or turn-up, the pile's top card)."""
    table = move.table
    shown = [wire_card_name(table.turn_up, copies=False)] if table.HasField("turn_up") else []
    if table.HasField("pile_top"):
        shown.append(wire_card_name(table.pile_top, copies=False))
    return " ".join([move.description, *(name for name in shown if name)])


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebArena, Any]]:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with web_arena(tmp_path_factory.mktemp("web-browser")) as arena, sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield arena, chromium
        finally:
            chromium.close()


def _pages(arena: WebArena) -> list[str]:
    finished = arena.json(f"/api/v1/ladders/{LADDER}/matches?phase=finished&page_size=1")
    return [
        "/",
        f"/ladders/{LADDER}",
        f"/ladders/{LADDER}/matches",
        f"/bots/{arena.bot_ids['ann-oh-hell-heuristic']}",
        f"/matches/{finished['matches'][0]['match_id']}",
        "/live",
        "/operator",
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_the_screen_without_script_errors(
    browser: tuple[WebArena, Any], width: int
) -> None:
    arena, chromium = browser
    page = chromium.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for path in _pages(arena):
        response = page.goto(arena.url.rstrip("/") + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
        assert page.evaluate(OVERFLOW) <= 0, f"{path} overflows sideways at {width} px"
        assert page.locator("main h1").is_visible(), path
    assert not errors, errors
    page.close()


def test_standings_list_the_bots_and_search_as_one_types(browser: tuple[WebArena, Any]) -> None:
    arena, chromium = browser
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{arena.url}ladders/{LADDER}")
    rows = page.locator("table.standings tbody tr")
    names = rows.locator("td:nth-child(2) a").all_inner_texts()
    assert sorted(names) == sorted(arena.bot_ids)
    ranks = rows.locator("td:nth-child(1)").all_inner_texts()
    assert ranks == [str(i) for i in range(1, len(arena.bot_ids) + 1)]
    page.locator("form.search input[type=search]").press_sequentially("heur", delay=30)
    page.wait_for_function(
        "document.querySelectorAll('table.standings tbody tr').length === 1", timeout=10_000
    )
    assert rows.locator("td:nth-child(2)").inner_text() == "ann-oh-hell-heuristic"
    assert "q=heur" in page.url, "the search is in the address, to share"
    page.locator("table.standings a").first.click()
    page.wait_for_url(re.compile(r"/bots/"))
    assert page.locator("h1").inner_text() == "ann-oh-hell-heuristic"
    page.close()


RECORDER = """
(() => {
  window.__messages = [];
  window.__snapshots = [];
  const Native = window.EventSource;
  window.EventSource = class extends Native {
    constructor(url, options) {
      super(url, options);
      this.addEventListener("message", (event) => window.__messages.push(JSON.parse(event.data)));
    }
  };
  const moves = () => {
    let count = 0;
    for (const message of window.__messages) {
      const live = message.type === "document" && message.document.live;
      if (live) count = message.document.frames.length;
      else if (message.type === "frame") count += 1;
      else if (message.type === "document") return -1;  // the whole replay: hands face up
    }
    return count;
  };
  const snap = () => {
    const table = document.getElementById("table");
    if (table) window.__snapshots.push([moves(), table.innerHTML]);
  };
  new MutationObserver(snap).observe(document, {
    subtree: true, childList: true, characterData: true, attributes: true,
  });
})();
"""
"""Records every message of the live table's event stream the page receives and the table's
HTML at every change, with how many public moves it had been sent by then (-1 once the whole
replay has come, at the end)."""


def test_a_live_table_updates_and_never_holds_a_hidden_card(
    browser: tuple[WebArena, Any],
) -> None:
    if not (STATIC / "replay" / "viewer.js").exists():
        pytest.skip("the replay viewer (arena/web/static/replay/viewer.js) is not in this tree")
    arena, chromium = browser
    match_id = wait_for(arena.live_match, what="a live match")
    watched: list[pb.WatchMatchResponse] = []
    watcher = threading.Thread(target=lambda: watched.extend(arena.client.watch(match_id)))
    watcher.start()
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(RECORDER)
    page.goto(f"{arena.url}matches/{match_id}")
    page.wait_for_function("window.__messages.some((m) => m.type === 'end')", timeout=120_000)
    watcher.join(60)
    moves = [public_text(e.move) for e in watched if e.HasField("move")]
    snapshots: list[list[Any]] = page.evaluate("window.__snapshots")
    during = [(count, html) for count, html in snapshots if count >= 0]
    assert len({html for _, html in during}) > 2, "the table changed while the match played"
    assert max(count for count, _ in during) == len(moves), "every public move was drawn"
    for count, html in during:
        public = cards_in(" ".join(moves[:count]))
        hidden = cards_in(html) - public  # text and attributes alike
        assert not hidden, f"after {count} public moves the table shows {sorted(hidden)}"
    assert cards_in(page.locator("#table").inner_html()), "the replay shows the hands at last"
    page.close()
