"""Smoke runs of the fairness, ladder and OpenSpiel-comparison benchmarks (no timing asserted).

Each script runs with ``--quick`` as a subprocess and must exit 0 and print its table; the
figures themselves are for people reading benchmark output, never for assertions here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from arena.duplicate_scoring import Rotation
from arena.ratings import Rating
from benchmarks.fairness import STRONG, WEAK, Played, rate_mode
from tests.stores import POSTGRES_ADMIN_URL, postgres_available

ROOT = Path(__file__).resolve().parent.parent


def run_quick(script: str, tmp_path: Path, *extra: str) -> tuple[str, object]:
    """Run ``benchmarks/<script> --quick --json``; return its output and parsed JSON."""
    out = tmp_path / "result.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", "--json", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout, json.loads(out.read_text())


def test_fairness_quick_prints_plain_and_duplicate(tmp_path: Path) -> None:
    stdout, result = run_quick("fairness.py", tmp_path)
    assert "plain" in stdout and "duplicate" in stdout
    assert isinstance(result, dict) and result["games"] and result["vs_random"]
    for row in [*result["games"].values(), *result["vs_random"].values()]:
        assert row["plain"] > 0 and row["duplicate"] > 0
        assert row["duplicate_over_plain"] == pytest.approx(row["duplicate"] / row["plain"], 0.01)
        assert 0.0 <= row["head_to_head"] <= 1.0


@pytest.mark.parametrize("weak", ["restyled", "noisy"])
def test_fairness_quick_with_either_weak_bot(tmp_path: Path, weak: str) -> None:
    """Pinochle has a restyled weak bot (a deterministic worse choice); ``--weak noisy`` swaps
    in the ε-random one, as King (no restyled bot) always has."""
    games = ["--game", "pinochle", "--game", "king", "--no-random", "--weak", weak]
    _, result = run_quick("fairness.py", tmp_path, *games)
    assert isinstance(result, dict)
    kinds = {game: row["weak"] for game, row in result["games"].items()}
    assert kinds == {"pinochle": weak, "king": "noisy"}
    assert all(row["duplicate"] > 0 for row in result["games"].values())


def test_fairness_quick_at_two_seats_with_chosen_weights(tmp_path: Path) -> None:
    """``--seats 2 --mau-mau-weights``: the chosen weak bot plays the close row, and the
    vs-random row (whose bots have the close row's names at 2 seats) plays its own matches
    rather than the close row's from the cache."""
    cache = tmp_path / "cache.json"
    weights = "jack_keep=0,cover=-100"
    extra = ["--game", "mau-mau", "--seats", "2", "--mau-mau-weights", weights]
    _, result = run_quick("fairness.py", tmp_path, *extra, "--cache", str(cache))
    assert isinstance(result, dict)
    assert result["games"]["mau-mau"]["detail"]["game"] == "mau-mau 2p"
    tags = {key.split(":")[1] for key in json.loads(cache.read_text())}
    assert tags == {f"restyled/{weights}", "vs-random"}


def test_fairness_quick_rates_by_the_chosen_tau(tmp_path: Path) -> None:
    """``--tau 0`` rates by PlackettLuce(tau=0) and says so; without it, the ladder's rating."""
    _, result = run_quick("fairness.py", tmp_path, "--game", "king", "--no-random", "--tau", "0")
    assert isinstance(result, dict)
    assert (result["rating"], result["tau"]) == ("PlackettLuce(tau=0)", 0.0)
    _, ladder = run_quick("fairness.py", tmp_path, "--game", "king", "--no-random")
    assert isinstance(ladder, dict)
    assert (ladder["rating"], ladder["tau"]) == ("ladder", pytest.approx(25 / 300))
    seats = (STRONG, WEAK)
    results = [
        Played(Rotation(seats, (1, 2), (10.0, 0.0)), (), (0.0, 0.0)),
        Played(Rotation(seats[::-1], (1, 2), (20.0, 0.0)), (), (0.0, 0.0)),
    ]
    start = {STRONG: Rating(), WEAK: Rating()}
    for mode in ("plain", "duplicate"):
        default = rate_mode(start, results, mode)
        no_tau = rate_mode(start, results, mode, PlackettLuce(tau=0))
        assert no_tau[STRONG].sigma < default[STRONG].sigma, mode


def test_ladder_quick_on_sqlite(tmp_path: Path) -> None:
    stdout, result = run_quick("ladder.py", tmp_path)
    assert "total per finished match" in stdout and "baseline" in stdout
    assert isinstance(result, dict) and result["matches"] > 0


def test_ladder_quick_on_postgres(tmp_path: Path) -> None:
    if not postgres_available():
        pytest.skip("no PostgreSQL server reachable")
    stdout, result = run_quick("ladder.py", tmp_path, "--database-url", POSTGRES_ADMIN_URL)
    assert isinstance(result, dict) and result["database"] == "postgresql"
    assert "total per finished match" in stdout


def test_openspiel_compare_quick(tmp_path: Path) -> None:
    stdout, result = run_quick("openspiel_compare.py", tmp_path)
    assert isinstance(result, dict)
    engines = [row["engine"] for row in result["rows"]]
    assert any(e.startswith("ours oh-hell") for e in engines)
    if importlib.util.find_spec("pyspiel") is None:
        assert "not installed" in stdout, "OpenSpiel rows are skipped with a note"
    else:
        assert any(e.startswith("OpenSpiel oh_hell") for e in engines)
