"""What a live table knows of one game beyond its spectator events (``arena.web.frames.live``).

A game's frames module (``arena/web/frames/<game>.py``) may define ``Live``, a ``LiveRules``
subclass that says what its rules make public: whether it is played in tricks, how many cards
each seat holds, when a hand is over. A game without one gets ``LiveRules``: a table of its
calls, moves and scores, hands as backs of unknown size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.web.frames.common import Json
from referee.games.api import Game


@dataclass
class LiveHand:
    """What spectators have seen of the current hand."""

    number: int = 1
    plays: int = 0
    plays_by_seat: list[int] = field(default_factory=list)
    trick: list[str] = field(default_factory=list)
    trick_leader: int = -1
    last_trick: Json | None = None
    tricks: int = 0
    calls: list[Json] = field(default_factory=list)
    melds: list[Json] = field(default_factory=list)
    pile_top: str | None = None
    announced: str | None = None
    started: bool = False
    """Whether a move of this hand was seen (before that, the match may have ended instead)."""
    made: bool = False
    """A contract is made (Klaberjass: a maker is known, so the completion deal was dealt)."""


class LiveRules:
    """A game's public rules as a live table uses them (the defaults: none of them)."""

    in_tricks = False
    """Played in tricks of one card per seat: a ``play`` move puts its card on the trick."""
    hand_label = "Hand"
    """How the table names a hand ("Deal" in Mau-Mau)."""
    turn_up_label: str | None = None
    """How the table names the card ``PublicTable.turn_up`` carries (None: it has none)."""
    pile = False
    """The table has a discard pile (``PublicTable.pile_top`` and the announced suit)."""
    melds_score = False
    """A meld changes the scores without ending the hand (Pinochle)."""

    def __init__(self, game: Game) -> None:
        self.num_seats = game.num_seats

    def cards_dealt(self, hand: LiveHand) -> int | None:
        """How many cards each seat was dealt this hand (once it started), when public."""
        return None

    def tricks_per_hand(self, hand: LiveHand) -> int | None:
        """How many tricks this hand has, if known (its last trick ends it)."""
        return None

    def called(self, hand: LiveHand, text: str) -> None:
        """A call (a bid, a pass, a contract named) was seen: note what it makes public."""

    def voided(self, hand: LiveHand) -> bool:
        """Whether the calls seen void the hand without a card played (then a new deal)."""
        return False
