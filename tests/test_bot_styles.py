"""The sample bots' deliberately weaker styles (benchmarks/fairness.py's close opponents)
change only the choices they name, and are deterministic."""

from __future__ import annotations

from cardarena.bot.v1 import bot_service_pb2
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.registry import codec_for, make_game
from referee.match import FaultPolicy, Match
from sample_bots.mau_mau_heuristic import Weights, make_mau_mau_heuristic_bot
from sample_bots.pinochle_heuristic import Style, make_pinochle_heuristic_bot


def requests_of(game_name: str, seats: int, seed: int) -> list[bot_service_pb2.ChooseActionRequest]:
    """Every request of a match the game's tuned heuristic plays in every seat."""
    game = make_game(game_name, seats)
    codec, settings = codec_for(game), game_settings(game)
    bot = (make_pinochle_heuristic_bot if game_name == "pinochle" else make_mau_mau_heuristic_bot)()
    match = Match(game, seed, policy=FaultPolicy(max_faults=0))
    requests = []
    while not match.is_over:
        requests.append(choose_action_request(match, codec, settings, "styles"))
        match.play(codec.decode_action(bot.choose(requests[-1])), 0)
    return requests


def test_restyled_pinochle_bot_differs_only_in_meld_turns() -> None:
    tuned, restyled = (
        make_pinochle_heuristic_bot(),
        make_pinochle_heuristic_bot(None, Style(best_meld=False, exchange_dix=False)),
    )
    assert restyled.name != tuned.name
    differing: set[str] = set()
    for seed in range(3):
        for request in requests_of("pinochle", 2, seed):
            mine, theirs = restyled.choose(request), tuned.choose(request)
            assert mine in request.legal_actions
            assert mine == restyled.choose(request), "deterministic"
            if mine != theirs:
                kinds = [a.pinochle.WhichOneof("action") for a in request.legal_actions]
                assert "meld" in kinds or "exchange_dix" in kinds, "only meld turns change"
                differing.add(str(theirs.pinochle.WhichOneof("action")))
    assert differing == {"meld", "exchange_dix"}, "both choices of the style are made worse"


def test_reweighted_mau_mau_bot_spends_jacks_the_tuned_one_keeps() -> None:
    tuned = make_mau_mau_heuristic_bot()
    assert make_mau_mau_heuristic_bot(None, Weights()).name == tuned.name
    spender = make_mau_mau_heuristic_bot(None, Weights(jack_keep=0))
    jacks_spent = 0
    for seed in range(3):
        for request in requests_of("mau-mau", 4, seed):
            mine, theirs = spender.choose(request), tuned.choose(request)
            assert mine in request.legal_actions
            if mine != theirs:
                assert any(card.rank == 11 for card in mine.mau_mau.discard.cards)
                jacks_spent += 1
    assert jacks_spent >= 3


def test_jack_eager_mau_mau_bot_plays_a_jack_whenever_it_can() -> None:
    """``jack_keep`` −200 (benchmarks/fairness.py's weak Mau-Mau bot): a Jack goes on the
    pile at the first turn one may, unless another discard takes the hand out; every other
    choice is the tuned bot's."""
    tuned = make_mau_mau_heuristic_bot()
    eager = make_mau_mau_heuristic_bot(None, Weights(jack_keep=-200))
    jacks_spent = 0
    for seed in range(3):
        for request in requests_of("mau-mau", 4, seed):
            mine, theirs = eager.choose(request), tuned.choose(request)
            assert mine in request.legal_actions and mine == eager.choose(request)
            played = mine.mau_mau.discard.cards
            jack_played = any(card.rank == 11 for card in played)
            going_out = len(played) == len(request.observation.mau_mau.hand)
            jack_offered = any(
                card.rank == 11 for a in request.legal_actions for card in a.mau_mau.discard.cards
            )
            assert jack_played or going_out or not jack_offered
            if mine != theirs:
                assert jack_played
                jacks_spent += 1
    assert jacks_spent >= 3
