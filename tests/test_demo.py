"""The README's main job: ``arena demo`` runs a local ladder of sample bots to standings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_demo_plays_ladders_and_prints_standings(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "arena",
        "demo",
        "--game",
        "oh-hell",
        "--game",
        "klaberjass",
        "--matches",
        "2",
        "--workdir",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for ladder in ("oh-hell-demo", "klaberjass-demo"):
        assert ladder in done.stdout
    assert "Where to look next" in done.stdout
    assert "Web UI: http://127.0.0.1:" in done.stdout, "the demo says where its web UI is"
    assert "heuristic" in done.stdout, "each game's heuristic bot takes part"
    assert (tmp_path / "arena.sqlite3").exists()
    assert "Traceback" not in (tmp_path / "arena.log").read_text()
