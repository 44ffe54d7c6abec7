"""``benchmarks/winrate.py`` (the README recommends it; it runs for an hour) is never silent:
off a terminal it prints a progress line every N matches on stderr, and the result on stdout."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT


def test_winrate_prints_a_progress_line_every_n_matches() -> None:
    command = [
        sys.executable,
        "benchmarks/winrate.py",
        "--game",
        "klaberjass",
        "--bot",
        "random",
        "--matches",
        "6",
        "--every",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(": ")[1].split(" ")[0] for line in lines] == ["2/6", "4/6", "6/6"], lines
    assert all("first place" in line for line in lines)
    assert "6 matches: first place" in done.stdout
