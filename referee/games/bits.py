"""Bitmask helpers shared by the games that keep hands as one int per seat (stdlib only)."""

from __future__ import annotations


def set_bits(mask: int) -> tuple[int, ...]:
    """The positions of the 1 bits of ``mask``, lowest first (card ids of a hand mask)."""
    bits = []
    while mask:
        low = mask & -mask
        bits.append(low.bit_length() - 1)
        mask ^= low
    return tuple(bits)


def suit_card_tables(suits: int, suit_size: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``table[s][m]``: the card ids of suit ``s`` whose in-suit bits are ``m``, ascending.

    For decks numbered ``suit_size * s + i``; turns "this hand's cards of suit s" into one
    shift, one mask and one index, which keeps legal-move generation cheap.
    """
    return tuple(
        tuple(tuple(suit_size * s + c for c in set_bits(m)) for m in range(1 << suit_size))
        for s in range(suits)
    )
