"""The scale-out benchmark still runs: ``--quick`` exits 0, prints its table and writes figures
of the documented shape (no timing is asserted: they depend on the machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.stores import POSTGRES_ADMIN_URL, postgres_available

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


def test_scale_out_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "scale_out.json"
    command = [
        sys.executable,
        "benchmarks/scale_out.py",
        "--quick",
        "--json",
        str(out),
        "--database-url",
        POSTGRES_ADMIN_URL,
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "matches/s" in done.stdout, done.stdout
    figures = json.loads(out.read_text())
    assert set(figures["processes"]) == {"1", "2", "4"}
    assert all(rate > 0 for rate in figures["processes"].values()), figures["processes"]
    assert set(figures["ratio"]) == {"2", "4"}
    assert all(ratio > 0 for ratio in figures["ratio"].values()), figures["ratio"]
    assert set(figures["cpu"]) == {"1", "2", "4"}
    for count, cpu in figures["cpu"].items():
        assert len(cpu["arena_s"]) == int(count), cpu
        assert all(seconds > 0 for seconds in cpu["arena_s"].values()), cpu
        assert cpu["bots_s"] > 0 and cpu["postgres_s"] > 0, cpu
