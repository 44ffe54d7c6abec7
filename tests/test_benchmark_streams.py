"""Smoke runs of the stream benchmarks (issue 20); no timing asserted, only that every variant
ran and exchanged messages."""

from __future__ import annotations

from pathlib import Path

from tests.test_benchmarks_smoke_b import run_quick


def test_stream_echo_quick_runs_both_variants(tmp_path: Path) -> None:
    stdout, result = run_quick("stream_echo.py", tmp_path)
    assert "stream ÷ unary" in stdout
    assert isinstance(result, dict)
    rows = {row["variant"]: row for row in result["rows"]}
    assert set(rows) == {"unary_echo", "stream_echo"}
    assert all(row["exchanges_per_s"] > 0 for row in rows.values())
