"""The arena's Prometheus metrics: ladders (ratings, matchmaking's queue), validation, the
health sweep, failed and parked matches, leadership leases, workers and the store. ``Metrics``
adds them to the referee's (``referee.metrics.MatchMetrics``), so ``arena serve`` exports both
from one object, under the same naming rules (see ``referee.metrics``).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from referee.metrics import PREFIX, MatchMetrics

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

RESULT_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32)
"""Sizes of a result batch (at most ``ArenaConfig.result_batch_max``, 32 by default)."""
STORE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1)


class Metrics(MatchMetrics):
    """Every metric ``arena serve`` exports: the referee's and the arena's, registered on
    ``registry`` with every label value pre-initialised."""

    def __init__(self, games: Iterable[str], registry: CollectorRegistry = REGISTRY) -> None:
        games = tuple(games)
        super().__init__(games, registry)
        self.matches_waiting = Gauge(
            f"{PREFIX}_matches_waiting",
            "Matches scheduled by matchmaking but not yet started.",
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
        self.result_batch_matches = Histogram(
            f"{PREFIX}_result_batch_matches",
            "Finished matches recorded per result transaction (group commit: those that "
            "finished while the last batch was being written).",
            buckets=RESULT_BATCH_BUCKETS,
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
            self.matches_waiting.labels(game)
            self.rating_updates.labels(game)
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
