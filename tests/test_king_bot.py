"""The King heuristic sample bot: legal answers from the wire alone, and it beats random play."""

from __future__ import annotations

from cardarena.game.v1 import cards_pb2, king_pb2
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import FaultPolicy, Match
from sample_bots.king_heuristic import (
    HandView,
    best_trump,
    card_penalty,
    choose_card,
    estimate_tricks,
)
from sample_bots.serve import BOTS

MATCHES = 12


def test_heuristic_answers_legally_and_beats_three_random_bots() -> None:
    firsts = 0
    for options in ({}, {"auction": "simplified", "trump_lead_restricted": True}):
        game = make_game("king", 4, options)
        codec = codec_for(game)
        settings = game_settings(game)
        for index in range(MATCHES):
            hero = index % 4
            bots = [
                BOTS["king-heuristic" if s == hero else "random"](index * 4 + s) for s in range(4)
            ]
            match = Match(game, 100 + index, policy=FaultPolicy(max_faults=0))
            while not match.is_over:
                seat = match.to_act()
                request = choose_action_request(match, codec, settings, f"test-{index}")
                answer = bots[seat].choose(request)
                assert answer in request.legal_actions
                match.play(codec.decode_action(answer), 0)
            outcome = match.outcome()
            assert outcome is not None
            firsts += outcome.ranks[hero] == 1
    assert firsts >= MATCHES  # at least half of the 2 x MATCHES games


def _obs(hand: list[str], trick: list[str], contract: int) -> king_pb2.KingObservation:
    suits = {"C": 1, "D": 2, "H": 3, "S": 4}
    ranks = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}

    def card(text: str) -> cards_pb2.Card:
        rank = ranks.get(text[0]) or int(text[0])
        return cards_pb2.Card(suit=suits[text[1]], rank=rank)  # type: ignore[arg-type]

    obs = king_pb2.KingObservation(contract=contract, hand=[card(c) for c in hand])  # type: ignore[arg-type]
    obs.current_trick.cards.extend(card(c) for c in trick)
    return obs


def test_ducks_under_the_winner_and_dumps_the_queen() -> None:
    view = HandView(_obs(["2S", "9S", "AS"], ["TS"], king_pb2.KING_CONTRACT_NO_TRICKS))
    assert choose_card(view, [(4, 2), (4, 9), (4, 14)]) == (4, 9)
    view = HandView(_obs(["QS", "AH"], ["TD"], king_pb2.KING_CONTRACT_NO_QUEENS))
    assert choose_card(view, [(4, 12), (3, 14)]) == (4, 12)
    assert card_penalty(king_pb2.KING_CONTRACT_NO_KING_OF_HEARTS, (3, 13)) == 160


def test_trump_estimate_prefers_the_long_strong_suit() -> None:
    hand = [(4, r) for r in (14, 13, 12, 10, 9, 3)] + [(1, 14), (2, 2), (2, 3), (3, 4)]
    hand += [(3, 5), (1, 7), (2, 9)]
    suit, tricks = best_trump(hand)
    assert suit == 4 and tricks > estimate_tricks(hand, 1)
