"""The Klaberjass heuristic sample bot: legal answers from the wire alone, and its choices."""

from __future__ import annotations

from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import Match
from sample_bots.klaberjass_heuristic import beats, hand_value, make_klaberjass_heuristic_bot
from sample_bots.random_bot import make_random_bot

HEARTS, CLUBS = 3, 1


def test_heuristic_answers_legally_and_beats_random() -> None:
    game = make_game("klaberjass", 2)
    codec = codec_for(game)
    settings = game_settings(game)
    wins = 0
    for index in range(6):
        hero = index % 2
        bots = [make_klaberjass_heuristic_bot(None), make_random_bot(index)]
        players = bots if hero == 0 else bots[::-1]
        match = Match(game, index)
        while not match.is_over:
            request = choose_action_request(match, codec, settings, f"test-{index}")
            answer = players[match.to_act()].choose(request)
            assert answer in request.legal_actions
            match.play(codec.decode_action(answer), 0)
        outcome = match.outcome()
        assert outcome is not None
        wins += outcome.ranks[hero] == 1
    assert wins >= 5


def test_hand_values_and_trick_taking() -> None:
    strong = [(HEARTS, 11), (HEARTS, 9), (HEARTS, 14), (CLUBS, 14), (CLUBS, 10), (1, 7)]
    weak = [(HEARTS, 7), (2, 8), (2, 9), (4, 12), (4, 8), (CLUBS, 8)]
    assert hand_value(strong, HEARTS) > hand_value(weak, HEARTS)
    assert beats((CLUBS, 7), (HEARTS, 14), CLUBS)  # any trump beats a plain lead
    assert beats((CLUBS, 9), (CLUBS, 14), CLUBS)  # 9 above ace in trumps
    assert not beats((HEARTS, 9), (HEARTS, 11), CLUBS)  # plain jack above nine
