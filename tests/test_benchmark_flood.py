"""The registration-flood benchmark still runs: ``--quick`` exits 0, prints its table and writes
its figures (no timing is asserted: they depend on the machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_registration_flood_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "flood.json"
    command = [sys.executable, "benchmarks/registration_flood.py", "--quick", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ladder matches finished per" in done.stdout, done.stdout
    run = json.loads(out.read_text())["runs"]["this"]
    assert run["still_validating"] == 0, run
    assert len(run["before"]) == 1 and run["during"] and len(run["after"]) == 1, run
