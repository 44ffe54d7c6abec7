"""Klaberjass's table from the engine's observations: turn-up, bidding, sequences, bella."""

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
from referee.games.cards import RANK_LETTERS
from referee.games.klaberjass import KlaberjassObservation
from referee.games.klaberjass.rules import RANKS, TRICKS


def seat_tags(public: KlaberjassObservation, own: KlaberjassObservation, seat: int) -> list[str]:
    """Dealer, maker, the declared sequence, bella and tricks of one seat."""
    table = public.table
    mine = own.table.seats[seat]  # its own view: the sequence it holds, shown or not
    tags = ["dealer"] if seat == table.dealer else []
    if seat == table.maker:
        tags.append("maker")
    if mine.declared_length:
        tags.append(
            f"declared {mine.declared_length} to the {RANK_LETTERS[RANKS[mine.declared_top]]}"
        )
    if mine.sequence_points:
        tags.append(f"sequence +{mine.sequence_points}")
    if mine.bella:
        tags.append("bella +20")
    tags.append(plural(public.tricks_won[seat], "trick"))
    tags.append(f"{public.card_points[seat]} card points")
    return tags


def table(
    views: Sequence[KlaberjassObservation], name: CardNamer, describe: Callable[[int], str]
) -> Json:
    """The whole table, hands face up, from both seats' observations."""
    public = views[0]
    table = public.table
    facts = [fact("Turn-up", cards=[name(table.turn_up)])]
    if table.trump >= 0:
        facts.append(fact("Trump", SUIT_WORDS[table.trump], suit=suit_letter(table.trump)))
    if table.bottom_card >= 0:
        facts.append(fact("Bottom card", cards=[name(table.bottom_card)]))
    if table.dix_exchanged_by >= 0:
        facts.append(fact("Dix", f"seat {table.dix_exchanged_by} took the turn-up"))
    melds = [
        {
            "seat": seat,
            "name": "sequence",
            "cards": name.all(view.table.seats[seat].shown_sequences),
            "points": view.table.seats[seat].sequence_points,
        }
        for seat, view in enumerate(views)
        if view.table.seats[seat].shown_sequences
    ]
    current = public.current_trick
    last = public.completed_tricks[-1] if public.completed_tricks else None
    return {
        "heading": f"Hand {table.hand_number} · game to {table.target_score}",
        "dealer": table.dealer,
        "seats": [
            seat_view(name.all(set_bits(view.hand)), None, seat_tags(public, view, seat))
            for seat, view in enumerate(views)
        ],
        "facts": facts,
        "trick": trick_view(current.leader, name.all(current.cards), 2),
        "last_trick": None
        if last is None
        else trick_view(last.leader, name.all(last.cards), 2, last.winner),
        "melds": melds,
        "calls": [{"seat": seat, "text": describe(action)} for seat, action in table.bids],
        "pile": None,
        "sheet": [
            score_row(f"Hand {i + 1}" + (" (void)" if h.trump < 0 else ""), h.points)
            for i, h in enumerate(table.previous_hands)
        ],
    }


FIRST_DEAL = 6
"""Klaberjass deals 3 + 3 cards before the bidding, the rest of the 9 once a maker is known."""


class Live(LiveRules):
    """Klaberjass's live table: tricks, the turn-up, the two deals, four passes void a hand."""

    in_tricks = True
    turn_up_label = "Turn-up"

    def cards_dealt(self, hand: LiveHand) -> int | None:
        return TRICKS if hand.made or hand.plays else FIRST_DEAL

    def tricks_per_hand(self, hand: LiveHand) -> int | None:
        return TRICKS

    def called(self, hand: LiveHand, text: str) -> None:
        if text.startswith(("accept", "name ")):
            hand.made = True

    def voided(self, hand: LiveHand) -> bool:
        passes = sum(call["text"] == "pass" for call in hand.calls)
        return passes == 4 and not hand.made
