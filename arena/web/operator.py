"""The operator panel's figures: this process's own Prometheus metrics, sampled over a minute.

Counters give totals; the rates (matches per minute, decisions per second) come from samples a
background task takes every ``SAMPLE_S`` seconds, over the last ``WINDOW_S``. Gauges are read as
they are. Grafana stays the long-term view; this is the at-a-glance one, and shows only
aggregates (no bot or match is named).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import trio
from prometheus_client import Counter, Gauge

from arena.metrics import Metrics

SAMPLE_S = 5.0
WINDOW_S = 60.0


def total(metric: Counter | Gauge, suffix: str = "") -> float:
    """The sum of a metric's samples over every label (a counter's ``_total`` ones)."""
    return sum(
        sample.value
        for family in metric.collect()
        for sample in family.samples
        if sample.name.endswith(suffix)
    )


def by_label(metric: Counter, label: str) -> dict[str, float]:
    """A counter's totals by the value of ``label`` (summed over its other labels)."""
    sums: dict[str, float] = {}
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith("_total"):
                key = sample.labels.get(label, "")
                sums[key] = sums.get(key, 0.0) + sample.value
    return sums


@dataclass(frozen=True)
class Panel:
    """What ``/operator`` shows."""

    window_s: int
    matches_per_minute: float
    decisions_per_second: float
    matches_in_flight: int
    matches_waiting: int
    matches_parked: int
    bots_active: int
    bots_unhealthy: int
    workers_alive: int
    faults_by_kind: dict[str, int]


@dataclass
class OperatorView:
    """Samples ``metrics`` and builds the panel."""

    metrics: Metrics
    samples: deque[tuple[float, float, float]] = field(default_factory=lambda: deque())

    def sample(self) -> None:
        """Take one sample (time, matches finished, decisions) and drop the old ones."""
        now = time.monotonic()
        self.samples.append(
            (
                now,
                total(self.metrics.matches_finished, "_total"),
                total(self.metrics.decisions, "_total"),
            )
        )
        while len(self.samples) > 2 and now - self.samples[1][0] >= WINDOW_S:
            self.samples.popleft()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Sample every ``SAMPLE_S`` seconds until cancelled."""
        self.sample()
        task_status.started()
        while True:
            await trio.sleep(SAMPLE_S)
            self.sample()

    def panel(self, bots_active: int) -> Panel:
        """The figures now (``bots_active`` from the store)."""
        self.sample()
        first, last = self.samples[0], self.samples[-1]
        span = last[0] - first[0]

        def rate(i: int) -> float:
            return (last[i] - first[i]) / span if span > 0 else 0.0

        m = self.metrics
        return Panel(
            window_s=int(min(WINDOW_S, span)),
            matches_per_minute=60 * rate(1),
            decisions_per_second=rate(2),
            matches_in_flight=int(total(m.matches_in_flight)),
            matches_waiting=int(total(m.matches_waiting)),
            matches_parked=int(total(m.matches_parked)),
            bots_active=bots_active,
            bots_unhealthy=int(total(m.bots_pulled)),
            workers_alive=int(total(m.workers_alive)),
            faults_by_kind={k: int(v) for k, v in by_label(m.bot_faults, "kind").items()},
        )
