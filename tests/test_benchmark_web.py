"""benchmarks/web.py still runs: ``--quick`` exits 0, every page it times answered 200 (the
frames 200 with the replay viewer), and each figure has its ratio to the hello baseline. No
timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_the_web_benchmark_runs_and_times_every_page(tmp_path: Path) -> None:
    out = tmp_path / "web.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "web.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(out.read_text())
    served = result["served"]
    assert len(served) == 7 and result["match_moves"] > 50, "a long match, every page"
    for name, figures in served.items():
        assert figures["status"] == 200, (name, figures)
        assert figures["ms"] > 0 and figures["ratio"] > 0
    assert "hello (baseline)" in done.stdout and "standings, search" in done.stdout
