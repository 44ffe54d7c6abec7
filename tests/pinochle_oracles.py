"""Pinochle's meld rules as their plain definitions: the oracles the fast tables are tested by.

The rules decide melds from tables built at import (``held_meld_actions``, ``allowed_melds``,
``held_families``); these functions say the same thing the slow, readable way, one meld and one
card at a time, and ``tests/test_pinochle_rules.py`` checks the tables against them.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.games.pinochle import (
    FLUSH,
    MELD_BASE,
    MELD_CLASS,
    MELDS,
    held_families,
    held_meld_actions,
)

_MELD_CLASS = tuple(MELD_CLASS[spec.kind] for spec in MELDS)


def meld_is_legal(meld: int, hand: int, tabled: int, usage: Sequence[int], trump: int) -> bool:
    """Whether a player holding ``hand`` (``tabled`` of it on the table) may declare ``meld``.

    ``usage[3 * card + cls]`` is the highest value of a class-``cls`` meld that ``card`` was
    already part of (0 if none). Checks: the cards are all held; at least one comes from the
    concealed hand; a flush is of trumps; every tabled card is reused only in a meld of another
    class or of higher value in the same class (PIN-E2, PIN-E3).
    """
    spec = MELDS[meld]
    mask = spec.mask
    if mask & ~hand or not mask & ~tabled:
        return False
    if spec.kind == FLUSH and spec.suit != trump:
        return False
    reused = mask & tabled
    if reused:
        value = spec.points(trump)
        cls = _MELD_CLASS[meld]
        while reused:
            low = reused & -reused
            if usage[3 * (low.bit_length() - 1) + cls] >= value:
                return False
            reused ^= low
    return True


def may_meld(hand: int) -> bool:
    """A quick test: whether ``hand`` holds the cards of any meld (tabled or not)."""
    return held_families(hand) != 0


def legal_melds(hand: int, tabled: int, usage: Sequence[int], trump: int) -> tuple[int, ...]:
    """Every meld id the player may declare now, ascending."""
    return tuple(
        a - MELD_BASE
        for a in held_meld_actions(hand, trump)
        if not tabled or meld_is_legal(a - MELD_BASE, hand, tabled, usage, trump)
    )
