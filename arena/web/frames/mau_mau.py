"""Mau-Mau's table from the engine's observations: hands, the pile, the announced suit, fines."""

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
)
from arena.web.frames.live_rules import LiveRules
from referee.games.bits import set_bits
from referee.games.mau_mau import FINE, MauMauObservation

PILE_SHOWN = 5
"""How many of the pile's top cards are drawn (the top one is the card to match)."""


def pile(view: MauMauObservation, name: CardNamer) -> Json:
    """The discard pile's top cards, its size, the stock's size and what a Jack announced."""
    announced = view.announced_suit
    return {
        "cards": name.all(view.discard_pile[-PILE_SHOWN:]),
        "size": len(view.discard_pile),
        "stock": view.stock_size,
        "announced": suit_letter(announced - 1) if announced else None,
        "any_card": view.any_card,
    }


def facts(view: MauMauObservation, name: CardNamer) -> list[Json]:
    """The start card, the direction of play and what must be matched."""
    lines = [
        fact("Start card", cards=[name(view.table.start_card)]),
        fact("Direction", "clockwise" if view.table.clockwise else "counter-clockwise"),
    ]
    if view.announced_suit:
        suit = view.announced_suit - 1
        lines.append(fact("Announced", SUIT_WORDS[suit], suit=suit_letter(suit)))
    elif view.any_card:
        lines.append(fact("Announced", "any card"))
    return lines


def seat_tags(view: MauMauObservation, seat: int) -> list[str]:
    """What everyone knows of a seat: dealer, fines, a bar."""
    tags = ["dealer"] if seat == view.table.dealer else []
    if view.fines[seat]:
        count = view.fines[seat]
        tags.append(f"{plural(count, 'fine')} ({FINE * count})")
    if view.barred[seat]:
        tags.append("barred")
    return tags


def sheet(view: MauMauObservation) -> list[Json]:
    """One row per finished deal."""
    return [
        score_row(f"Deal {d.deal_number} (×{d.multiplier})", d.points)
        for d in view.table.previous_deals
    ]


def table(
    views: Sequence[MauMauObservation], name: CardNamer, describe: Callable[[int], str]
) -> Json:
    """The whole table, hands face up, from every seat's observation."""
    public = views[0]
    return {
        "heading": (
            f"Deal {public.table.deal_number} · {public.table.scoring} scoring "
            f"to {public.table.target}"
        ),
        "dealer": public.table.dealer,
        "seats": [
            seat_view(name.all(set_bits(view.hand)), None, seat_tags(public, seat))
            for seat, view in enumerate(views)
        ],
        "facts": facts(public, name),
        "trick": None,
        "last_trick": None,
        "melds": [],
        "calls": [],
        "pile": pile(public, name),
        "sheet": sheet(public),
    }


def hand_count_tag(count: int) -> str:
    """``"3 cards"``: what a spectator is told of a hidden hand."""
    return plural(count, "card")


class Live(LiveRules):
    """Mau-Mau's live table: deals, the pile and the announced suit; draws and penalties make
    hand sizes a matter of counting, so they are not shown."""

    hand_label = "Deal"
    pile = True
