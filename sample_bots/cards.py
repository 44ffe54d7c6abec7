"""Cards as the sample bots hold them: (suit, rank) pairs read off the wire, and trick helpers.

Shared by the heuristic bots of the standard-deck trick games (Oh Hell, King) and Klaberjass's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cardarena.game.v1 import cards_pb2

Card = tuple[int, int]
"""(suit, rank) as on the wire: suit 1..4 (clubs, diamonds, hearts, spades), rank 2..14."""

FULL_DECK = frozenset((suit, rank) for suit in range(1, 5) for rank in range(2, 15))
"""The 52 cards of a standard deck."""


def wire_card(card: cards_pb2.Card) -> Card:
    """A wire card as (suit, rank)."""
    return (int(card.suit), int(card.rank))


def wire_cards(cards: Iterable[cards_pb2.Card]) -> list[Card]:
    """Wire cards as (suit, rank) pairs, in order."""
    return [wire_card(card) for card in cards]


def winning_index(cards: Sequence[Card], trump: int) -> int:
    """Index of the card that currently takes the trick, ranks compared as numbers (``trump`` 0
    = no trumps)."""
    best = 0
    for index in range(1, len(cards)):
        suit, rank = cards[index]
        win_suit, win_rank = cards[best]
        if (suit == win_suit and rank > win_rank) or (suit == trump and win_suit != trump):
            best = index
    return best


def beats(card: Card, winner: Card, trump: int) -> bool:
    """Whether ``card`` played now would take the trick from ``winner`` (ranks as numbers)."""
    if card[0] == winner[0]:
        return card[1] > winner[1]
    return card[0] == trump
