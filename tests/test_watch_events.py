"""Live move events: the ladder publishes public moves only, numbered among themselves, each
with the public table after it (never a hidden card)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from arena.ladder import Arena, LiveMatch
from arena.metrics import Metrics
from referee.bot_client import BotPool
from referee.codec.watch import public_table_message
from referee.games.registry import codec_for, make_game
from referee.match import Match
from tests.conformance import card_keys, wire_cards
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
                    table = live.events[-1].move.table
                    shown = set(wire_cards(table))
                    assert shown <= card_keys(game, match.state.public_cards()), move
                    assert table == public_table_message(match, codec_for(game))
                else:
                    hidden += 1
                    assert len(live.events) == before, f"{move} was published"
            events = [event.move for event in live.events]
            assert [event.index for event in events] == list(range(len(published)))
            assert [event.seat for event in events] == [move.seat for move in published]
        assert public
        if name != "oh-hell":
            assert hidden, "no declined optional decision was played"


@pytest.mark.parametrize(("name", "seats", "options"), CASES)
def test_declining_a_hidden_decision_leaves_the_public_table_as_it_was(
    name: str, seats: int, options: dict[str, object]
) -> None:
    # A decision only some hands are offered is declined unseen (no event): had it not been
    # offered, the match would have gone straight on. So the table spectators are shown after
    # a public move must already be the table after the declines that may follow it, or the
    # next event would show whether the decision was asked.
    game = make_game(name, seats, options)
    declined = 0
    for seed in range(20):
        match = Match(game, seed)
        rng = random.Random(seed)
        while not match.is_over and len(match.moves) < 400:
            legal = match.legal_actions()
            declines = [a for a in legal if not match.state.is_public_action(a)]
            if declines and rng.random() < 0.7:
                before = match.state.public_table()
                match.play(declines[0], 0)
                declined += 1
                assert match.state.public_table() == before, f"seed {seed}: {match.moves[-1]}"
            else:
                match.play(legal[rng.randrange(len(legal))], 0)
    if name != "oh-hell":
        assert declined
