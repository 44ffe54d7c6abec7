"""``arena watch`` draws the table as it changes: a board fed with the public watch events of
a real match (``public_move_event``, what WatchMatch sends), and the command itself in a
pseudo-terminal against a real ``arena serve`` with real bots, to the final scores."""

from __future__ import annotations

import os
import pty
import random
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from arena.cli_watch import Board
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import options_pb2
from referee.codec.watch import public_move_event
from referee.games.registry import make_game
from referee.match import Match
from tests.helpers import ROOT, misbehaving_bot, random_bots
from tests.test_ladder_e2e import ADMIN, arena_service, register_all, wait_active, wait_for


def events_of_a_match(game: str, seats: int, seed: int) -> list[pb.MoveEvent]:
    """The move events spectators of a random match are sent."""
    match = Match(make_game(game, seats), seed)
    rng = random.Random(seed)
    events: list[pb.MoveEvent] = []
    while not match.is_over:
        legal = match.legal_actions()
        log = match.play(legal[rng.randrange(len(legal))], 0)
        event = public_move_event(match, log, len(events))
        if event is not None:
            events.append(event)
    return events


def drawn(board: Board) -> str:
    console = Console(record=True, width=100, color_system=None)
    console.print(board.render("oh-hell match"))
    return console.export_text()


def test_the_board_shows_scores_and_latest_moves_from_the_events() -> None:
    events = events_of_a_match("oh-hell", 3, seed=4)
    board = Board(["ann/a", "bob/b", "cy/c"])
    for event in events:
        board.add(event)
    text = drawn(board)
    last = events[-1]
    for seat, score in enumerate(last.scores):
        row = next(line for line in text.splitlines() if f"│ {seat}" in line.replace("  ", " "))
        assert str(score) in row, (row, score)
    assert last.description in text and f"{len(events)} moves" in text
    assert sum(line.startswith("#") for line in text.splitlines()) == 12


class Frames:
    """A live-table model as docs/replay-frames.md describes its frames."""

    def add(self, event: pb.MoveEvent) -> dict[str, Any]:
        return {
            "table": {
                "heading": "Hand 2 of 19 · 2 cards each",
                "seats": [{"count": 2, "tags": ["bid 1"]}, {"count": 1, "tags": []}],
                "facts": [{"label": "trump", "cards": ["TH"]}],
                "trick": {"leader": 0, "cards": [{"seat": 0, "card": "QS"}]},
            }
        }


def test_the_board_draws_a_live_table_frame_trick_trump_and_hand_sizes() -> None:
    board = Board(["ann/a", "bob/b"], Frames())
    board.add(pb.MoveEvent(index=0, seat=0, description="play QS", scores=[0, 0]))
    text = drawn(board)
    assert "Hand 2 of 19" in text and "trump: 10♥" in text and "trick: ann/a Q♠" in text
    assert "bid 1" in text


def test_arena_watch_redraws_a_live_match_in_a_terminal(tmp_path: Path) -> None:
    slow = misbehaving_bot("sleep", "--sleep-ms", "40")  # so the match lasts a while
    with random_bots(2, seed=2) as bots, slow as sleeper, arena_service(tmp_path) as service:
        client = service.client(ADMIN)
        wait_active(client, register_all(client, [*bots, sleeper]))
        settings_request = pb.CreateLadderRequest(
            config=pb.LadderConfig(
                name="long",
                settings=options_pb2.GameSettings(game="oh-hell", num_seats=3),
                move_time_ms=2000,
                time_bank_ms=5000,
                max_faults=3,
                concurrency=1,
            )
        )
        client.call("CreateLadder", settings_request)
        listing = pb.ListMatchesRequest(ladder="long", phase=pb.MATCH_PHASE_PLAYING)
        live = wait_for(lambda: client.call("ListMatches", listing).matches, 120, "a live match")
        output = watch_in_a_terminal(service.address, live[0].match_id)
    assert "latest moves" in output and "long (oh-hell)" in output, output[-2000:]
    assert "finished: ranks" in output, output[-2000:]
    assert "ann0/r0: " in output, "the moves, with the bots' names"
    assert output.count("latest moves") > 3, "redrawn as moves come"
    assert "Traceback" not in output


def watch_in_a_terminal(address: str, match_id: str) -> str:
    """``arena watch MATCH_ID`` with a pseudo-terminal as its output, until it ends."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "watch", match_id, "--server", address],
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "120", "LINES": "50", "TERM": "xterm"},
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        assert process.wait(30) == 0, seen.decode(errors="replace")[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    return seen.decode(errors="replace")
