"""The parts of a drawn card table every game shares: card names, seats, tricks, score rows.

A table is plain JSON (``docs/replay-frames.md``): cards are strings such as ``"QS"`` or
``"TH"`` (rank letter, ``T`` for ten, then the suit letter; Pinochle adds the copy, ``"QS#1"``),
which the viewer draws as "Q♠" and "10♥". Each game's module builds its table from the
engine's observations only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cardarena.game.v1 import cards_pb2
from referee.codec.base import GameCodec
from referee.games.api import Game
from referee.games.cards import RANK_LETTERS, SUIT_LETTERS, Rank, Suit
from referee.games.registry import codec_for

Json = dict[str, Any]
"""A JSON object as built here (values are JSON-able)."""

SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
"""Suit names by ``Suit - 1``, the index most engines keep trumps in."""


class CardNamer:
    """Names a game's card ids through its codec's ``card`` (the one wire form of a card).

    In a deck with two copies of each card (Pinochle) a name ends in the copy, ``"QS#1"``, as
    the game's move descriptions write it: the viewer draws both as "Q♠", but a table can be
    checked card by card against the engine's hidden cards.
    """

    def __init__(self, codec: GameCodec, *, copies: bool) -> None:
        self._codec = codec
        self._copies = copies
        self._names: dict[int, str] = {}

    def __call__(self, card: int) -> str:
        name = self._names.get(card)
        if name is None:
            wire = self._codec.card(card)
            name = RANK_LETTERS[Rank(wire.rank)] + SUIT_LETTERS[Suit(wire.suit)]
            if self._copies:
                name += f"#{wire.copy}"
            self._names[card] = name
        return name

    def all(self, cards: Iterable[int]) -> list[str]:
        """Names of several cards, in the order given."""
        return [self(card) for card in cards]


def deck_has_copies(game: Game) -> bool:
    """Whether ``game``'s deck holds two of a card (Pinochle): then card names carry the copy."""
    cards = game.new_state(0).all_cards()
    codec = codec_for(game)
    faces = {(codec.card(c).suit, codec.card(c).rank) for c in cards}
    return len(faces) < len(cards)


def wire_card_name(card: cards_pb2.Card, *, copies: bool) -> str | None:
    """The name of a card in wire form (``"QS"``, ``"QS#1"`` with ``copies``); None if it is
    not a card (an unset or out-of-range suit or rank, a copy other than 0 or 1)."""
    try:
        rank, suit = Rank(card.rank), Suit(card.suit)
    except ValueError:
        return None
    if rank not in RANK_LETTERS or suit not in SUIT_LETTERS or card.copy > 1:
        return None
    return RANK_LETTERS[rank] + SUIT_LETTERS[suit] + (f"#{card.copy}" if copies else "")


def suit_letter(index: int) -> str:
    """``"H"`` for suit index 2 (``Suit - 1``)."""
    return SUIT_LETTERS[Suit(index + 1)]


def seat_view(hand: list[str] | None, count: int | None, tags: Sequence[str] = ()) -> Json:
    """One seat as drawn: its hand face up (None: hidden, then ``count`` backs if known)."""
    return {"hand": hand, "count": len(hand) if hand is not None else count, "tags": list(tags)}


def played(leader: int, cards: Sequence[str], num_seats: int) -> list[Json]:
    """A trick's cards with the seat that played each, from its leader round the table."""
    return [{"seat": (leader + i) % num_seats, "card": card} for i, card in enumerate(cards)]


def trick_view(
    leader: int, cards: Sequence[str], num_seats: int, winner: int | None = None
) -> Json:
    """A trick as drawn: who led, the cards played so far, the winner once taken."""
    return {"leader": leader, "cards": played(leader, cards, num_seats), "winner": winner}


def score_row(label: str, points: Sequence[int]) -> Json:
    """One row of the score sheet (a finished hand or deal)."""
    return {"label": label, "points": [int(p) for p in points]}


def fact(label: str, text: str = "", cards: Sequence[str] = (), suit: str | None = None) -> Json:
    """A line of the table's centre: "Trump: Q♥", "Contract: no hearts", "Trumps: ♠ spades"."""
    return {"label": label, "text": text, "cards": list(cards), "suit": suit}


def plural(count: int, word: str) -> str:
    """``"1 trick"``, ``"3 tricks"``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
