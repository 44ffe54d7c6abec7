"""Invariants every registered game must keep, checked over many seeded random playouts.

Used by ``tests/test_conformance.py`` for every game in the registry, so a new game gets the
whole suite by registering itself (and its codec).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from google.protobuf.message import Message

from cardarena.game.v1 import cards_pb2
from referee.codec import codec_for
from referee.games.api import Game, State

HISTORY_PREFIX = "previous_"
"""Fields named ``previous_*`` describe earlier deals: their cards are not this deal's cards."""


def wire_cards(message: Message) -> Iterator[tuple[int, int, int]]:
    """Every Card inside ``message`` (outside ``previous_*`` history), as (suit, rank, copy)."""
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None or descriptor.name.startswith(HISTORY_PREFIX):
            continue
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if isinstance(item, cards_pb2.Card):
                yield (int(item.suit), int(item.rank), item.copy)
            elif isinstance(item, Message):
                yield from wire_cards(item)


def card_keys(game: Game, cards: frozenset[int]) -> set[tuple[int, int, int]]:
    """Engine card ids as (suit, rank, copy), through the game's own codec."""
    codec = codec_for(game)
    keys: set[tuple[int, int, int]] = set()
    for card in cards:
        wire = codec.card(card)
        keys.add((int(wire.suit), int(wire.rank), wire.copy))
    return keys


def random_playout(game: Game, seed: int, check_views: bool = False) -> tuple[State, list[int]]:
    """Play one game with uniformly random legal actions, checking invariants at each step."""
    state = game.new_state(seed)
    rng = random.Random(seed)
    actions: list[int] = []
    codec = codec_for(game) if check_views else None
    steps = 0
    while not state.is_terminal():
        seat = state.current_seat()
        assert 0 <= seat < game.num_seats
        legal = state.legal_actions()
        assert legal, f"no legal action for seat {seat} before the end (seed {seed})"
        assert len(set(legal)) == len(legal), "duplicate legal actions"
        if codec is not None:
            check_observations(game, state)
            for action in legal:
                assert codec.decode_action(codec.encode_action(action)) == action
        action = legal[rng.randrange(len(legal))]
        state.apply(action)
        actions.append(action)
        steps += 1
        assert steps < 1_000_000, "game does not end"
    assert state.legal_actions() == () or not state.legal_actions()
    return state, actions


def check_observations(game: Game, state: State) -> None:
    """No seat's wire observation shows another seat's private cards or any concealed card."""
    codec = codec_for(game)
    concealed = card_keys(game, state.concealed_cards())
    private = [card_keys(game, state.private_cards(seat)) for seat in range(game.num_seats)]
    for seat in range(game.num_seats):
        seen = set(wire_cards(codec.observation(state.observe(seat))))
        assert private[seat] <= seen, f"seat {seat} cannot see its own hand"
        assert not seen & concealed, f"seat {seat} sees concealed cards {seen & concealed}"
        for other in range(game.num_seats):
            if other != seat:
                leaked = seen & private[other]
                assert not leaked, f"seat {seat} sees seat {other}'s cards {leaked}"


def uncached_copy(state: State) -> State:
    """A copy of ``state`` that shares no list and no cache with it.

    Engines cache parts of ``observe`` against the very lists they come from (finished tricks,
    calls); a copy with fresh lists and no ``_cache`` attributes recomputes everything.
    """
    copy = object.__new__(type(state))
    copy.__dict__ = {
        key: value.copy() if isinstance(value, list | dict | set) else value
        for key, value in state.__dict__.items()
        if not key.endswith("_cache")
    }
    return copy


def check_cached_observations(state: State) -> None:
    """Every seat's ``observe`` equals the same observation computed without any cache."""
    fresh = uncached_copy(state)
    for seat in range(state.num_seats):
        assert state.observe(seat) == fresh.observe(seat), f"stale observation for seat {seat}"


def check_card_conservation(state: State) -> None:
    """Private hands, concealed and public cards partition the deck."""
    parts = [state.private_cards(seat) for seat in range(state.num_seats)]
    parts += [state.concealed_cards(), state.public_cards()]
    union: set[int] = set()
    for part in parts:
        assert not union & part, f"card in two places: {union & part}"
        union |= part
    assert union == state.all_cards(), f"cards missing: {state.all_cards() - union}"
