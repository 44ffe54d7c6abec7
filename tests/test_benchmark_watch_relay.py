"""The relayed-watch benchmark still runs: ``--quick`` exits 0, prints its figures and writes
them, every relayed stream equal to the local one (no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.stores import postgres_available

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)


def test_watch_relay_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "relay.json"
    command = [sys.executable, "benchmarks/watch_relay.py", "--quick", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "added delay: median" in done.stdout, done.stdout
    figures = json.loads(out.read_text())["figures"]
    assert figures["matches"] == 2 and figures["moves"] > 0, figures
