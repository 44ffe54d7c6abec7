"""Screenshots of every web UI page at 1440 px and 390 px wide, for docs/screenshots/.

    python scripts/screenshots.py            # writes docs/screenshots/<page>-<width>.png

Runs the arena the web tests run (``tests/web_arena.py``: ``arena serve`` with its web UI and
real sample bots playing a quick Oh Hell ladder), waits for a few matches, and has Debian's
Chromium (``/usr/bin/chromium``) take each page at a desktop's and a phone's width. Run it
again after a change to the pages (or once the replay viewer is in) and commit the images.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.web_arena import CHROMIUM, CHROMIUM_ARGS, LADDER, WebArena, wait_for, web_arena

ROOT = Path(__file__).resolve().parents[1]
SIZES = {1440: 900, 390: 844}


def pages(arena: WebArena) -> dict[str, str]:
    """Each page's name and path (a finished match; the live table's is found later)."""
    finished = arena.json(f"/api/v1/ladders/{LADDER}/matches?phase=finished&page_size=1")
    shown = {
        "ladders": "/",
        "standings": f"/ladders/{LADDER}",
        "matches": f"/ladders/{LADDER}/matches",
        "bot": f"/bots/{arena.bot_ids['ann-oh-hell-heuristic']}",
        "match": f"/matches/{finished['matches'][0]['match_id']}",
        "live": "/live",
        "operator": "/operator",
    }
    shown["live-table"] = ""  # a match in play, picked just before its screenshot
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--matches", type=int, default=6, help="finished matches to wait for")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as scratch,
        web_arena(Path(scratch), args.matches) as arena,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        shown = pages(arena)
        for width, height in SIZES.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, path in shown.items():
                if name == "live-table":  # one the thinker plays: it lasts a few seconds
                    path = f"/matches/{wait_for(arena.live_match, what='a live match')}"
                page.goto(arena.url.rstrip("/") + path)
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(1500 if name == "live-table" else 300)
                target = args.out / f"{name}-{width}.png"
                page.screenshot(path=str(target))
                print(target.relative_to(ROOT))
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
