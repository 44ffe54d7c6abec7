"""A heuristic Mau-Mau bot that plays from each request alone, reading only the wire messages.

Sample code for bot authors: everything it knows comes from the ``MauMauObservation`` and the
legal actions of one ``ChooseActionRequest``; it keeps no state between requests.

- It always announces "last card" (a legal action with ``announce_last_card`` is preferred over
  the same discard without it), so it never pays the five-card penalty.
- It goes out whenever it can, with two Jacks (×4) or one Jack (×2) if that is an option.
- Otherwise it keeps Jacks (wild) for when it has nothing else, and picks the discard that best
  keeps it able to follow next turn (a stuck turn costs a 50-point fine, far more than a card in
  hand): mostly the suit it holds most of, so the suit it sets tends to come back to it. Among
  equals it sheds the card worth the most penalty points.
- It uses specials against the seat that plays next when that seat is about to go out: 8 (draw
  3 and skip) and Ace (skip); 7 against the previous seat; a Queen to turn play away from a
  next seat holding fewer cards than the previous one. (Skipping a seat otherwise spares it a
  turn on which it could be stuck and fined, so it does not waste them.)
- It prefers a discard the seat that must follow it probably cannot follow (estimated from the
  cards not yet seen: neither in its hand nor on the pile), since that seat is then fined.
- With a Jack it announces the suit it holds most of (never "nothing").
- Having drawn a playable card (option draw_then_may_play) it always discards it.
"""

from __future__ import annotations

from dataclasses import dataclass

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, mau_mau_pb2

SEVEN, EIGHT, JACK, QUEEN, ACE = 7, 8, 11, 12, 14
POINTS = {JACK: 20, EIGHT: 20, SEVEN: 15, ACE: 15, 13: 10, QUEEN: 10, 10: 10, 9: 9}
"""Penalty points of a card left in hand by rank; 2-6 count their face value."""


@dataclass(frozen=True)
class Weights:
    """How the heuristic weighs a discard. The defaults were tuned against random bots
    (benchmarks/winrate.py): in this variant a stuck turn costs 50 points while a card left in
    hand costs about 10, so being able to follow matters most. Other weights make deliberately
    different (weaker) bots that are still deterministic (benchmarks/fairness.py)."""

    value: float = 0.5
    """Per penalty point shed."""
    jack_keep: float = 200
    """Cost of spending a Jack (wild) before going out: only when nothing else can be
    discarded."""
    special: float = 15
    """For an 8, Ace, 7 or Queen that stops the seat it hits from going out with its last
    card."""
    cover: float = 100.0
    """Times the estimated chance of being able to discard next turn."""
    persist: float = 8.0
    """How much likelier the suit just set (and its rank) is to be on top at the next turn."""
    block: float = 50.0
    """Times the chance that the seat facing the discard cannot follow it (and is fined 50)."""


TUNED = Weights()
"""The heuristic's own weights."""

FULL_DECK = frozenset((suit, rank) for suit in range(1, 5) for rank in range(2, 15))


def points(rank: int) -> int:
    """Penalty value of a card of ``rank``."""
    return POINTS.get(rank, rank)


def _score(
    action: mau_mau_pb2.MauMauDiscard,
    hand: list[tuple[int, int]],
    unseen: set[tuple[int, int]],
    sizes: tuple[int, int, int],
    num_seats: int,
    weights: Weights,
) -> float:
    next_size, previous_size, after_next_size = sizes
    discarded = [(int(c.suit), int(c.rank)) for c in action.cards]
    rest = list(hand)
    for card in discarded:
        rest.remove(card)
    if not rest:  # going out: the more Jacks, the bigger the others' penalty
        return 10_000 + 1_000 * sum(rank == JACK for _, rank in discarded)
    score = weights.value * sum(points(rank) for _, rank in discarded)
    suit, rank = discarded[0]
    # Skipping a seat spares it a turn on which it might be stuck (and fined), so specials are
    # kept for a seat about to go out.
    danger_next = int(next_size == 1)
    danger_previous = int(previous_size == 1)
    if rank == JACK:
        # Keep the wild card for when nothing else fits, unless the hand is nearly done.
        score -= weights.jack_keep * len(discarded)
        announced = int(action.announced_suit)
        if not announced:
            return score - 1_000
        blocked = stuck_chance(unseen, next_size, announced, JACK)
        covered = coverage(rest, announced, JACK, weights.persist)
        return score + weights.cover * covered + weights.block * blocked
    score += weights.cover * coverage(rest, suit, rank, weights.persist)
    # The seat that must follow this card: the next one, or the one after a skip, or (after a
    # Queen) the previous one.
    facing = {EIGHT: after_next_size, ACE: after_next_size, QUEEN: previous_size}.get(
        rank, next_size
    )
    if num_seats > 2 or rank not in (EIGHT, ACE):
        score += weights.block * stuck_chance(unseen, facing + 3 * (rank == EIGHT), suit, rank)
    if rank == EIGHT:
        score += weights.special * danger_next * 1.5
    elif rank == ACE:
        score += weights.special * danger_next
    elif rank == SEVEN:
        score += weights.special * danger_previous
    elif rank == QUEEN and num_seats > 2 and next_size < previous_size:
        score += weights.special * danger_next
    return score


def choose_action(
    request: bot_service_pb2.ChooseActionRequest, weights: Weights = TUNED
) -> game_pb2.Action:
    """The heuristic's pick among ``request.legal_actions``, weighing discards by ``weights``."""
    legal = list(request.legal_actions)
    if len(legal) == 1:
        return legal[0]
    obs = request.observation.mau_mau
    discards = [a for a in legal if a.mau_mau.WhichOneof("action") == "discard"]
    if not discards:
        return legal[0]
    # Always announce the last card: drop any discard whose announced twin is offered.
    announced = {_key(a.mau_mau.discard) for a in discards if a.mau_mau.discard.announce_last_card}
    discards = [
        a
        for a in discards
        if a.mau_mau.discard.announce_last_card or _key(a.mau_mau.discard) not in announced
    ]
    hand = [(int(c.suit), int(c.rank)) for c in obs.hand]
    pile = {(int(c.suit), int(c.rank)) for c in obs.discard_pile}
    unseen = set(FULL_DECK) - pile - set(hand)
    n = len(obs.seats)
    step = 1 if obs.clockwise else -1
    sizes = (
        obs.seats[(request.seat + step) % n].hand_size,
        obs.seats[(request.seat - step) % n].hand_size,
        obs.seats[(request.seat + 2 * step) % n].hand_size,
    )
    return max(discards, key=lambda a: _score(a.mau_mau.discard, hand, unseen, sizes, n, weights))


def stuck_chance(unseen: set[tuple[int, int]], size: int, suit: int, rank: int) -> float:
    """Chance that a seat holding ``size`` unseen cards cannot follow ``suit``/``rank``."""
    if not unseen:
        return 0.0
    matching = sum(1 for s, r in unseen if s == suit or r in (rank, JACK))
    return float((1 - matching / len(unseen)) ** size)


def coverage(
    rest: list[tuple[int, int]], suit: int, rank: int, persist: float = TUNED.persist
) -> float:
    """Chance that ``rest`` can follow the top card at this seat's next turn, estimated.

    The top card is taken as random, but with the suit just set (``suit``) ``persist`` times as
    likely as each other suit (the others often follow it) and its ``rank`` as likely again
    (``persist``: the weights' ``persist``).
    """
    if any(r == JACK for _, r in rest):
        return 1.0
    suits = {s for s, _ in rest}
    ranks = {r for _, r in rest}
    total = hit = 0.0
    for top_suit in range(1, 5):
        for top_rank in range(2, 15):
            if top_rank == JACK:
                continue
            weight = (persist if top_suit == suit else 1.0) + (persist if top_rank == rank else 0)
            total += weight
            if top_suit in suits or top_rank in ranks:
                hit += weight
    return hit / total


def _key(discard: mau_mau_pb2.MauMauDiscard) -> tuple[tuple[int, int], ...]:
    cards = tuple(sorted((int(c.suit), int(c.rank)) for c in discard.cards))
    return (*cards, (int(discard.announced_suit), 0))


def make_mau_mau_heuristic_bot(seed: int | None = None, weights: Weights = TUNED) -> Bot:
    """The heuristic bot weighing discards by ``weights`` (deterministic; ``seed`` is
    accepted for a uniform interface)."""

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        return choose_action(request, weights)

    name = "mau-mau-heuristic" if weights == TUNED else "mau-mau-heuristic-reweighted"
    return Bot(choose=choose, name=name, version="1")
