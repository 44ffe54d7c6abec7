"""Live tables: a match being played drawn from its spectator events alone.

A ``MoveEvent`` (``referee.codec.watch``) carries the seat, the move as spectators may be told
it ("play QS", "bid 2", "discard JH announcing spades"), whether the referee played it after a
fault, the scores and the public table after it (``PublicTable``: the trump card or turn-up,
the top of the Mau-Mau pile and the announced suit, Mau-Mau's hand sizes). Nothing else
reaches a spectator, so a live table shows only what those events say: the cards of the trick
being played and of the last trick, bids and calls, melds, the turn-up, the pile, the scores,
and hands as backs (with their size where the rules make it public). An event without a
table (from an arena older than ``PublicTable``) is drawn from its description alone. Cards
leave the table when their hand ends, because the next deal may put them in a hidden hand. The
finished record then replaces the live frames (``frames_for_record``): everything is shown
once the match is over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.web.frames.common import Json, fact, plural, seat_view, trick_view, wire_card_name
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import cards_pb2, options_pb2
from referee.codec.common import options_from_wire
from referee.games.api import RulesError
from referee.games.cards import SUIT_LETTERS, Suit
from referee.games.king import NUM_TRICKS as KING_TRICKS
from referee.games.klaberjass.rules import TRICKS as KLABERJASS_TRICKS
from referee.games.oh_hell import hand_sizes
from referee.games.pinochle.rules import HAND_SIZE as PINOCHLE_HAND
from referee.games.pinochle.rules import TRICKS_PER_HAND as PINOCHLE_TRICKS
from referee.games.registry import make_game

PublicTable = arena_service_pb2.PublicTable

MAX_LIVE_EVENTS = 100_000
"""A live table refuses events past this many (a real match makes a few thousand at most)."""

_CARD = re.compile(r"\b(10|[2-9TJQKA])([CDHS])(#[01])?(?![\w#])")
"""A card as descriptions write it: ``QS``, ``TH``, Pinochle's ``QS#1``."""

_SUIT_WORDS = {"clubs": "C", "diamonds": "D", "hearts": "H", "spades": "S"}

TRICK_GAMES = {"oh-hell", "king", "klaberjass", "pinochle"}
"""Games played in tricks of one card per seat."""

LIVE_CALLS_SHOWN = 12
"""A live table lists this hand's latest calls only (a Mau-Mau deal can draw hundreds)."""

KLABERJASS_FIRST_DEAL = 6
"""Klaberjass deals 3 + 3 cards before the bidding, the rest of the 9 once a maker is known."""

PINOCHLE_STOCK_TRICKS = PINOCHLE_HAND
"""Pinochle's tricks with a draw after them: the 24-card stock lasts 12 tricks."""


TURN_UP_LABELS = {"oh-hell": "Trump", "klaberjass": "Turn-up", "pinochle": "Turn-up"}
"""How a game's table names the card ``PublicTable.turn_up`` carries."""


MAX_HAND_SHOWN = 104
"""No hand holds more cards than a double deck."""


class LiveError(ValueError):
    """Settings or an event a live table cannot use."""


def cards_in(text: str) -> list[str]:
    """The cards a description names, in order, as the frames JSON writes them."""
    return [
        ("T" if rank == "10" else rank) + suit + copy for rank, suit, copy in _CARD.findall(text)
    ]


@dataclass
class _Hand:
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
    """Klaberjass: a maker is known (so the completion deal gave each seat 9 cards)."""


class LiveTable:
    """The table of one live match, one frame per spectator event (``add``)."""

    def __init__(self, settings: options_pb2.GameSettings, seats: Sequence[Json] = ()) -> None:
        try:
            game = make_game(settings.game, settings.num_seats, options_from_wire(settings.options))
        except (RulesError, ValueError) as error:
            raise LiveError(f"settings: {error}") from None
        self.game = game.type.name
        self.title = game.type.title
        self.num_seats = game.num_seats
        self.options = dict(sorted(game.options.items()))
        self.seats = list(seats) or [
            {"seat": s, "name": "", "version": ""} for s in range(self.num_seats)
        ]
        self._schedule = (
            hand_sizes(str(game.options["deal_style"]), self.num_seats)
            if self.game == "oh-hell"
            else ()
        )
        self.frames: list[Json] = []
        self._public: PublicTable | None = None
        self._scores: list[int] = [0] * self.num_seats
        self._hand = self._new_hand(1)

    def _new_hand(self, number: int) -> _Hand:
        return _Hand(number=number, plays_by_seat=[0] * self.num_seats)

    def _dealt(self) -> int | None:
        """How many cards each seat was dealt this hand, when the rules make it public."""
        hand = self._hand
        if not hand.started:
            return None
        if self.game == "oh-hell":
            index = hand.number - 1
            return self._schedule[index] if index < len(self._schedule) else None
        if self.game == "king":
            return KING_TRICKS
        if self.game == "klaberjass":
            return KLABERJASS_TRICKS if hand.made or hand.plays else KLABERJASS_FIRST_DEAL
        if self.game == "pinochle":
            if not hand.trick and 0 < hand.tricks <= PINOCHLE_STOCK_TRICKS:
                # Between a trick and the draws: whether they happened yet depends on whether
                # the winner has a meld turn, which spectators must not learn.
                return None
            return PINOCHLE_HAND + min(hand.tricks, PINOCHLE_STOCK_TRICKS)  # a draw each
        return None  # Mau-Mau: draws and penalties make hand sizes a matter of counting

    def _plays_per_hand(self) -> int | None:
        """How many cards this hand's tricks take (one per seat per trick), if known."""
        tricks = {
            "king": KING_TRICKS,
            "klaberjass": KLABERJASS_TRICKS,
            "pinochle": PINOCHLE_TRICKS,
        }.get(self.game)
        if self.game == "oh-hell":  # as many tricks as cards in each hand
            index = self._hand.number - 1
            tricks = self._schedule[index] if index < len(self._schedule) else None
        return None if tricks is None else tricks * self.num_seats

    def add(self, event: arena_service_pb2.MoveEvent) -> Json:
        """The frame of one more move event; raises ``LiveError`` on an event out of place."""
        if len(self.frames) >= MAX_LIVE_EVENTS:
            raise LiveError(f"more than {MAX_LIVE_EVENTS} events")
        if event.seat >= self.num_seats or len(event.scores) != self.num_seats:
            raise LiveError(f"event {event.index}: not an event of a {self.num_seats}-seat match")
        text = event.description[:200]
        scores = [int(s) for s in event.scores]
        self._public = self._checked_table(event)
        self._apply(event.seat, text)
        # The first event's scores are the baseline: a deal may score before any move (a
        # Pinochle turn-up Ten), and no hand ends at its first move.
        hand_over = self._hand_over(text, bool(self.frames) and scores != self._scores)
        self._scores = scores
        if hand_over:
            self._hand = self._new_hand(self._hand.number + 1)
        frame = {
            "index": len(self.frames),
            "seat": event.seat,
            "move": text,
            "time_ms": None,
            "time_bank_ms": None,
            "fault": {"kind": "defaulted", "detail": "the referee played this move after a fault"}
            if event.defaulted
            else None,
            "table": self._table(),
        }
        self.frames.append(frame)
        return frame

    def _checked_table(self, event: arena_service_pb2.MoveEvent) -> PublicTable | None:
        """The event's public table, or None if it has none; raises ``LiveError`` if it is
        not one of this match (a card that is not a card, hand sizes of other seats)."""
        if not event.HasField("table"):
            return None
        table = event.table
        for name in ("turn_up", "pile_top"):
            if table.HasField(name) and self._card(getattr(table, name)) is None:
                raise LiveError(f"event {event.index}: {name} is not a card")
        if not 0 <= table.announced_suit <= len(SUIT_LETTERS):
            raise LiveError(f"event {event.index}: announced suit {table.announced_suit}")
        if table.hand_sizes and len(table.hand_sizes) != self.num_seats:
            raise LiveError(f"event {event.index}: hand sizes of {len(table.hand_sizes)} seats")
        if any(size > MAX_HAND_SHOWN for size in table.hand_sizes):
            raise LiveError(f"event {event.index}: a hand of more than {MAX_HAND_SHOWN} cards")
        return table

    def _card(self, card: cards_pb2.Card) -> str | None:
        return wire_card_name(card, copies=self.game == "pinochle")

    def _hand_over(self, text: str, scored: bool) -> bool:
        """Whether the move just seen ended its hand (the next deal may be under way).

        Scores change only when a hand ends, but for Pinochle's melds; a hand also ends when
        all its cards are played (an Oh Hell hand where nobody scores), and Klaberjass's four
        passes void it.
        """
        hand = self._hand
        if scored and (self.game != "pinochle" or not text.startswith("meld ")):
            return True
        if hand.plays and hand.plays == self._plays_per_hand():
            return True
        passes = sum(call["text"] == "pass" for call in hand.calls)
        return self.game == "klaberjass" and passes == 4 and not hand.made

    def _apply(self, seat: int, text: str) -> None:
        hand = self._hand
        hand.started = True
        last = hand.last_trick
        if last is not None and last["winner"] is None and not hand.trick:
            # Within a hand the winner of a trick acts next (leads, or melds first).
            hand.last_trick = {**last, "winner": seat}
        cards = cards_in(text)
        if text.startswith("play ") and cards and self.game in TRICK_GAMES:
            if not hand.trick:
                hand.trick_leader = seat
            hand.trick.append(cards[0])
            hand.plays += 1
            hand.plays_by_seat[seat] += 1
            if len(hand.trick) == self.num_seats:
                hand.last_trick = trick_view(hand.trick_leader, hand.trick, self.num_seats)
                hand.trick = []
                hand.tricks += 1
        elif text.startswith("discard ") and cards:
            hand.pile_top = cards[-1]  # two Jacks: the second lies on top
            hand.plays += 1
            words = text.split()
            announced = words[words.index("announcing") + 1] if "announcing" in words else ""
            hand.announced = _SUIT_WORDS.get(announced)
        elif text.startswith("meld ") and cards:
            hand.melds.append({"seat": seat, "name": _meld_name(text), "cards": cards})
        else:
            if self.game == "klaberjass" and text.startswith(("accept", "name ")):
                hand.made = True
            hand.calls.append({"seat": seat, "text": text})

    def _table(self) -> Json:
        hand = self._hand
        public = self._public
        dealt = self._dealt()
        sizes = list(public.hand_sizes) if public is not None else []
        seats = []
        for seat in range(self.num_seats):
            count = None if dealt is None else dealt - hand.plays_by_seat[seat]
            if sizes:
                count = sizes[seat]
            tags = [] if count is None else [plural(count, "card")]
            seats.append(seat_view(None, count, tags))
        facts = [fact("Hand" if self.game != "mau-mau" else "Deal", str(hand.number))]
        label = TURN_UP_LABELS.get(self.game)
        if public is not None and label is not None:
            turn_up = self._card(public.turn_up) if public.HasField("turn_up") else None
            facts.append(fact(label, cards=[turn_up]) if turn_up else fact(label, "taken"))
        pile = None
        if self.game == "mau-mau":
            pile_top = hand.pile_top
            if public is not None:
                pile_top = self._card(public.pile_top) if public.HasField("pile_top") else None
                announced = public.announced_suit
                hand.announced = SUIT_LETTERS[Suit(announced)] if announced else None
            pile = {
                "cards": [pile_top] if pile_top else [],
                "size": None,
                "stock": None,
                "announced": hand.announced,
                "any_card": False,
            }
        trick = None
        if self.game in TRICK_GAMES:
            trick = trick_view(hand.trick_leader if hand.trick else -1, hand.trick, self.num_seats)
        return {
            "heading": f"{self.title} · live",
            "dealer": None,
            "to_act": None,
            "seats": seats,
            "facts": facts,
            "trick": trick,
            "last_trick": hand.last_trick,
            "melds": list(hand.melds),
            "calls": hand.calls[-LIVE_CALLS_SHOWN:],
            "pile": pile,
            "sheet": [],
            "totals": list(self._scores),
        }

    def document(self, match_id: str = "") -> dict[str, Any]:
        """Every frame so far in the shape ``frames_for_record`` gives (``live`` true)."""
        return {
            "version": 1,
            "live": True,
            "match_id": match_id,
            "game": self.game,
            "title": self.title,
            "num_seats": self.num_seats,
            "options": self.options,
            "seats": self.seats,
            "status": "in_progress",
            "status_detail": "",
            "forfeited_seat": None,
            "outcome": None,
            "start": None,
            "frames": list(self.frames),
        }


def _meld_name(text: str) -> str:
    """``royal marriage`` from ``meld royal marriage KH#0 QH#1``."""
    words = [w for w in text.split()[1:] if not _CARD.fullmatch(w)]
    return " ".join(words)


def frames_for_events(
    settings: options_pb2.GameSettings,
    events: Iterable[arena_service_pb2.MoveEvent],
    *,
    seats: Sequence[Json] = (),
    match_id: str = "",
) -> dict[str, Any]:
    """The live table's frames for the move events seen so far (see ``LiveTable``)."""
    live = LiveTable(settings, seats)
    for event in events:
        live.add(event)
    return live.document(match_id)
