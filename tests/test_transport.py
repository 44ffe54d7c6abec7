"""Endpoints whose connection is unusable for gRPC are UNREACHABLE, found out quickly.

Each server in ``tests.bots.transport`` accepts TCP on loopback and then does something no
gRPC server does. The faults' details show which mechanism caught each one (the GOAWAY, the
connect timeout, the HTTP/1 reply), not a deadline that ran out; the CPU they cost is measured
by ``benchmarks/transport_pathology.py``, not here.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from arena.local_bots import BotProcess
from cardarena.game.v1 import record_pb2
from referee.bot_client import BotPool, CallResult
from referee.games.registry import make_game
from referee.match import FaultKind, FaultPolicy, TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec
from tests.bots.transport import CONNECTION_MODES
from tests.helpers import ROOT, play, random_bots, run_on_bridge, transport_server

GAME = make_game("oh-hell", 3, {"deal_style": "short_low"})

LONG_DEADLINE_S = 60.0
"""Far longer than the connect timeout: a fault that waited for it would say so."""

HOW_EACH_FAILS = {
    "goaway": "GOAWAY received",
    "silent": "timed out before receiving SETTINGS",
    "http1": "Expected SETTINGS frame as the first frame",
    "tls": "",  # the TLS server closes on the plaintext preface: refused or reset, or closed
    "close": "",
    "closed-port": "Connection refused",
}


@pytest.fixture(scope="module")
def two_random_bots() -> Iterator[list[BotProcess]]:
    with random_bots(2, seed=80) as bots:
        yield bots


def get_info(address: str) -> CallResult:
    async def call(pool: BotPool) -> CallResult:
        return await pool.get(address).get_info(LONG_DEADLINE_S)

    return run_on_bridge(call)


@pytest.mark.parametrize("mode", [*CONNECTION_MODES, "closed-port"])
def test_an_unusable_connection_is_unreachable_not_a_timeout(mode: str) -> None:
    if mode == "closed-port":
        result = get_info("127.0.0.1:1")
    else:
        with transport_server(mode) as server:
            result = get_info(server.address)
    assert result.fault is not None
    assert result.fault.kind is FaultKind.UNREACHABLE, result.fault
    assert HOW_EACH_FAILS[mode] in result.fault.detail
    assert "deadline" not in result.fault.detail


@pytest.mark.parametrize("mode", ["goaway", "silent"])
def test_a_match_with_such_a_bot_is_voided_as_unreachable(
    mode: str, two_random_bots: list[BotProcess]
) -> None:
    with transport_server(mode) as server:
        record = play(MatchSpec(GAME, [server.address, *(b.address for b in two_random_bots)], 1))
    assert record.status == record_pb2.MATCH_STATUS_VOIDED
    assert "unreachable at the start" in record.status_detail
    assert HOW_EACH_FAILS[mode] in record.status_detail


@pytest.mark.parametrize(
    ("mode", "fault", "detail"),
    [
        # The message's length prefix promises more than the stream carries.
        ("truncated", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "no ChooseActionResponse"),
        ("no-message", record_pb2.FAULT_KIND_MALFORMED_RESPONSE, "no ChooseActionResponse"),
        ("rst", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "RST_STREAM"),
        ("compressed", record_pb2.FAULT_KIND_TRANSPORT_ERROR, "Compression"),
    ],
)
def test_a_broken_stream_is_a_typed_fault_on_every_move(
    mode: str, fault: int, detail: str, two_random_bots: list[BotProcess]
) -> None:
    policy = FaultPolicy(max_faults=3, void_if_unreachable_at_start=False)
    with transport_server(mode) as server:
        spec = MatchSpec(
            GAME,
            [server.address, *(b.address for b in two_random_bots)],
            seed=4,
            time_control=TimeControl(move_time_ms=5000, time_bank_ms=0),
            policy=policy,
        )
        record = play(spec)
    assert record.status == record_pb2.MATCH_STATUS_FORFEITED
    faulted = [move for move in record.moves if move.fault]
    assert [move.fault for move in faulted] == [fault] * 3
    assert all(move.seat == 0 and detail in move.fault_detail for move in faulted), faulted
    assert resimulate(record) == []


def test_two_messages_for_one_call_end_at_the_deadline() -> None:
    """gRPC waits for the end of a unary answer that carries a second message; the deadline
    ends the wait (no CPU is spent meanwhile), so it is the seat's time that runs out."""
    with transport_server("two-messages") as server:

        async def call(pool: BotPool) -> CallResult:
            return await pool.get(server.address).choose_action(b"", 0.3)

        result = run_on_bridge(call)
    assert result.fault is not None
    assert result.fault.kind is FaultKind.TIMEOUT


def test_the_pathology_benchmark_runs() -> None:
    """``benchmarks/transport_pathology.py --quick`` exits 0 and prints its rows (no timing)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "transport_pathology.py"), "--quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines()[2:]]
    assert {row[0] for row in rows} == {"healthy", "goaway", "closed-port"}, done.stdout
    assert all("UNREACHABLE:" in row for row in rows if row[0] != "healthy"), done.stdout
