"""Bitmask helpers shared by the games that keep hands as one int per seat (stdlib only)."""

from __future__ import annotations


def _set_bits_slowly(mask: int) -> tuple[int, ...]:
    bits = []
    while mask:
        low = mask & -mask
        bits.append(low.bit_length() - 1)
        mask ^= low
    return tuple(bits)


_BYTE_BITS = tuple(
    tuple(tuple(8 * index + bit for bit in _set_bits_slowly(byte)) for byte in range(256))
    for index in range(8)
)
"""``_BYTE_BITS[i][b]``: the positions of the 1 bits of byte ``b`` when it is byte ``i``."""


def set_bits(mask: int) -> tuple[int, ...]:
    """The positions of the 1 bits of ``mask``, lowest first (card ids of a hand mask).

    Masks below 2**64 (every deck here) take eight table lookups instead of a loop per bit:
    observations list a hand at every decision.
    """
    if mask >> 64:
        return _set_bits_slowly(mask)
    b0, b1, b2, b3, b4, b5, b6, b7 = _BYTE_BITS
    return (
        b0[mask & 255]
        + b1[mask >> 8 & 255]
        + b2[mask >> 16 & 255]
        + b3[mask >> 24 & 255]
        + b4[mask >> 32 & 255]
        + b5[mask >> 40 & 255]
        + b6[mask >> 48 & 255]
        + b7[mask >> 56]
    )


def suit_card_tables(suits: int, suit_size: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``table[s][m]``: the card ids of suit ``s`` whose in-suit bits are ``m``, ascending.

    For decks numbered ``suit_size * s + i``; turns "this hand's cards of suit s" into one
    shift, one mask and one index, which keeps legal-move generation cheap.
    """
    return tuple(
        tuple(tuple(suit_size * s + c for c in set_bits(m)) for m in range(1 << suit_size))
        for s in range(suits)
    )
