"""Pinochle's table from the engine's observations: trump and turn-up, stock, melds, tricks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena.web.frames.common import (
    SUIT_WORDS,
    CardNamer,
    Json,
    fact,
    plural,
    score_row,
    seat_view,
    suit_letter,
    trick_view,
)
from arena.web.frames.live_rules import LiveHand, LiveRules
from referee.games.bits import set_bits
from referee.games.pinochle import (
    HAND_SIZE,
    MELD_NAMES,
    PHASE_NO_STOCK,
    PHASE_OVER,
    TRICKS_PER_HAND,
    HandResult,
    PinochleObservation,
)


def seat_tags(public: PinochleObservation, seat: int) -> list[str]:
    """Dealer, this hand's meld and trick points, tricks taken."""
    table = public.table
    mine = table.seats[seat]
    tags = ["dealer"] if seat == table.dealer else []
    if table.declared_by == seat:
        tags.append("declared out")
    tags.append(f"melds {mine.hand_points}")
    tags.append(f"{mine.trick_points} in tricks")
    tags.append(plural(mine.tricks_won, "trick"))
    return tags


def hand_points(hand: HandResult) -> list[int]:
    """What each seat made in a finished hand: melds, card points and the last trick."""
    parts = zip(hand.meld_points, hand.card_points, hand.last_trick, strict=True)
    return [meld + cards + last for meld, cards, last in parts]


def phase_text(phase: int) -> str:
    """Which half of the hand it is."""
    if phase == PHASE_OVER:
        return "game over"
    return "no stock: follow, trump, beat" if phase == PHASE_NO_STOCK else "stock in play"


def table(
    views: Sequence[PinochleObservation], name: CardNamer, describe: Callable[[int], str]
) -> Json:
    """The whole table, hands face up, from both seats' observations."""
    public = views[0]
    table = public.table
    facts = [
        fact("Trump", SUIT_WORDS[table.trump], suit=suit_letter(table.trump)),
        fact("Turn-up", "taken")
        if table.turn_up is None
        else fact("Turn-up", cards=[name(table.turn_up)]),
        fact("Stock", plural(table.stock_size, "card")),
        fact("Phase", phase_text(table.phase)),
    ]
    drawn = []
    for seat, view in enumerate(views):
        seat_table = table.seats[seat]
        entry = seat_view(name.all(set_bits(view.hand)), None, seat_tags(public, seat))
        entry["tabled"] = name.all(set_bits(seat_table.tabled))
        drawn.append(entry)
    last = table.completed_tricks[-1] if table.completed_tricks else None
    return {
        "heading": f"Hand {table.hand_number} · game to {table.target}",
        "dealer": table.dealer,
        "seats": drawn,
        "facts": facts,
        "trick": trick_view(table.trick_leader, name.all(public.current_trick), 2),
        "last_trick": None
        if last is None
        else trick_view(last.leader, name.all(last.cards), 2, last.winner),
        "melds": [
            {
                "seat": meld.seat,
                "name": MELD_NAMES[meld.kind],
                "cards": name.all(meld.cards),
                "points": meld.points,
            }
            for meld in table.melds
        ],
        "calls": [],
        "pile": None,
        "sheet": [
            score_row(f"Hand {i + 1}", hand_points(h)) for i, h in enumerate(table.previous_hands)
        ],
    }


STOCK_TRICKS = HAND_SIZE
"""Pinochle's tricks with a draw after them: the 24-card stock lasts 12 tricks."""


class Live(LiveRules):
    """Pinochle's live table: tricks, the turn-up, melds that score, a draw after each of the
    first 12 tricks."""

    in_tricks = True
    turn_up_label = "Turn-up"
    melds_score = True

    def cards_dealt(self, hand: LiveHand) -> int | None:
        if not hand.trick and 0 < hand.tricks <= STOCK_TRICKS:
            # Between a trick and the draws: whether they happened yet depends on whether
            # the winner has a meld turn, which spectators must not learn.
            return None
        return HAND_SIZE + min(hand.tricks, STOCK_TRICKS)  # a draw each

    def tricks_per_hand(self, hand: LiveHand) -> int | None:
        return TRICKS_PER_HAND
