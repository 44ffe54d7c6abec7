"""Whole matches over real gRPC on loopback between bots running as separate processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.local_bots import BotProcess
from cardarena.game.v1 import record_pb2
from referee.games.registry import make_game
from referee.match import TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec
from tests.helpers import ROOT, play, random_bots


@pytest.fixture(scope="module")
def four_random_bots() -> Iterator[list[BotProcess]]:
    with random_bots(4, seed=100) as bots:
        yield bots


def test_full_oh_hell_match_between_four_bot_processes(
    four_random_bots: list[BotProcess],
) -> None:
    game = make_game("oh-hell", 4)
    spec = MatchSpec(game, [bot.address for bot in four_random_bots], seed=11)
    record = play(spec)
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert [seat.bot_name for seat in record.seats] == ["random"] * 4
    assert [seat.endpoint for seat in record.seats] == spec.endpoints
    assert len(record.moves) == 4 * 19 + 4 * 109  # 19 hands of bids, 109 tricks of 4 cards
    assert not any(move.fault for move in record.moves)
    assert all(move.elapsed_us > 0 for move in record.moves)
    assert sorted(record.outcome.ranks)[0] == 1
    assert resimulate(record) == []


def test_same_seed_and_same_answers_give_the_same_record(
    four_random_bots: list[BotProcess],
) -> None:
    # The random bots are seeded per process, so replaying needs fresh processes.
    game = make_game("oh-hell", 3, {"deal_style": "short_low"})
    records = []
    for _ in range(2):
        with random_bots(3, seed=7) as bots:
            records.append(play(MatchSpec(game, [b.address for b in bots], seed=5)))
    actions = [[m.action.SerializeToString() for m in r.moves] for r in records]
    assert actions[0] == actions[1]
    assert records[0].outcome == records[1].outcome


def test_a_tampered_record_is_reported_as_diverging(four_random_bots: list[BotProcess]) -> None:
    game = make_game("oh-hell", 3, {"deal_style": "short_high"})
    record = play(MatchSpec(game, [b.address for b in four_random_bots[:3]], seed=3))
    assert resimulate(record) == []
    record.outcome.scores[0] += 1
    assert any("scores" in problem for problem in resimulate(record))
    record.moves[5].seat = (record.moves[5].seat + 1) % 3
    assert any("move 5" in problem for problem in resimulate(record))
    record.moves[5].seat = (record.moves[5].seat - 1) % 3
    record.outcome.scores[0] -= 1
    assert resimulate(record) == []
    record.seat_summaries[1].elapsed_p95_us += 1
    assert resimulate(record) == ["seat summaries: they do not match the recorded moves"]


def test_cli_plays_a_match_and_reads_and_replays_its_record(
    four_random_bots: list[BotProcess], tmp_path: Path
) -> None:
    out = tmp_path / "match.bin"
    bots = [arg for bot in four_random_bots[:3] for arg in ("--bot", bot.address)]
    command = [sys.executable, "-m", "arena", "match", "oh-hell", *bots, "--seed", "7"]
    command += ["--option", "scoring=negative", "--record", str(out)]
    played = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert played.returncode == 0, played.stderr
    assert "completed" in played.stdout
    record = record_pb2.MatchRecord.FromString(out.read_bytes())
    assert record.settings.options["scoring"].string_value == "negative"
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "record", str(out), "--moves"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert shown.returncode == 0 and "bid" in shown.stdout and "play" in shown.stdout
    replayed = subprocess.run(
        [sys.executable, "-m", "arena", "replay", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert replayed.returncode == 0 and "agrees" in replayed.stdout


def test_cli_rejects_a_bad_option_with_a_clear_message(
    four_random_bots: list[BotProcess],
) -> None:
    bots = [arg for bot in four_random_bots[:3] for arg in ("--bot", bot.address)]
    result = subprocess.run(
        [sys.executable, "-m", "arena", "match", "oh-hell", *bots, "--option", "scoring=high"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode != 0
    assert "scoring" in result.stderr and "positive" in result.stderr


def test_time_control_is_sent_with_every_request(four_random_bots: list[BotProcess]) -> None:
    control = TimeControl(move_time_ms=700, time_bank_ms=3000)
    game = make_game("oh-hell", 3, {"deal_style": "short_low"})
    record = play(
        MatchSpec(game, [b.address for b in four_random_bots[:3]], 1, time_control=control)
    )
    assert record.move_time_ms == 700 and record.time_bank_ms == 3000
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
