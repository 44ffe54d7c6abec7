"""Positions are values: a state's position makes an equal state, and ``copy()`` branches.

For every registered game with positions, at every decision of seeded random playouts: the
position read from the state makes a state with the same position, the same legal actions and
the same observation for every seat. For every game, two copies (``State.copy``) played on to
the end with the same actions end the same, and leave the original untouched.
"""

from __future__ import annotations

import random

import pytest

from referee.games.api import InvalidPositionError, State
from referee.games.entry import GameEntry, Position
from referee.games.king import ACCEPT, KingPosition
from referee.games.king import PASS as KING_PASS
from referee.games.klaberjass import PASS, KlaberjassPosition
from referee.games.mau_mau import MauMauPosition
from referee.games.oh_hell import OhHellPosition
from referee.games.pinochle import PinochlePosition
from referee.games.registry import GAMES, make_game

WITH_POSITIONS = [entry for entry in GAMES if entry.position_of is not None]
BY_SUIT = tuple(tuple(range(13 * suit, 13 * suit + 13)) for suit in range(4))
"""Four hands of one suit each (clubs to seat 0 … spades to seat 3)."""


@pytest.mark.parametrize("entry", WITH_POSITIONS, ids=lambda entry: entry.name)
@pytest.mark.parametrize("seed", [1, 2])
def test_positions_round_trip_at_every_decision(entry: GameEntry, seed: int) -> None:
    assert entry.position_of is not None
    seats = entry.game_type.max_seats if seed % 2 else entry.game_type.min_seats
    state = make_game(entry.name, seats, entry.short_options).new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        position = entry.position_of(state)
        rebuilt = position.state()
        assert entry.position_of(rebuilt) == position
        assert rebuilt.current_seat() == state.current_seat()
        assert list(rebuilt.legal_actions()) == list(state.legal_actions())
        for seat in range(seats):
            assert rebuilt.observe(seat) == state.observe(seat)
        str(position)  # reads aloud without failing
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    position = entry.position_of(state)
    assert entry.position_of(position.state()) == position
    assert position.state().is_terminal()


def snapshot(state: State) -> tuple[object, ...]:
    """What the interface shows of ``state``: who acts, the legal actions, every view."""
    views = tuple(state.observe(seat) for seat in range(state.num_seats))
    return state.current_seat(), tuple(state.legal_actions()), views, state.scores_so_far()


@pytest.mark.parametrize("entry", GAMES, ids=lambda entry: entry.name)
@pytest.mark.parametrize("moves_before", [0, 7, 40])
def test_a_copy_plays_on_alone(entry: GameEntry, moves_before: int) -> None:
    seats = entry.game_type.min_seats
    state = make_game(entry.name, seats, entry.short_options).new_state(moves_before)
    rng = random.Random(5)
    for _ in range(moves_before):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    before = snapshot(state)
    copy = state.copy()
    twin = state.copy()
    assert snapshot(copy) == before
    while not copy.is_terminal():
        legal = copy.legal_actions()
        action = legal[rng.randrange(len(legal))]
        copy.apply(action)
        twin.apply(action)
    assert snapshot(state) == before, "playing a copy changed the original"
    assert twin.outcome() == copy.outcome()


def _klaberjass(**changes: object) -> KlaberjassPosition:
    """A Klaberjass hand before its first bid (seat 1 deals), with ``changes``."""
    fields: dict[str, object] = {
        "hands": (tuple(range(6)), tuple(range(6, 12))),
        "turn_up": 31,
        "stock": tuple(range(12, 31)),
        "dealer": 1,
        "to_act": 0,
        "phase": "bidding",
    }
    fields.update(changes)
    return KlaberjassPosition(**fields)  # type: ignore[arg-type]


_FIRST_HALF = tuple(range(24))
_SECOND_HALF = tuple(range(24, 47))
"""Pinochle cards 0..46 in two hands: with the turn-up 47, every card is somewhere."""


@pytest.mark.parametrize(
    ("position", "complaint"),
    [
        (
            OhHellPosition(hands=((0, 1), (0, 2), (3, 4)), trump_card=5, dealer=0),
            "twice",
        ),
        (OhHellPosition(hands=((0, 1), (2,), (3, 4)), trump_card=5, dealer=0), "holds"),
        (
            OhHellPosition(hands=((0,), (1,), (2,)), trump_card=5, dealer=0, bids=(1, None, 0)),
            "in turn",
        ),
        (
            OhHellPosition(
                hands=((0,), (), (2,)), trump_card=5, dealer=0, current_trick=(3,), bids=()
            ),
            "bid",
        ),
        (_klaberjass(stock=(0, *range(13, 31))), "twice"),
        (_klaberjass(stock=tuple(range(13, 31))), "missing"),
        (_klaberjass(to_act=1), "seat 0 bids next"),
        (_klaberjass(phase="shuffling"), "no phase"),
        (_klaberjass(phase="playing"), "no trumps were made"),
        (_klaberjass(bids=(PASS, PASS, PASS, PASS)), "the bidding is over"),
        (_klaberjass(hands=(tuple(range(7)), tuple(range(7, 12)))), "holds 7 cards"),
        (MauMauPosition(hands=((0,), (1,)), pile=(), to_act=0), "never empty"),
        (MauMauPosition(hands=((0,), (0,)), pile=(5,), to_act=0), "twice"),
        (MauMauPosition(hands=((0,), (1,)), pile=(5,), to_act=2), "not a seat"),
        (PinochlePosition(hands=(_FIRST_HALF, (0, *_SECOND_HALF)), turn_up=47), "twice"),
        (PinochlePosition(hands=(_FIRST_HALF, _SECOND_HALF), turn_up=None, stock=(47,)), "taken"),
        (
            PinochlePosition(
                hands=(_FIRST_HALF[1:], _SECOND_HALF[:-1]),
                turn_up=47,
                stock=(46,),
                lead=0,
                meld_turn=True,
            ),
            "meld turn",
        ),
        (PinochlePosition(hands=(_FIRST_HALF, _SECOND_HALF), turn_up=47, to_act=2), "not a seat"),
        (KingPosition(hands=(BY_SUIT[0], *BY_SUIT[:3])), "exactly once"),
        (KingPosition(hands=(BY_SUIT[0] + (13,), BY_SUIT[1][1:], *BY_SUIT[2:])), "14 cards"),
        (KingPosition(hands=BY_SUIT, hand_number=11), "not one of"),
        (KingPosition(hands=BY_SUIT, hand_number=7, calls=((0, KING_PASS),)), "may not call"),
        (KingPosition(hands=BY_SUIT, hand_number=7, calls=((1, ACCEPT),)), "illegal call"),
        (KingPosition(hands=BY_SUIT, calls=((1, KING_PASS),)), "may not call"),  # a negative hand
        (
            KingPosition(
                hands=tuple(hand[1:] for hand in BY_SUIT),
                completed_tricks=((0, (0, 13, 26, 39), 2),),  # the 2♣ led and took it
            ),
            "leader or winner",
        ),
    ],
)
def test_impossible_positions_are_refused(position: Position, complaint: str) -> None:
    with pytest.raises(InvalidPositionError, match=complaint):
        position.state()
