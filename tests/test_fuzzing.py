"""A bot that answers random and mutated bytes cannot break a match, in any game.

``tests.bots.fuzzing`` is a real gRPC server process whose every answer (GetInfo, StartMatch,
ChooseAction, EndMatch) is drawn from a seeded generator: correct moves, random bytes,
mutations of valid answers, other messages, random status codes with hostile details, answers
over the size cap. Each game plays bounded matches with it in seat 0 and random bots in the
other seats, under a policy that never forfeits, so every answer it sends reaches the referee.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio

from arena.local_bots import BotProcess
from cardarena.game.v1 import record_pb2
from referee.bot_client import BotPool
from referee.codec.untrusted import MAX_DETAIL_CHARS
from referee.games.registry import game_types, make_game
from referee.match import FaultPolicy, Match, MoveLog, TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec, play_match
from tests.helpers import fuzzing_bot, random_bots, run_on_bridge

MAX_DECISIONS = 120
"""Each match is stopped after this many decisions (all seats), so every game stays short."""

MATCHES_PER_GAME = 2
NEVER_FORFEIT = FaultPolicy(max_faults=0, void_if_unreachable_at_start=False)
CLOCK = TimeControl(move_time_ms=5000, time_bank_ms=0)
KINDS = set(record_pb2.FaultKind.values()) - {record_pb2.FAULT_KIND_UNSPECIFIED}
LONGER = {"pinochle": {"declare_out": "disabled"}}
"""Options that keep a match going for more than a few moves (random Pinochle players declare
out within about 9 decisions)."""


@pytest.fixture(scope="module")
def fuzzer() -> Iterator[BotProcess]:
    with fuzzing_bot(17) as bot:
        yield bot


@pytest.fixture(scope="module")
def opponents() -> Iterator[list[BotProcess]]:
    with random_bots(3, seed=70) as bots:
        yield bots


@pytest.fixture(scope="module")
def kinds_seen() -> set[int]:
    return set()


def play_bounded(spec: MatchSpec) -> record_pb2.MatchRecord:
    """Play ``spec``, stopped after ``MAX_DECISIONS`` decisions."""

    async def run(pool: BotPool) -> record_pb2.MatchRecord:
        stop = trio.Event()

        def count(match: Match, log: MoveLog) -> None:
            if log.index + 1 >= MAX_DECISIONS:
                stop.set()

        return await play_match(spec, pool, on_move=count, stop=stop)

    return run_on_bridge(run)


@pytest.mark.parametrize("name", [t.name for t in game_types()])
def test_a_fuzzing_bot_gets_typed_faults_and_leaves_the_other_seats_alone(
    name: str, fuzzer: BotProcess, opponents: list[BotProcess], kinds_seen: set[int]
) -> None:
    game_type = next(t for t in game_types() if t.name == name)
    game = make_game(name, game_type.min_seats, LONGER.get(name))
    others = [bot.address for bot in opponents[: game.num_seats - 1]]
    for seed in range(MATCHES_PER_GAME):
        spec = MatchSpec(
            game, [fuzzer.address, *others], seed, time_control=CLOCK, policy=NEVER_FORFEIT
        )
        record = play_bounded(spec)
        assert record.status in (
            record_pb2.MATCH_STATUS_COMPLETED,
            record_pb2.MATCH_STATUS_ABORTED,
        ), record.status_detail
        assert len(record.moves) > 0
        faults = [move for move in record.moves if move.fault]
        assert faults, "the fuzzer answers garbage most of the time"
        for move in faults:
            assert move.seat == 0, f"seat {move.seat} faulted: {move.fault_detail}"
            assert move.fault in KINDS
            assert move.fault_detail and len(move.fault_detail) <= MAX_DETAIL_CHARS
            assert move.fault_detail.isprintable()
        assert any(move.seat == 0 and not move.fault for move in record.moves), (
            "its correct answers are played"
        )
        assert resimulate(record) == []
        kinds_seen.update(move.fault for move in faults)


def test_the_fuzzer_reached_every_kind_of_answer_fault(kinds_seen: set[int]) -> None:
    """Runs after the games above (same module): their faults covered the answer kinds."""
    if not kinds_seen:
        pytest.skip("run with the fuzzing matches above")
    assert {
        record_pb2.FAULT_KIND_MALFORMED_RESPONSE,
        record_pb2.FAULT_KIND_TRANSPORT_ERROR,
        record_pb2.FAULT_KIND_RESPONSE_TOO_LARGE,
        record_pb2.FAULT_KIND_UNREACHABLE,  # the UNAVAILABLE statuses it sends
    } <= kinds_seen
