"""Live move events: the ladder publishes public moves only, numbered among themselves."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from arena.ladder import Arena, LiveMatch
from referee.bot_client import BotPool
from referee.games.registry import make_game
from referee.match import Match
from referee.metrics import Metrics
from tests.stores import open_store

CASES = [
    ("klaberjass", 2, {}),
    ("pinochle", 2, {"declare_out": "disabled"}),
    ("mau-mau", 3, {"cannot_discard": "draw_then_may_play"}),
    ("oh-hell", 4, {}),
]


@pytest.mark.parametrize(("name", "seats", "options"), CASES)
def test_only_public_moves_are_published_and_numbered_among_themselves(
    tmp_path: Path, name: str, seats: int, options: dict[str, object]
) -> None:
    game = make_game(name, seats, options)
    with open_store("sqlite", tmp_path) as store:
        arena = Arena(store, BotPool(), Metrics([name], CollectorRegistry()), "127.0.0.1:1")
        hidden = public = 0
        for seed in range(5):
            live = LiveMatch()
            match = Match(game, seed)
            rng = random.Random(seed)
            published = []
            while not match.is_over and len(match.moves) < 300:
                legal = match.legal_actions()
                declines = [a for a in legal if not match.state.is_public_action(a)]
                action = declines[0] if declines else legal[rng.randrange(len(legal))]
                move = match.play(action, 0)
                before = len(live.events)
                arena._on_move(live, match, move)
                if match.state.is_public_action(action):
                    public += 1
                    published.append(move)
                    assert len(live.events) == before + 1
                else:
                    hidden += 1
                    assert len(live.events) == before, f"{move} was published"
            events = [event.move for event in live.events]
            assert [event.index for event in events] == list(range(len(published)))
            assert [event.seat for event in events] == [move.seat for move in published]
        assert public
        if name != "oh-hell":
            assert hidden, "no declined optional decision was played"
