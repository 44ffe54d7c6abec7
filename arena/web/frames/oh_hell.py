"""Oh Hell's table from the engine's observations: hands, the trump card, bids, tricks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena.web.frames.common import (
    CardNamer,
    Json,
    fact,
    plural,
    score_row,
    seat_view,
    trick_view,
)
from referee.games.oh_hell import OhHellObservation


def table(
    views: Sequence[OhHellObservation], name: CardNamer, describe: Callable[[int], str]
) -> Json:
    """The whole table, hands face up, from every seat's observation."""
    public = views[0]
    seats = len(views)
    bids = public.bids
    drawn = []
    for seat, view in enumerate(views):
        tags = [] if seat != public.dealer else ["dealer"]
        if bids[seat] is not None:
            tags.append(f"bid {bids[seat]}")
        if not public.bidding:
            tags.append(plural(public.tricks_won[seat], "trick"))
        drawn.append(seat_view(name.all(view.hand), None, tags))
    last = public.completed_tricks[-1] if public.completed_tricks else None
    return {
        "heading": (
            f"Hand {public.hand_number} of {public.num_hands} · "
            f"{plural(public.hand_size, 'card')} each"
        ),
        "dealer": public.dealer,
        "seats": drawn,
        "facts": [
            fact("Trump", cards=[name(public.trump_card)]),
            fact("Scoring", public.scoring),
        ],
        "trick": None
        if public.bidding
        else trick_view(public.trick_leader, name.all(public.current_trick), seats),
        "last_trick": None
        if last is None
        else trick_view(last[0], name.all(last[1]), seats, last[2]),
        "melds": [],
        "calls": [
            {"seat": seat, "text": f"bid {bid}"} for seat, bid in enumerate(bids) if bid is not None
        ],
        "pile": None,
        "sheet": [
            score_row(f"Hand {i + 1} ({plural(h.hand_size, 'card')})", h.points)
            for i, h in enumerate(public.previous_hands)
        ],
    }
