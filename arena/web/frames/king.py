"""King's table from the engine's observations: the contract, the auction, trumps, tricks."""

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
from referee.games.king import CONTRACT_NAMES, NUM_HANDS, NUM_TRICKS, POSITIVE, KingObservation


def _contract(number: int) -> str:
    return CONTRACT_NAMES.get(number, "")


def table(
    views: Sequence[KingObservation], name: CardNamer, describe: Callable[[int], str]
) -> Json:
    """The whole table, hands face up, from every seat's observation."""
    public = views[0]
    seats = len(views)
    auction = public.auction
    drawn = []
    for seat, view in enumerate(views):
        tags = ["dealer"] if seat == public.dealer else []
        if auction is not None and auction.buyer == seat:
            tags.append(f"bought for {plural(auction.price, 'trick')}")
        tags.append(plural(public.tricks_won[seat], "trick"))
        drawn.append(seat_view(name.all(view.hand), None, tags))
    facts = [fact("Contract", _contract(public.contract))]
    if public.contract == POSITIVE:
        trump = public.trump
        facts.append(
            fact("Trumps", "not named yet")
            if trump < 0
            else fact("Trumps", SUIT_WORDS[trump], suit=suit_letter(trump))
        )
    last = public.completed_tricks[-1] if public.completed_tricks else None
    return {
        "heading": f"Hand {public.hand_number} of {NUM_HANDS} · {_contract(public.contract)}",
        "dealer": public.dealer,
        "seats": drawn,
        "facts": facts,
        "trick": trick_view(public.trick_leader, name.all(public.current_trick), seats),
        "last_trick": None
        if last is None
        else trick_view(last[0], name.all(last[1]), seats, last[2]),
        "melds": [],
        "calls": []
        if auction is None
        else [{"seat": seat, "text": describe(action)} for seat, action in auction.calls],
        "pile": None,
        "sheet": [
            score_row(f"Hand {h.hand_number}: {_contract(h.contract)}", h.points)
            for h in public.previous_hands
        ],
        "hand_points": list(public.hand_points),
    }


class Live(LiveRules):
    """King's live table: tricks, and 13 cards each every hand."""

    in_tricks = True

    def cards_dealt(self, hand: LiveHand) -> int | None:
        return NUM_TRICKS

    def tricks_per_hand(self, hand: LiveHand) -> int | None:
        return NUM_TRICKS
