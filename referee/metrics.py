"""Every Prometheus metric Card Arena exports, in one place.

Names follow the Prometheus naming guide: one prefix (``cardarena_``), base units in the name,
counters ending in ``_total``. Labels take values from small fixed sets (games, outcomes, fault
kinds, operations) and are pre-initialised so dashboards see zeros; never a bot, owner or match
id (per-bot figures belong to the arena API). Tests build ``Metrics`` on their own
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
VALIDATION_RESULTS = ("passed", "failed")
PROBE_RESULTS = ("ok", "failed")
MATCH_FAILURE_KINDS = ("setup", "play", "record", "interrupted")
"""Where a match failed for a reason that is not a bot's fault (``arena.store``'s kinds)."""
STORE_OPERATIONS = (
    "claim_match",
    "record_result",
    "register_bot",
    "standings",
    "enqueue_matches",
    "recover",
)

LEASE_KINDS = ("ladder", "validation", "sweep")
"""The kinds of leadership lease (``arena.leadership``), by the part of the name before ':'."""

# Buckets bracket typical move deadlines (100 ms … 10 s) with room below for fast bots.
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
MATCH_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
STORE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1)


class Metrics:
    """The arena's metrics, registered on ``registry`` with every label value pre-initialised."""

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
        self.matches_waiting = Gauge(
            f"{PREFIX}_matches_waiting",
            "Matches scheduled by matchmaking but not yet started.",
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
        self.validations = Counter(
            f"{PREFIX}_validations",
            "Validation runs of new bots or versions, by result.",
            ["game", "result"],
            registry=registry,
        )
        self.health_probes = Counter(
            f"{PREFIX}_health_probes",
            "Health-sweep probes of bots, by result.",
            ["result"],
            registry=registry,
        )
        self.bots_pulled = Gauge(
            f"{PREFIX}_bots_pulled",
            "Bots currently pulled from matchmaking by the health sweep.",
            registry=registry,
        )
        self.match_failures = Counter(
            f"{PREFIX}_match_failures",
            "Attempts at a match that failed for a reason that is not a bot's fault (the match "
            "went back to the queue, or was parked), by where it failed.",
            ["kind"],
            registry=registry,
        )
        self.matches_parked = Gauge(
            f"{PREFIX}_matches_parked",
            "Matches parked after failing too often, waiting for an operator (the whole "
            "store's count, as this process last read it), by their last failure.",
            ["kind"],
            registry=registry,
        )
        self.leases_held = Gauge(
            f"{PREFIX}_leases_held",
            "Leadership leases this process holds, by kind: ladder (one ladder's scheduling), "
            "validation, sweep (health probes). Summed over processes: one per ladder, else a "
            "scheduler is missing.",
            ["kind"],
            registry=registry,
        )
        self.workers_alive = Gauge(
            f"{PREFIX}_workers_alive",
            "Arena processes registered on the database with a live lease, as this process "
            "last read it.",
            registry=registry,
        )
        self.matches_taken_over = Counter(
            f"{PREFIX}_matches_taken_over",
            "Matches this process put back in the queue because the worker playing them was "
            "gone (its lease ran out).",
            registry=registry,
        )
        self.rating_updates = Counter(
            f"{PREFIX}_rating_updates",
            "Matches whose result updated ratings.",
            ["game"],
            registry=registry,
        )
        self.store_duration = Histogram(
            f"{PREFIX}_store_operation_duration_seconds",
            "Time spent in store operations, by operation.",
            ["operation"],
            buckets=STORE_BUCKETS,
            registry=registry,
        )
        for game in games:
            for metric in (
                self.matches_started,
                self.match_duration,
                self.matches_in_flight,
                self.matches_waiting,
                self.decisions,
                self.forfeits,
                self.rating_updates,
            ):
                metric.labels(game)
            for outcome in OUTCOMES:
                self.matches_finished.labels(game, outcome)
            for result in CALL_RESULTS:
                self.bot_call_duration.labels(game, result)
            for kind in FAULT_KINDS:
                self.bot_faults.labels(game, kind)
            for result in VALIDATION_RESULTS:
                self.validations.labels(game, result)
        for result in PROBE_RESULTS:
            self.health_probes.labels(result)
        for kind in MATCH_FAILURE_KINDS:
            self.match_failures.labels(kind)
            self.matches_parked.labels(kind)
        for operation in STORE_OPERATIONS:
            self.store_duration.labels(operation)
        for kind in LEASE_KINDS:
            self.leases_held.labels(kind)

    def for_game(self, game: str) -> GameMetrics:
        """Children bound to one game's labels, so the per-decision path does no label lookup."""
        return GameMetrics(self, game)


class GameMetrics:
    """One game's label children of ``Metrics`` (cheap to use on the hot path)."""

    def __init__(self, metrics: Metrics, game: str) -> None:
        self.started = metrics.matches_started.labels(game)
        self.finished = {o: metrics.matches_finished.labels(game, o) for o in OUTCOMES}
        self.duration = metrics.match_duration.labels(game)
        self.in_flight = metrics.matches_in_flight.labels(game)
        self.decisions = metrics.decisions.labels(game)
        self.call_duration = {r: metrics.bot_call_duration.labels(game, r) for r in CALL_RESULTS}
        self.faults = {k: metrics.bot_faults.labels(game, k) for k in FAULT_KINDS}
        self.forfeits = metrics.forfeits.labels(game)
