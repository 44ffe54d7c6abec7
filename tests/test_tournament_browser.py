"""A served tournament's pages in a real browser (Chromium driven by Playwright), as
``tests/test_web_browser.py`` checks the other pages: at a phone's and a desktop's width
without sideways overflow or script errors, the crosstable's not-significant cells shaded
apart from the significant ones and the downloads linked."""

from __future__ import annotations

from pathlib import Path

from arena.local_bots import start_bot, stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.test_tournament_service import config, register, served, tournament
from tests.test_web_browser import OVERFLOW, WIDTHS
from tests.web_arena import CHROMIUM_ARGS, chromium_or_skip, wait_for

BACKGROUND = "(cls) => getComputedStyle(document.querySelector('td.' + cls)).backgroundColor"


def test_the_crosstable_pages_render_and_shade_what_is_not_significant(tmp_path: Path) -> None:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    bots = [start_bot("random", seed=1), start_bot("random", seed=2)]
    bots.append(start_bot("klaberjass-heuristic", seed=3))
    try:
        with served(tmp_path) as arena, sync_playwright() as pw:
            ids = register(arena, bots)
            arena.client.call(
                "CreateTournament", pb.CreateTournamentRequest(config=config("rr", ids, 1))
            )
            done = wait_for(
                lambda: (t := tournament(arena, "rr")).state == pb.TOURNAMENT_STATE_FINISHED and t,
                180,
                "the round robin finished",
            )
            chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            errors: list[str] = []
            try:
                for width in WIDTHS:
                    page = chromium.new_page(viewport={"width": width, "height": 900})
                    page.on("pageerror", lambda error: errors.append(str(error)))
                    for path in ("/tournaments", f"/tournaments/{done.tournament_id}"):
                        response = page.goto(arena.url.rstrip("/") + path)
                        assert response is not None and response.status == 200, path
                        page.wait_for_load_state("networkidle")
                        assert page.evaluate(OVERFLOW) <= 0, f"{path} overflows at {width} px"
                    shown = page.locator("table.crosstable td.ns").count()
                    assert shown == len(done.pairings) >= 4, "every pairing, none significant"
                    shaded = page.evaluate(BACKGROUND, "ns")
                    assert shaded not in ("rgba(0, 0, 0, 0)", "transparent"), "shaded"
                    assert shaded != page.evaluate(BACKGROUND, "self")
                    rows = page.locator("table.crosstable tbody tr")
                    assert rows.count() == 3
                    assert page.locator("a[download]").count() == 2
                    page.click("text=Tournaments")
                    page.wait_for_load_state("networkidle")
                    assert page.url.endswith("/tournaments")
                    assert errors == [], errors
                    page.close()
            finally:
                chromium.close()
    finally:
        for bot in bots:
            stop_bot(bot.process)
