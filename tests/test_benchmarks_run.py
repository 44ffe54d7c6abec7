"""The referee benchmarks still run: each script in ``--quick`` mode exits 0 and prints its table.

No timing is asserted (figures depend on the machine); the three scripts start together so the
smoke run stays short.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.helpers import ROOT

SCRIPTS = {
    "decision_cost": "+observe",
    "referee": "× echo",
    "concurrency": "× ideal",
}


@pytest.fixture(scope="module")
def quick_runs() -> Iterator[dict[str, subprocess.Popen[str]]]:
    runs = {
        name: subprocess.Popen(
            [sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), "--quick"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for name in SCRIPTS
    }
    try:
        yield runs
    finally:
        for process in runs.values():
            if process.poll() is None:
                process.kill()
            process.communicate()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_benchmark_runs_in_quick_mode(
    quick_runs: dict[str, subprocess.Popen[str]], name: str
) -> None:
    stdout, stderr = quick_runs[name].communicate(timeout=120)
    assert quick_runs[name].returncode == 0, stderr[-3000:]
    assert SCRIPTS[name] in stdout, stdout
    table = [line for line in stdout.splitlines() if line.strip()]
    assert len(table) >= 3, stdout
