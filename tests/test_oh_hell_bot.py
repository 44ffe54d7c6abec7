"""The Oh Hell heuristic sample bot: legal answers from the wire alone, and its card logic."""

from __future__ import annotations

from cardarena.game.v1 import cards_pb2, oh_hell_pb2
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import FaultPolicy, Match
from sample_bots.oh_hell_heuristic import HandView, choose_card, estimate_tricks
from sample_bots.serve import BOTS

MATCHES = 8


def test_heuristic_answers_legally_and_beats_random_bots() -> None:
    firsts = 0
    played = 0
    for seats, options in ((4, {}), (3, {"deal_style": "short_high_low", "scoring": "negative"})):
        game = make_game("oh-hell", seats, options)
        codec = codec_for(game)
        settings = game_settings(game)
        for index in range(MATCHES):
            hero = index % seats
            bots = [
                BOTS["oh-hell-heuristic" if s == hero else "random"](index * 10 + s)
                for s in range(seats)
            ]
            match = Match(game, 300 + index, policy=FaultPolicy(max_faults=0))
            while not match.is_over:
                seat = match.to_act()
                request = choose_action_request(match, codec, settings, f"test-{index}")
                answer = bots[seat].choose(request)
                assert answer in request.legal_actions
                match.play(codec.decode_action(answer), 0)
            outcome = match.outcome()
            assert outcome is not None
            firsts += outcome.ranks[hero] == 1
            played += 1
    assert firsts >= played // 2


def _card(text: str) -> cards_pb2.Card:
    suits = {"C": 1, "D": 2, "H": 3, "S": 4}
    ranks = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}
    return cards_pb2.Card(suit=suits[text[1]], rank=ranks.get(text[0]) or int(text[0]))  # type: ignore[arg-type]


def _view(hand: list[str], trick: list[str], bid: int, won: int) -> HandView:
    obs = oh_hell_pb2.OhHellObservation(trump_card=_card("2H"), hand=[_card(c) for c in hand])
    obs.seats.add(bid=bid, tricks_won=won)
    obs.seats.extend(oh_hell_pb2.OhHellSeat() for _ in range(3))
    obs.current_trick.cards.extend(_card(c) for c in trick)
    return HandView(obs, 0)


def test_ducks_with_the_highest_losing_card_once_the_bid_is_made() -> None:
    view = _view(["3S", "JS", "AS", "4C"], ["QS"], bid=1, won=1)
    assert choose_card(view, [(4, 3), (4, 11), (4, 14)]) == (4, 11)


def test_wins_cheaply_when_short_and_dumps_high_cards_when_void() -> None:
    view = _view(["3S", "KS", "AS", "4C"], ["QS", "5S", "2S"], bid=2, won=0)
    assert choose_card(view, [(4, 3), (4, 13), (4, 14)]) == (4, 13)  # last: lowest winner
    view = _view(["KC", "4D", "AH"], ["QS"], bid=0, won=0)
    assert choose_card(view, [(1, 13), (2, 4), (3, 14)]) == (1, 13)  # void, no trump: the king


def test_estimate_counts_aces_and_long_trumps() -> None:
    strong = [(3, 14), (3, 13), (3, 9), (3, 5), (3, 4), (1, 14), (4, 13), (4, 3)]
    weak = [(1, 2), (1, 5), (2, 7), (2, 9), (4, 4), (4, 8), (3, 3), (1, 9)]
    assert estimate_tricks(strong, 3, 4) >= 4 > 1 > estimate_tricks(weak, 3, 4)
