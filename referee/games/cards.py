"""Suits, ranks and card names shared by all games (standard library only).

Each game numbers its own cards (decks differ: 52, 48 with duplicates, 32) but names suits and
ranks the same way, so a card is always described as ``(suit, rank, copy)``. Notation follows
the rules reference: ``A K Q J T 9 … 2`` plus a suit letter ``S H D C``.
"""

from __future__ import annotations

from enum import IntEnum


class Suit(IntEnum):
    """Suit numbers match the protobuf ``Suit`` enum (zero is reserved for "unspecified")."""

    CLUBS = 1
    DIAMONDS = 2
    HEARTS = 3
    SPADES = 4


class Rank(IntEnum):
    """Rank numbers match the protobuf ``Rank`` enum: the face value, ace high."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14


SUIT_LETTERS = {Suit.CLUBS: "C", Suit.DIAMONDS: "D", Suit.HEARTS: "H", Suit.SPADES: "S"}
SUIT_SYMBOLS = {Suit.CLUBS: "♣", Suit.DIAMONDS: "♦", Suit.HEARTS: "♥", Suit.SPADES: "♠"}
RANK_LETTERS = {rank: str(int(rank)) for rank in Rank if rank <= Rank.NINE} | {
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
}
_SUIT_BY_LETTER = {letter: suit for suit, letter in SUIT_LETTERS.items()}
_RANK_BY_LETTER = {letter: rank for rank, letter in RANK_LETTERS.items()} | {"10": Rank.TEN}


def card_name(suit: Suit, rank: Rank) -> str:
    """``"QS"`` for the queen of spades."""
    return RANK_LETTERS[rank] + SUIT_LETTERS[suit]


def parse_card(text: str) -> tuple[Suit, Rank]:
    """Inverse of ``card_name``; also accepts ``10`` for ten and suit symbols."""
    text = text.strip().upper()
    for suit, symbol in SUIT_SYMBOLS.items():
        text = text.replace(symbol, SUIT_LETTERS[suit])
    rank_text, suit_text = text[:-1], text[-1:]
    if rank_text not in _RANK_BY_LETTER or suit_text not in _SUIT_BY_LETTER:
        raise ValueError(f"not a card: {text!r}")
    return _SUIT_BY_LETTER[suit_text], _RANK_BY_LETTER[rank_text]


class StandardDeck:
    """The 52-card deck as ids ``0..51``: ``id = 13 * (suit - 1) + (rank - 2)``.

    Within a suit a larger id is a higher card (ace high), which is what plain trick-taking needs.
    """

    SIZE = 52

    @staticmethod
    def card(suit: Suit, rank: Rank) -> int:
        """The id of a card."""
        return 13 * (suit - 1) + (rank - 2)

    @staticmethod
    def suit(card: int) -> Suit:
        """The suit of a card id."""
        return Suit(card // 13 + 1)

    @staticmethod
    def rank(card: int) -> Rank:
        """The rank of a card id."""
        return Rank(card % 13 + 2)

    @classmethod
    def name(cls, card: int) -> str:
        """``"QS"`` for the id of the queen of spades."""
        return card_name(cls.suit(card), cls.rank(card))

    @classmethod
    def parse(cls, text: str) -> int:
        """The id of a card written like ``"QS"`` or ``"10♦"``."""
        return cls.card(*parse_card(text))

    @staticmethod
    def suit_mask(suit: Suit) -> int:
        """The bitmask of every card of ``suit``."""
        return 0x1FFF << (13 * (suit - 1))
