"""The benchmark suite's one command still runs and writes its table (no timing assertion)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_run_all_quick_writes_one_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    command = [
        sys.executable,
        "benchmarks/run_all.py",
        "--quick",
        "--only",
        "engine",
        "--only",
        "ladder",
        "--json",
        str(out),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Card Arena benchmarks" in done.stdout
    summary = json.loads(out.read_text())
    areas = {figure["area"] for figure in summary["figures"]}
    assert areas == {"engine", "ladder"}
    assert all(figure["ratio"] is None or figure["ratio"] > 0 for figure in summary["figures"])
