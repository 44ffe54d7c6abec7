"""The sample Pinochle bot answers legal actions from the wire messages alone, and beats random."""

from __future__ import annotations

from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import FaultPolicy, Match
from sample_bots.pinochle_heuristic import make_pinochle_heuristic_bot
from sample_bots.random_bot import make_random_bot


def test_heuristic_bot_plays_legally_and_beats_random_without_declaring() -> None:
    game = make_game("pinochle", 2, {"declare_out": "disabled"})
    codec = codec_for(game)
    settings = game_settings(game)
    wins = 0
    for index in range(10):
        hero = index % 2
        bots = [
            make_pinochle_heuristic_bot(index) if seat == hero else make_random_bot(index)
            for seat in range(2)
        ]
        match = Match(game, index, policy=FaultPolicy(max_faults=1))
        while not match.is_over:
            request = choose_action_request(match, codec, settings, f"bot-{index}")
            action = codec.decode_action(bots[match.to_act()].choose(request))
            assert action in match.legal_actions()
            match.play(action, 0)
        outcome = match.outcome()
        assert outcome is not None
        wins += outcome.ranks[hero] == 1
    assert wins >= 8
