"""Tournaments on the wire: a ``TournamentConfig``'s bounds and defaults, its plan, and the
``Tournament`` message of a stored tournament with its crosstable (no I/O).

The crosstable names each entrant ``OWNER/NAME`` (unique, and never renamed), so the plan's
entrants, the stored rotations and every export use that one label; the configuration keeps
the bots' ids. Scoring is ``arena.tournament``'s, the one the command line's local mode uses.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena import fields
from arena.duplicate_scoring import Rotation
from arena.store.repository import BotRow
from arena.store.results import RATED_STATUSES
from arena.store.tournaments import WIRE_STATES, TournamentRow
from arena.tournament import (
    MAX_ENTRANTS,
    MAX_SETS,
    Crosstable,
    PairingScore,
    PlannedSet,
    SetResult,
    TournamentPlan,
    score_pairings,
)
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2
from referee.games.registry import lower_score_wins

WEEK_US = 7 * 86_400_000_000
MAX_CONCURRENCY = 64
DEFAULTS = {"sets": 2, "rounds": 3, "move_time_ms": 1000, "concurrency": 4}
"""What a field left 0 means."""
BOUNDS = {
    "sets": (1, MAX_SETS),
    "rounds": (1, 100),
    "move_time_ms": (1, 600_000),
    "time_bank_ms": (0, 3_600_000),
    "max_faults": (0, 1_000),
    "concurrency": (1, MAX_CONCURRENCY),
}
"""Each numeric field's accepted range (inclusive), after ``DEFAULTS``."""
FORMAT_NAMES = {
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round-robin",
    pb.TOURNAMENT_FORMAT_SWISS: "swiss",
}
FORMAT_WIRE = {name: wire for wire, name in FORMAT_NAMES.items()}
MAX_SEED = 2**63 - 1


def label(bot: pb.Bot | BotRow) -> str:
    """How a tournament names an entrant: ``OWNER/NAME``."""
    return f"{bot.owner}/{bot.name}"


def with_defaults(config: pb.TournamentConfig) -> pb.TournamentConfig:
    """A copy with every 0 that has a default replaced by it (and the format spelled out)."""
    completed = pb.TournamentConfig()
    completed.CopyFrom(config)
    for name, value in DEFAULTS.items():
        if not getattr(completed, name):
            setattr(completed, name, value)
    if completed.format == pb.TOURNAMENT_FORMAT_UNSPECIFIED:
        completed.format = pb.TOURNAMENT_FORMAT_ROUND_ROBIN
    return completed


def config_problem(config: pb.TournamentConfig, now_us: int) -> str | None:
    """What is wrong with a (defaulted) configuration's own fields, if anything: the name,
    entrant references, the ladder, the format, every count, the seed and the deadline
    (after ``now_us``, at most a week ahead). The entrants' bots and the game are checked
    against the store and the registry afterwards."""
    entrants = list(config.entrants)
    return fields.first(
        fields.name("name", config.name),
        None
        if bool(entrants) != bool(config.ladder)
        else "name the entrants or a ladder (one of them)",
        None
        if len(entrants) <= MAX_ENTRANTS
        else f"at most {MAX_ENTRANTS} entrants (got {len(entrants)})",
        *(fields.bot_reference("entrants", entrant) for entrant in entrants),
        fields.identifier("ladder", config.ladder, required=False),
        None if config.format in FORMAT_NAMES else f"format: unknown value {config.format}",
        *(
            fields.whole(name, getattr(config, name), low, high)
            for name, (low, high) in BOUNDS.items()
        ),
        fields.whole("seed", config.seed, 0, MAX_SEED),
        None
        if now_us < config.deadline_us <= now_us + WEEK_US
        else "deadline_us must be in the future and at most a week ahead",
    )


def plan_of(config: pb.TournamentConfig, labels: Sequence[str]) -> TournamentPlan:
    """The plan of a stored (complete) configuration, its entrants named by ``labels``
    (``TournamentError`` if it cannot be planned)."""
    return TournamentPlan(
        config.settings.game,
        config.settings.num_seats,
        tuple(labels),
        FORMAT_NAMES[config.format],
        config.sets,
        config.rounds,
        config.seed,
    )


def crosstable_of(
    row: TournamentRow, labels: Sequence[str], played: Sequence[SetResult]
) -> Crosstable:
    """A stored tournament's crosstable from the sets played so far."""
    return Crosstable(
        plan_of(row.config, labels),
        score_pairings(played),
        len(played),
        max(row.sets_planned, len(played)),
        sum(len(result.rotations) for result in played),
        finished=row.state == "finished",
    )


def tournament_message(
    row: TournamentRow, entrants: Sequence[pb.Bot], table: Crosstable, full: bool = True
) -> pb.Tournament:
    """The wire form; ``full`` adds the standings and pairings."""
    message = pb.Tournament(
        tournament_id=row.tournament_id,
        config=row.config,
        state=WIRE_STATES[row.state],
        entrants=entrants,
        sets_played=table.sets_played,
        sets_planned=table.sets_planned,
        matches_played=table.matches_played,
        created_at_us=row.created_at_us,
        finished_at_us=row.finished_at_us,
    )
    if full:
        ids = {label(bot): bot.bot_id for bot in entrants}
        message.standings.extend(
            pb.TournamentStanding(
                position=position, bot_id=ids.get(entrant, ""), entrant=entrant, score=score
            )
            for position, (entrant, score) in enumerate(table.standings, start=1)
        )
        message.pairings.extend(
            pb.TournamentPairing(
                a=p.a,
                b=p.b,
                score=p.score,
                low=p.low,
                high=p.high,
                significant=p.significant,
                comparisons=p.comparisons,
                sets=p.sets,
            )
            for p in table.pairings.values()
        )
    return message


def crosstable_from_message(tournament: pb.Tournament) -> Crosstable:
    """The crosstable of a ``Tournament`` answer (for the command line and the web's
    exports), labels as entrants."""
    labels = [label(bot) for bot in tournament.entrants]
    return Crosstable(
        plan_of(tournament.config, labels),
        {
            (p.a, p.b): PairingScore(p.a, p.b, p.score, p.low, p.high, p.comparisons, p.sets)
            for p in tournament.pairings
        },
        tournament.sets_played,
        tournament.sets_planned,
        tournament.matches_played,
        tournament.state == pb.TOURNAMENT_STATE_FINISHED,
        [(s.entrant, s.score) for s in tournament.standings],
    )


def rotations_of(
    planned: PlannedSet, records: list[record_pb2.MatchRecord | None]
) -> tuple[Rotation, ...]:
    """A played set's rated rotations (a match that did not end rated compares nothing)."""
    return tuple(
        Rotation(
            match.seats,
            tuple(record.outcome.ranks),
            tuple(float(s) for s in record.outcome.scores),
            lower_score_wins(record.settings),
        )
        for match, record in zip(planned.matches, records, strict=True)
        if record is not None and record.status in RATED_STATUSES
    )
