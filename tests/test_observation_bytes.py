"""Each codec's direct observation bytes are byte-identical to the message path's.

``GameCodec.observation_bytes`` (the runner's fast path, built from cached parts) must equal
``observation(obs).SerializeToString()`` for every decision and every seat of whole random
playouts, over every registered game, several seat counts and option sets; plus a seeded fuzz
over many seeds with random options. One codec serves several matches in a row (as in the
benchmarks), so stale cached parts would show.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from cardarena.game.v1 import game_pb2
from referee.codec.base import GameCodec
from referee.codec.wire import (
    HEADS_LIMIT,
    BoundedCache,
    IdentityCache,
    length_delimited,
    length_heads,
    length_prefix,
    signed_varint,
    tag,
)
from referee.games.api import Game, GameType, InvalidOptionsError, OptionValue
from referee.games.registry import codec_for, game_types, make_game
from referee.match import Match

SMALL_TARGETS = {"target": 150, "target_score": 120}
"""Integer options that bound a match's length, set low so whole playouts stay quick."""


def seat_counts(game_type: GameType) -> list[int]:
    return sorted({game_type.min_seats, min(4, game_type.max_seats), game_type.max_seats})


def option_sets(game_type: GameType) -> Iterator[dict[str, OptionValue]]:
    """The defaults, then each option's other values one at a time."""
    yield {}
    for spec in game_type.options:
        if isinstance(spec.default, bool):
            yield {spec.name: not spec.default}
        elif isinstance(spec.default, int):
            yield {spec.name: SMALL_TARGETS.get(spec.name, spec.minimum or 0)}
        else:
            for choice in spec.choices:
                if choice != spec.default:
                    yield {spec.name: choice}


def small_targets(game_type: GameType) -> dict[str, OptionValue]:
    """The game's match-length options set low (whole playouts stay quick)."""
    names = {spec.name for spec in game_type.options}
    return {name: value for name, value in SMALL_TARGETS.items() if name in names}


def make(game_type: GameType, seats: int, options: dict[str, OptionValue]) -> Game | None:
    try:
        game = make_game(game_type.name, seats, options)
        Match(game, 0)  # some options are checked against the seat count only here
        return game
    except InvalidOptionsError:  # e.g. an option that narrows the seat range
        return None


def check_playout(codec: GameCodec, game: Game, seed: int, max_moves: int | None = None) -> int:
    """Compare both paths for every seat at every decision of one random playout."""
    match = Match(game, seed)
    state = match.state
    rng = random.Random(seed)
    decisions = 0
    while not state.is_terminal() and (max_moves is None or decisions < max_moves):
        for seat in range(game.num_seats):
            obs = state.observe(seat)
            expected = codec.observation(obs)
            encoded = codec.observation_bytes(obs)
            assert encoded == expected.SerializeToString(), (seed, decisions, seat)
            assert game_pb2.Observation.FromString(encoded) == expected
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
        decisions += 1
    return decisions


CASES = [
    pytest.param(game_type, seats, options, id=f"{game_type.name}-{seats}p-{options or 'default'}")
    for game_type in game_types()
    for seats in seat_counts(game_type)
    for options in option_sets(game_type)
]


@pytest.mark.parametrize(("game_type", "seats", "options"), CASES)
def test_observation_bytes_match_the_message_over_whole_playouts(
    game_type: GameType, seats: int, options: dict[str, OptionValue]
) -> None:
    game = make(game_type, seats, {**small_targets(game_type), **options})
    if game is None:
        pytest.skip("options not valid at this seat count")
    codec = codec_for(game)
    assert type(codec).observation_bytes is not GameCodec.observation_bytes, "no fast path"
    for seed in range(2):  # the same codec for two matches: cached parts must not leak
        assert check_playout(codec, game, seed) > 0


@pytest.mark.parametrize("game_type", game_types(), ids=lambda game_type: game_type.name)
def test_observation_bytes_seeded_fuzz(game_type: GameType) -> None:
    """Random seat counts and option values over many seeds, at full match length."""
    rng = random.Random(game_type.name)
    codec_by_game: dict[tuple[object, ...], GameCodec] = {}
    for seed in range(25):
        seats = rng.randint(game_type.min_seats, game_type.max_seats)
        options: dict[str, OptionValue] = {}
        for spec in game_type.options:
            if isinstance(spec.default, bool):
                options[spec.name] = rng.random() < 0.5
            elif isinstance(spec.default, int):
                low = spec.minimum or 0
                options[spec.name] = rng.choice([low, spec.default, low + 37])
            elif spec.choices:
                options[spec.name] = rng.choice(spec.choices)
        game = make(game_type, seats, options)
        if game is None:
            continue
        key = (seats, tuple(sorted(options.items())))
        codec = codec_by_game.setdefault(key, codec_for(game))
        check_playout(codec, game, 1000 + seed, max_moves=600)


@pytest.mark.parametrize("value", [0, 1, -1, 127, 128, -128, 2**31 - 1, -(2**31)])
def test_signed_varint_matches_protobuf(value: int) -> None:
    from cardarena.game.v1 import oh_hell_pb2

    message = oh_hell_pb2.OhHellSeat(score=value)
    score_tag = tag(oh_hell_pb2.OhHellSeat, "score")
    assert message.SerializeToString() == (score_tag + signed_varint(value) if value else b"")


def test_caches_are_bounded() -> None:
    cache: BoundedCache[int, int] = BoundedCache(limit=3)
    for key in range(10):
        assert cache.put(key, key * 2) == key * 2
        assert cache.get(key) == key * 2
        assert len(cache) <= 3
    objects = [object() for _ in range(10)]
    identity: IdentityCache[int] = IdentityCache(limit=3)
    for index, obj in enumerate(objects):
        identity.put(obj, index)
        assert identity.get(obj) == index
    assert identity.get(objects[0]) is None
    assert identity.get(object()) is None


def test_length_heads_are_the_field_heads_protobuf_writes() -> None:
    field_tag = tag(game_pb2.Observation, "pinochle")
    heads = length_heads(field_tag)
    assert len(heads) == HEADS_LIMIT
    for length in (0, 1, 127, 128, 300, HEADS_LIMIT - 1):
        assert heads[length] == length_prefix(field_tag, length)
        payload = length_delimited(field_tag, b"x" * length)
        assert payload == heads[length] + b"x" * length
