"""The runner's serialized ChooseAction requests are byte-identical to the message's."""

from __future__ import annotations

import random

import pytest

from cardarena.bot.v1 import bot_service_pb2
from referee.codec.base import varint
from referee.codec.common import game_settings
from referee.codec.requests import RequestEncoder, choose_action_request
from referee.games.api import OptionValue
from referee.games.registry import codec_for, game_types, make_game
from referee.match import FaultPolicy, Match, TimeControl

CASES: list[tuple[str, int, dict[str, OptionValue]]] = [
    (game_type.name, seats, {})
    for game_type in game_types()
    for seats in sorted({game_type.min_seats, game_type.max_seats})
] + [
    # Random players declare out within a few moves: without it, whole hands and phase 2
    # (where each follow rule narrows the legal cards the codec writes from a mask).
    ("pinochle", 2, {"declare_out": "disabled", "phase2_rule": rule})
    for rule in ("standard", "must_head", "free")
]


@pytest.mark.parametrize(("game_name", "seats", "options"), CASES)
def test_encoded_requests_match_the_message_for_every_decision(
    game_name: str, seats: int, options: dict[str, OptionValue]
) -> None:
    game = make_game(game_name, seats, options)
    codec, settings = codec_for(game), game_settings(game)
    rng = random.Random(7)
    clocks = [TimeControl(), TimeControl(500, 0, first_move_time_ms=2000), TimeControl(1, 300)]
    for seed, clock in enumerate(clocks):
        match = Match(game, seed, clock, FaultPolicy(max_faults=0))
        encoder = RequestEncoder(codec, settings, f"match-{seed}" * seed)
        while not match.is_over and len(match.moves) < 400:
            encoded = encoder.encode(match)
            expected = choose_action_request(match, codec, settings, f"match-{seed}" * seed)
            assert encoded == expected.SerializeToString(), len(match.moves)
            assert bot_service_pb2.ChooseActionRequest.FromString(encoded) == expected
            legal = match.legal_actions()
            match.play(legal[rng.randrange(len(legal))], rng.randrange(1_000_000))


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16_383, 16_384, 2**32 - 1])
def test_varint_matches_protobuf(value: int) -> None:
    message = bot_service_pb2.ChooseActionRequest(move_index=value)
    assert message.SerializeToString() == (b"\x38" + varint(value) if value else b"")


@pytest.mark.parametrize("move_index", [0, 127, 128, 4095, 4096, 100_000])
def test_move_index_is_encoded_past_the_prefilled_table(move_index: int) -> None:
    game = make_game("oh-hell", 4)
    codec, settings = codec_for(game), game_settings(game)
    match = Match(game, 3)
    match.seat_moves[match.to_act()] = move_index  # as after that many of its moves (the
    # table holds 4,096)
    encoded = RequestEncoder(codec, settings, "m").encode(match)
    assert encoded == choose_action_request(match, codec, settings, "m").SerializeToString()
