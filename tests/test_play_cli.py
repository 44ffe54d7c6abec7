"""``arena play``: local matches against sample bots, a results table, a CI-friendly exit code."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, misbehaving_bot, random_bots


def play(address: str, records: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "arena",
        "play",
        "--game",
        "oh-hell",
        "--bot",
        f"mine={address}",
        "--vs",
        "random",
        "--games",
        "3",
        "--seats",
        "3",
        "--records",
        str(records),
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=180)


def test_a_clean_bot_gets_results_latencies_records_and_exit_zero(tmp_path: Path) -> None:
    with random_bots(1, seed=3) as bots:
        result = play(bots[0].address, tmp_path / "records")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mine" in result.stdout and "p50" in result.stdout
    assert "without a fault" in result.stdout
    assert len(list((tmp_path / "records").glob("*.bin"))) == 3


def test_a_faulting_bot_fails_the_run(tmp_path: Path) -> None:
    with misbehaving_bot("illegal", "--after", "4", "--times", "1") as bad:
        result = play(bad.address, tmp_path / "records")
    assert result.returncode == 1
    assert "faulted" in result.stdout and "illegal_action" in result.stdout


def test_a_bot_nobody_listens_for_fails_the_run_and_says_why(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: no one listens there
        probe.bind(("127.0.0.1", 0))
        nobody = f"127.0.0.1:{probe.getsockname()[1]}"
    result = play(nobody, tmp_path / "records")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "without a fault" not in result.stdout
    assert "matches not played: voided: unreachable" in " ".join(result.stdout.split())
