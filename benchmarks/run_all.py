"""The whole benchmark suite: one command, one table, one JSON file.

    python benchmarks/run_all.py                 # the full suite (about 13 minutes on 2 cores)
    python benchmarks/run_all.py --quick         # a smoke run: checks every script still works

The full suite's scale_out.py needs a PostgreSQL server (127.0.0.1:5432 by default). Runs every
benchmark script as its own process (so one's threads and memory never skew
another's), reads the JSON each writes, and prints one table of headline figures: each with the
baseline it was measured against in the same run, the ratio, and the target. The machine is
shared and noisy: compare ratios across runs, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Figure:
    """One headline figure of the suite."""

    area: str
    what: str
    value: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None


Extractor = Callable[[Any], list[Figure]]


def _engine(rows: list[dict[str, Any]]) -> list[Figure]:
    base = rows[0]["us_per_decision"]
    figures = []
    for row in rows[1:]:
        figures.append(
            Figure(
                "engine",
                f"{row['game']}: µs per decision",
                f"{row['us_per_decision']:.2f}",
                f"{base:.2f} (naive Python)",
                row["ratio"],
                "≤ 1.5 µs",
                row["us_per_decision"] <= 1.5,
            )
        )
        # Decision kinds with a target of their own (Pinochle's card play, issue 4).
        for kind in row.get("kinds", ()):
            if kind["target_us"] is not None:
                figures.append(
                    Figure(
                        "engine",
                        f"{row['game']}, {kind['kind']}: µs per decision",
                        f"{kind['us_per_decision']:.2f}",
                        f"{base:.2f} (naive Python)",
                        kind["ratio"],
                        f"≤ {kind['target_us']} µs",
                        kind["us_per_decision"] <= kind["target_us"],
                    )
                )
    return figures


def _openspiel(data: dict[str, Any]) -> list[Figure]:
    rows = {row["engine"]: row for row in data["rows"]}
    figures = []
    for ours, theirs in (
        ("ours oh-hell 4p", "OpenSpiel oh_hell 4p, Python loop"),
        ("ours mau-mau 4p", "OpenSpiel crazy_eights 4p, Python loop"),
    ):
        if ours in rows and theirs in rows:
            mine, other = rows[ours]["us_per_decision"], rows[theirs]["us_per_decision"]
            figures.append(
                Figure(
                    "engine",
                    f"{ours} vs {theirs}: µs per decision",
                    f"{mine:.2f}",
                    f"{other:.2f}",
                    mine / other,
                    "faster (ratio < 1) on Oh Hell",
                    mine < other if "oh-hell" in ours else None,
                )
            )
    if not figures:
        figures.append(
            Figure(
                "engine",
                "OpenSpiel comparison",
                "skipped",
                "-",
                None,
                "pip install '.[bench]'",
                None,
            )
        )
    return figures


def _decision_cost(rows: list[dict[str, Any]]) -> list[Figure]:
    return [
        Figure(
            "observation",
            f"{row['game']}: engine + observation + encoding, µs per decision"
            f" (+ {row['setup_us_per_match']:.0f} µs per match)",
            f"{row['per_decision_us']:.1f}",
            f"{row['baseline_us']:.2f} (serialize)",
            row["ratio_to_baseline"],
            "≤ 10 µs",
            row["per_decision_us"] <= 10,
        )
        for row in rows
    ]


def _referee(data: dict[str, Any]) -> list[Figure]:
    rows = {row["variant"]: row for row in data["rows"]}
    echo = rows["raw grpc.aio echo"]["calls_per_s"]
    figures = []
    for variant in ("referee", "referee + metrics"):
        if variant in rows:
            row = rows[variant]
            figures.append(
                Figure(
                    "referee",
                    f"{variant}: decisions per second",
                    f"{row['calls_per_s']:.0f}",
                    f"{echo:.0f} (raw grpc.aio echo)",
                    row["ratio_to_echo"],
                    "≥ 0.8 × echo",
                    row["ratio_to_echo"] >= 0.8,
                )
            )
    for variant in ("referee, streams in", "referee, streams out"):  # issue 20
        if variant in rows and "referee" in rows:
            row, unary = rows[variant], rows["referee"]["calls_per_s"]
            figures.append(
                Figure(
                    "referee",
                    f"{variant}: decisions per second",
                    f"{row['calls_per_s']:.0f}",
                    f"{unary:.0f} (unary referee)",
                    row["calls_per_s"] / unary,
                    f"≥ 2.5 × unary; {row['ratio_to_echo']:.2f} × stream echo (≥ 0.8)",
                    row["calls_per_s"] / unary >= 2.5 and row["ratio_to_echo"] >= 0.8,
                )
            )
    if "referee" in rows and "referee + metrics" in rows:
        plain = rows["referee"]["client_us_per_call"]
        metered = rows["referee + metrics"]["client_us_per_call"]
        figures.append(
            Figure(
                "referee",
                "metrics on vs off: client µs per decision",
                f"{metered:.1f}",
                f"{plain:.1f}",
                metered / plain,
                "< 1.05",
                metered / plain < 1.05,
            )
        )
    return figures


def _concurrency(data: dict[str, Any]) -> list[Figure]:
    rows = data["rows"]
    figures = [
        Figure(
            "concurrency",
            f"{row['in_flight']} in flight: decisions/s",
            f"{row['decisions_per_s']:.0f}",
            f"{row['ideal_per_s']:.0f} ideal",
            row["ratio_to_ideal"],
            "≥ 0.9 × ideal until the core is busy",
            row["ratio_to_ideal"] >= 0.9 or row["referee_core_load"] > 0.9,
        )
        for row in rows
    ]
    # RSS per match at a low level is mostly the process's fixed cost spread thin: judge the
    # memory a match adds, between the two largest levels measured.
    if len(rows) >= 2:
        small, large = rows[-2], rows[-1]
        added = (
            large["kb_per_match"] * large["in_flight"] - small["kb_per_match"] * small["in_flight"]
        )
        marginal = added / (large["in_flight"] - small["in_flight"])
        figures.append(
            Figure(
                "concurrency",
                f"memory a match adds, {small['in_flight']} → {large['in_flight']} in flight, KB",
                f"{marginal:.0f}",
                f"{large['kb_per_match']:.0f} (RSS / matches)",
                None,
                "≤ 64 KB",
                marginal <= 64,
            )
        )
    return figures


def _ladder(data: dict[str, Any]) -> list[Figure]:
    return [
        Figure(
            "ladder",
            f"{data['bots']} bots, {data['database']}: ms per finished match",
            f"{data['ms_per_match']:.2f}",
            f"{data['baseline_ms']:.3f} (INSERT+COMMIT)",
            data["ratio"],
            "≤ 1 ms",
            data["ms_per_match"] <= 1,
        )
    ]


def _scale_out(data: dict[str, Any]) -> list[Figure]:
    one = data["processes"]["1"]
    targets = {"2": 1.9, "4": 3.6}
    return [
        Figure(
            "scale-out",
            f"{count} arena processes on PostgreSQL: matches/s",
            f"{data['processes'][count]:.2f}",
            f"{one:.2f} (one process)",
            data["ratio"][count],
            f"≥ {target}×",
            data["ratio"][count] >= target,
        )
        for count, target in targets.items()
    ]


def _fairness(result: dict[str, Any]) -> list[Figure]:
    labels = {"games": "close bots", "vs_random": "heuristic > random"}
    return [
        Figure(
            "fairness",
            f"{game}: matches to rank {labels[section]} (95 %)",
            f"{row['duplicate']} duplicate",
            f"{row['plain']} plain",
            row["duplicate_over_plain"],
            "fewer with duplicate deals",
            None,
        )
        for section in ("games", "vs_random")
        for game, row in result.get(section, {}).items()
    ]


def _stream_echo(data: dict[str, Any]) -> list[Figure]:
    rows = {row["variant"]: row for row in data["rows"]}
    unary, stream = rows["unary_echo"], rows["stream_echo"]
    return [
        Figure(
            "transport",
            "raw echo over open streams: exchanges per second",
            f"{stream['exchanges_per_s']:.0f}",
            f"{unary['exchanges_per_s']:.0f} (a unary call each)",
            data["stream_over_unary"],
            "sets the streaming referee's target (issue 20)",
            None,
        )
    ]


BENCHMARKS: list[tuple[str, list[str], list[str] | None, Extractor]] = [
    ("engine.py", [], ["--quick"], _engine),
    ("openspiel_compare.py", [], ["--quick"], _openspiel),
    ("decision_cost.py", [], ["--quick"], _decision_cost),
    ("stream_echo.py", [], ["--quick"], _stream_echo),
    ("referee.py", [], ["--quick"], _referee),
    # The service runs with this collector threshold (arena/cli_service.py), so measure that.
    ("concurrency.py", ["--gc-threshold", "50000"], ["--quick"], _concurrency),
    ("ladder.py", [], ["--quick"], _ladder),
    ("fairness.py", ["--runs", "21"], ["--quick"], _fairness),
    # Needs PostgreSQL; its --quick smoke run is tests/test_benchmark_scale_out.py's.
    ("scale_out.py", [], None, _scale_out),
]
"""Each script: its arguments in a full run, in a quick one (None: full runs only), and how
its JSON becomes figures."""


def run(quick: bool, only: list[str] | None) -> tuple[list[Figure], dict[str, Any]]:
    """Run the benchmarks; return the figures and the raw results by script."""
    figures: list[Figure] = []
    raw: dict[str, Any] = {}
    console = Console(stderr=True)
    with tempfile.TemporaryDirectory() as scratch:
        for script, full_args, quick_args, extract in BENCHMARKS:
            if only and script.removesuffix(".py") not in only:
                continue
            if quick and quick_args is None:
                continue
            out = Path(scratch) / f"{script}.json"
            command = [
                sys.executable,
                str(HERE / script),
                *(quick_args if quick and quick_args is not None else full_args),
                "--json",
                str(out),
            ]
            console.print(f"[bold]running[/] {' '.join(command[1:])}")
            started = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True)
            took = time.monotonic() - started
            if done.returncode != 0:
                console.print(f"[red]{script} failed ({done.returncode})[/]\n{done.stderr[-2000:]}")
                raw[script] = {"error": done.stderr[-2000:], "seconds": took}
                figures.append(
                    Figure(script.removesuffix(".py"), "failed", "-", "-", None, "-", False)
                )
                continue
            data = json.loads(out.read_text())
            raw[script] = {"result": data, "seconds": took, "stdout": done.stdout}
            figures.extend(extract(data))
    return figures, raw


def table(figures: list[Figure]) -> Table:
    """The suite's one table."""
    result = Table(title="Card Arena benchmarks (ratios measured within this run)")
    for column in ("area", "figure", "value", "baseline", "ratio", "target", "met"):
        result.add_column(column, justify="right" if column in ("value", "ratio") else "left")
    for figure in figures:
        met = {True: "yes", False: "[red]no[/]", None: "-"}[figure.met]
        ratio = f"{figure.ratio:.2f}" if figure.ratio is not None else "-"
        cells = (figure.area, figure.what, figure.value, figure.baseline, ratio, figure.target)
        result.add_row(*(escape(text) for text in cells), met)
    return result


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run of every script")
    parser.add_argument("--only", action="append", help="run only this script (repeatable)")
    parser.add_argument("--json", type=Path, default=Path("bench-results/latest.json"))
    args = parser.parse_args()
    started = time.monotonic()
    figures, raw = run(args.quick, args.only)
    Console(width=None if sys.stdout.isatty() else 160).print(table(figures))
    summary = {
        "quick": args.quick,
        "seconds": time.monotonic() - started,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load": os.getloadavg(),
        },
        "figures": [asdict(figure) for figure in figures],
        "benchmarks": raw,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2))
    print(f"suite took {summary['seconds']:.0f} s; results written to {args.json}")
    if any(figure.what == "failed" for figure in figures):
        sys.exit(1)


if __name__ == "__main__":
    main()
