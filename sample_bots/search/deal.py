"""Dealing the unseen cards to the other seats, consistent with what the observer knows.

A determinization ("a world") gives every hidden holder (another seat, or the undealt stock) as
many cards as it is known to hold, drawn from the cards the observer has not seen, and never a
card of a suit the holder has shown it lacks (by failing to follow suit).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


def deal_unseen(
    unseen: Sequence[int],
    sizes: Sequence[int],
    voids: Sequence[frozenset[int]],
    suit_of: Callable[[int], int],
    rng: random.Random,
    attempts: int = 20,
) -> list[list[int]]:
    """Cards for each holder: ``sizes[h]`` of them, none of a suit in ``voids[h]``.

    ``sum(sizes)`` must equal ``len(unseen)``. Cards are placed most constrained first, each to a
    random holder with room and no void in its suit, weighted by the room left; a dead end is
    retried, and after ``attempts`` failures the voids are ignored (better a slightly wrong world
    than none).
    """
    if sum(sizes) != len(unseen):
        raise ValueError(f"{len(unseen)} unseen cards for holders of {sum(sizes)} cards")
    if not any(voids):
        cards = list(unseen)
        rng.shuffle(cards)
        hands: list[list[int]] = []
        start = 0
        for size in sizes:
            hands.append(cards[start : start + size])
            start += size
        return hands
    order = sorted(unseen, key=lambda card: -sum(suit_of(card) in void for void in voids))
    for _ in range(attempts):
        attempt = _try_deal(order, sizes, voids, suit_of, rng)
        if attempt is not None:
            return attempt
    return deal_unseen(unseen, sizes, [frozenset()] * len(sizes), suit_of, rng)


def _try_deal(
    order: Sequence[int],
    sizes: Sequence[int],
    voids: Sequence[frozenset[int]],
    suit_of: Callable[[int], int],
    rng: random.Random,
) -> list[list[int]] | None:
    room = list(sizes)
    hands: list[list[int]] = [[] for _ in sizes]
    holders = range(len(sizes))
    for card in order:
        suit = suit_of(card)
        eligible = [h for h in holders if room[h] and suit not in voids[h]]
        if not eligible:
            return None
        pick = rng.random() * sum(room[h] for h in eligible)
        for holder in eligible:
            pick -= room[holder]
            if pick < 0:
                break
        hands[holder].append(card)
        room[holder] -= 1
    return hands
