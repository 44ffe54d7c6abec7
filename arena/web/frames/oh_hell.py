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
from arena.web.frames.live_rules import LiveHand, LiveRules
from referee.games.api import Game
from referee.games.oh_hell import OhHellObservation, hand_sizes


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


class Live(LiveRules):
    """Oh Hell's live table: tricks, the trump card, and hand sizes from the deal schedule."""

    in_tricks = True
    turn_up_label = "Trump"

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        self.schedule = hand_sizes(str(game.options["deal_style"]), game.num_seats)

    def cards_dealt(self, hand: LiveHand) -> int | None:
        return self.tricks_per_hand(hand)

    def tricks_per_hand(self, hand: LiveHand) -> int | None:
        """As many tricks as cards in each hand, the schedule's."""
        index = hand.number - 1
        return self.schedule[index] if index < len(self.schedule) else None
