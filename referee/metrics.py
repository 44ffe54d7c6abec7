"""The referee's Prometheus metrics: matches played and the bot calls in them (what
``referee.runner`` counts). The arena's own (ladders, matchmaking, validation, health sweeps,
leases, workers, the store) are in ``arena.metrics``, whose ``Metrics`` adds them to these.

Names follow the Prometheus naming guide: one prefix (``cardarena_``), base units in the name,
counters ending in ``_total``. Labels take values from small fixed sets (games, outcomes, fault
kinds, operations) and are pre-initialised so dashboards see zeros; never a bot, owner or match
id (per-bot figures belong to the arena API). Tests build metrics on their own
``CollectorRegistry``; the service uses the default registry, which also carries the client
library's process and platform metrics.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from referee.match import FaultKind

PREFIX = "cardarena"

OUTCOMES = ("completed", "forfeited", "voided", "aborted")
FAULT_KINDS = tuple(kind.name.lower() for kind in FaultKind)
"""Fault labels: ``FaultKind``'s names, the one definition (the wire enum is tied to it by
``tests/test_faults.py``)."""
CALL_RESULTS = ("ok", *FAULT_KINDS)

# Buckets bracket typical move deadlines (100 ms … 10 s) with room below for fast bots.
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
MATCH_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


class MatchMetrics:
    """The referee's metrics (matches and the bot calls in them), registered on ``registry``
    with every label value pre-initialised."""

    def __init__(self, games: Iterable[str], registry: CollectorRegistry = REGISTRY) -> None:
        games = tuple(games)
        self.matches_started = Counter(
            f"{PREFIX}_matches_started",
            "Matches whose first move was requested (or that were voided at the start).",
            ["game"],
            registry=registry,
        )
        self.matches_finished = Counter(
            f"{PREFIX}_matches_finished",
            "Matches that ended, by how they ended.",
            ["game", "outcome"],
            registry=registry,
        )
        self.match_duration = Histogram(
            f"{PREFIX}_match_duration_seconds",
            "Wall-clock time from a match's start to its end.",
            ["game"],
            buckets=MATCH_BUCKETS,
            registry=registry,
        )
        self.matches_in_flight = Gauge(
            f"{PREFIX}_matches_in_flight",
            "Matches being played right now by this process.",
            ["game"],
            registry=registry,
        )
        self.decisions = Counter(
            f"{PREFIX}_decisions",
            "Decisions played (a bot's answer or a default after a fault).",
            ["game"],
            registry=registry,
        )
        self.bot_call_duration = Histogram(
            f"{PREFIX}_bot_call_duration_seconds",
            "Round trip of ChooseAction calls to bots, by how the call ended.",
            ["game", "result"],
            buckets=CALL_BUCKETS,
            registry=registry,
        )
        self.bot_faults = Counter(
            f"{PREFIX}_bot_faults",
            "Bot faults, by kind.",
            ["game", "kind"],
            registry=registry,
        )
        self.forfeits = Counter(
            f"{PREFIX}_forfeits",
            "Matches ended by a bot reaching the fault limit.",
            ["game"],
            registry=registry,
        )
        for game in games:
            for metric in (
                self.matches_started,
                self.match_duration,
                self.matches_in_flight,
                self.decisions,
                self.forfeits,
            ):
                metric.labels(game)
            for outcome in OUTCOMES:
                self.matches_finished.labels(game, outcome)
            for result in CALL_RESULTS:
                self.bot_call_duration.labels(game, result)
            for kind in FAULT_KINDS:
                self.bot_faults.labels(game, kind)

    def for_game(self, game: str) -> GameMetrics:
        """Children bound to one game's labels, so the per-decision path does no label lookup."""
        return GameMetrics(self, game)


class GameMetrics:
    """One game's label children of ``MatchMetrics`` (cheap to use on the hot path)."""

    def __init__(self, metrics: MatchMetrics, game: str) -> None:
        self.started = metrics.matches_started.labels(game)
        self.finished = {o: metrics.matches_finished.labels(game, o) for o in OUTCOMES}
        self.duration = metrics.match_duration.labels(game)
        self.in_flight = metrics.matches_in_flight.labels(game)
        self.decisions = metrics.decisions.labels(game)
        self.call_duration = {r: metrics.bot_call_duration.labels(game, r) for r in CALL_RESULTS}
        self.faults = {k: metrics.bot_faults.labels(game, k) for k in FAULT_KINDS}
        self.forfeits = metrics.forfeits.labels(game)
