"""Mau-Mau's luck: what the cards a seat got from chance were worth, against their expectation.

A control variate in the manner of AIVAT (Burch et al., 2018). Every card a seat receives by
chance comes uniformly, without replacement, from a pool the referee knows: the pack at a
deal (7 cards each), the stock when it draws (one card for a turn it cannot discard, 3 for an
8, 2 for a 7, 5 for a forgotten last-card announcement), or the pile reshuffled into a new
stock. The seat's luck on such a draw is the value of the cards it got minus the value the
same number of cards from that pool has on average. Given everything before the draw each
correction averages zero whatever the value function, so a score minus the luck keeps its
expectation; a value function that tracks what a card is worth takes out part of the variance
the draws bring. A card's value is linear in a few features read from the state just before
the draw (``LUCK_FEATURES``), with weights fitted once by least squares of the final score margin
on the per-feature luck over self-play matches (``benchmarks/fit_mau_mau_luck.py``, the table
in ``luck_values``), in tally points: luck is negative when chance lowered the seat's tally.

How it is computed: the match is replayed from its seed and moves on a state that notes each
draw as it happens (``_NotingState``); the rules are the same code, unchanged. Standard
library only.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.games.api import Game, OptionValue
from referee.games.bits import set_bits
from referee.games.mau_mau.luck_values import WEIGHTS
from referee.games.mau_mau.rules import MauMauState
from referee.games.mau_mau.view import SUIT_BITS, SUIT_SIZE

_PACK = tuple(range(52))

_RANKS = "23456789TJQKA"
RANK_FEATURES = tuple(f"draw {rank}" for rank in _RANKS)
"""One per rank (T is the 10): the drawn card has that rank."""
LUCK_FEATURES = (
    *RANK_FEATURES,
    *(f"draw {rank} on a spade start" for rank in _RANKS),
    *(f"draw {rank} holding 1-2" for rank in _RANKS),
    "draw playable",
    "draw suit held",
    *(f"deal {rank}" for rank in _RANKS),
    *(f"deal {rank} on a spade start" for rank in _RANKS),
)
"""What a card is worth is linear in these. For a card drawn from the stock: its rank, its rank
again if the deal's start card is a spade (every loser's points are doubled) and again if the
seat held at most two cards (near going out), whether it could be discarded on the table as
it stood and how many cards of its suit the seat already held; for a card dealt, its rank, and
again on a spade start."""
_SPADE_DRAW, _SHORT_DRAW = SUIT_SIZE, 2 * SUIT_SIZE
_PLAYABLE, _SUIT_HELD = 3 * SUIT_SIZE, 3 * SUIT_SIZE + 1
_DEAL, _SPADE_DEAL = 3 * SUIT_SIZE + 2, 4 * SUIT_SIZE + 2
_SPADES = 3


@dataclass(frozen=True)
class ChanceDraw:
    """Cards a seat got by chance, drawn uniformly from ``pool`` without replacement."""

    seat: int
    cards: tuple[int, ...]
    pool: tuple[int, ...]
    dealt: bool = False
    """At a deal (the pool is the pack) rather than from the stock."""
    hand: int = 0
    """The seat's cards before the draw (a mask)."""
    playable: int = 0
    """The cards that could be discarded on the table just before the draw (a mask)."""
    spade_start: bool = False
    """The deal's start card is a spade (the losers' points are doubled)."""


def card_features(card: int, draw: ChanceDraw) -> list[tuple[int, float]]:
    """The nonzero ``LUCK_FEATURES`` of one card as ``draw`` would have given it (index, value)."""
    rank = card % SUIT_SIZE
    if draw.dealt:
        dealt = [(_DEAL + rank, 1.0)]
        return [*dealt, (_SPADE_DEAL + rank, 1.0)] if draw.spade_start else dealt
    features = [(rank, 1.0)]
    if draw.spade_start:
        features.append((_SPADE_DRAW + rank, 1.0))
    if bin(draw.hand).count("1") <= 2:
        features.append((_SHORT_DRAW + rank, 1.0))
    if draw.playable >> card & 1:
        features.append((_PLAYABLE, 1.0))
    held = bin(draw.hand >> (SUIT_SIZE * (card // SUIT_SIZE)) & SUIT_BITS).count("1")
    if held:
        features.append((_SUIT_HELD, float(held)))
    return features


def draw_luck_features(draw: ChanceDraw) -> list[float]:
    """Per feature, the drawn cards' total minus its expectation from the pool."""
    luck = [0.0] * len(LUCK_FEATURES)
    for card in draw.cards:
        for k, value in card_features(card, draw):
            luck[k] += value
    share = len(draw.cards) / len(draw.pool)
    for card in draw.pool:
        for k, value in card_features(card, draw):
            luck[k] -= share * value
    return luck


def seat_luck_features(draws: Sequence[ChanceDraw], num_seats: int) -> list[list[float]]:
    """Each seat's per-feature luck summed over the match's draws."""
    totals = [[0.0] * len(LUCK_FEATURES) for _ in range(num_seats)]
    for draw in draws:
        for k, value in enumerate(draw_luck_features(draw)):
            totals[draw.seat][k] += value
    return totals


def luck_of(features: Sequence[float], weights: Sequence[float] = WEIGHTS) -> float:
    """A seat's luck in tally points from its per-feature luck."""
    return sum(f * w for f, w in zip(features, weights, strict=True))


class _NotingState(MauMauState):
    """The rules of ``MauMauState`` unchanged, noting every card dealt or drawn and its pool."""

    draws: list[ChanceDraw]

    def _deal(self) -> None:
        super()._deal()
        noted = self.__dict__.setdefault("draws", [])
        spade = self.start_card // SUIT_SIZE == _SPADES
        for seat, hand in enumerate(self.hands):
            noted.append(
                ChanceDraw(seat, tuple(set_bits(hand)), _PACK, dealt=True, spade_start=spade)
            )

    def _draw(self, seat: int, count: int) -> int | None:
        stock, pile = tuple(self.stock), self.pile
        hand, playable = self.hands[seat], self.playable
        drawn = super()._draw(seat, count)
        got = set_bits(self.hands[seat] & ~hand)
        spade = self.start_card // SUIT_SIZE == _SPADES
        from_stock = tuple(card for card in got if card in stock)
        if from_stock and len(from_stock) < len(stock):  # all of the stock is no chance
            self.draws.append(ChanceDraw(seat, from_stock, stock, False, hand, playable, spade))
        reshuffled = tuple(card for card in got if card not in stock)
        if reshuffled:  # the rest came from the pile under its top card, shuffled
            self.draws.append(ChanceDraw(seat, reshuffled, pile[:-1], False, hand, playable, spade))
        return drawn


def draws_from(state: MauMauState, actions: Sequence[int]) -> list[ChanceDraw]:
    """The chance draws of ``actions`` played from a copy of ``state`` (a position's state,
    say); ``state`` itself is left as it is."""
    noting = object.__new__(_NotingState)
    noting.__dict__.update(copy.deepcopy(state.__dict__))
    noting.draws = []
    return _play(noting, actions)


def _play(state: _NotingState, actions: Sequence[int]) -> list[ChanceDraw]:
    for action in actions:
        if state.is_terminal():
            break
        state.apply(action)
    return state.draws


def match_draws(
    num_seats: int, options: Mapping[str, OptionValue], seed: int, actions: Sequence[int]
) -> list[ChanceDraw]:
    """Every chance draw of the match that ``seed`` and ``actions`` replay."""
    return _play(_NotingState(num_seats, options, random.Random(seed)), actions)


def match_luck(game: Game, seed: int, actions: Sequence[int]) -> tuple[float, ...]:
    """Each seat's luck over the match, in tally points (negative: chance lowered its tally)."""
    draws = match_draws(game.num_seats, game.options, seed, actions)
    return tuple(luck_of(f) for f in seat_luck_features(draws, game.num_seats))
