"""Oh Hell as Board Game Arena plays it (rules reference: docs/games/oh-hell.md).

A game is a series of hands. Each hand, every seat is dealt the same number of cards from a
52-card deck (ace high), the next card is turned up and its suit is trump. Starting left of the
dealer and ending with the dealer, each seat bids how many tricks it will take; the dealer may not
bid so that the bids add up to the number of tricks. The seat left of the dealer leads; players
must follow suit if they can, otherwise play anything; the highest trump wins the trick, else the
highest card of the suit led, and the winner leads next. A hand scores by the chosen scoring
style; the game ends after the last hand of the chosen deal style and the highest total wins.

Decisions the traditional rules leave open (docs/games/oh-hell.md, decisions): the first dealer is
drawn at random and the deal passes clockwise (OH-A4); bidding runs clockwise from the dealer's
left (OH-A2); that seat leads the first trick (OH-A3); the trump card is the first undealt card
(OH-A5); the one-card hand is played once (OH-A6); bids run 0..hand size (OH-A7); only the dealer
is restricted (OH-A8); the short high-low style always starts at 6 (OH-A10). The one decision with
a real alternative, D-OH-1 (ties), is the ``tie_break`` option.

Actions: ``0..51`` play that card (``StandardDeck`` ids); ``52 + b`` bids ``b`` tricks.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from referee.games.api import (
    GameType,
    IllegalActionError,
    OptionSpec,
    OptionValue,
    Outcome,
    State,
    ranks_from_keys,
)
from referee.games.bits import set_bits, suit_card_tables
from referee.games.cards import StandardDeck
from referee.games.oh_hell.view import (
    BID_BASE,
    DIAMONDS_SHIFT,
    HEARTS_SHIFT,
    MAX_SEATS,
    SPADES_SHIFT,
    SUIT_BITS,
    SUIT_SIZE,
    HandResult,
    PublicView,
    Trick,
    observe,
    public_table,
)

MAX_HAND_SIZE = 10
"""A hand has at most ten cards per player."""

SHORT_HIGH_LOW_START = 6
"""BGA's "Curta – Alta e baixa" always runs 6 … 1 … 6, whatever the number of players."""

DEAL_STYLES = ("long", "long_inverted", "short_high_low", "short_high", "short_low")
SCORING_STYLES = ("positive", "neutral", "negative")
TIE_BREAKS = ("shared", "most_exact_bids")

OH_HELL = GameType(
    name="oh-hell",
    title="Oh Hell",
    min_seats=3,
    max_seats=MAX_SEATS,
    rules_section="docs/games/oh-hell.md",
    options=(
        OptionSpec(
            "deal_style",
            "long",
            "Hand sizes over the game: long = max…1…max (the traditional game), long_inverted ="
            " 1…max…1, short_high_low = 6…1…6, short_high = 1…max, short_low = max…1.",
            choices=DEAL_STYLES,
        ),
        OptionSpec(
            "scoring",
            "positive",
            "positive: 1 per trick, +10 for an exact bid; neutral: 10 + tricks for an exact"
            " bid, else 0; negative: 10 for an exact bid, else -10 per trick off the bid.",
            choices=SCORING_STYLES,
        ),
        OptionSpec(
            "tie_break",
            "shared",
            "D-OH-1. Equal final totals: shared = the seats share the rank; most_exact_bids ="
            " the seat with more exact bids ranks higher (still shared if those are equal).",
            choices=TIE_BREAKS,
        ),
    ),
)

_SUIT_MASK = tuple(SUIT_BITS << (SUIT_SIZE * s) for s in range(4))


_SUIT_CARDS = suit_card_tables(4, SUIT_SIZE)


_DECK = tuple(range(StandardDeck.SIZE))
_ALL_CARDS = frozenset(_DECK)
_BIDS = tuple(tuple(range(BID_BASE, BID_BASE + size + 1)) for size in range(MAX_HAND_SIZE + 1))


def max_hand_size(num_seats: int) -> int:
    """The largest hand dealt to ``num_seats`` players: min(10, 52 // n)."""
    return min(MAX_HAND_SIZE, StandardDeck.SIZE // num_seats)


def hand_sizes(deal_style: str, num_seats: int) -> tuple[int, ...]:
    """The hand sizes of a whole game, in order (worked example OH-E1)."""
    top = max_hand_size(num_seats)
    down = tuple(range(top, 0, -1))
    up = tuple(range(1, top + 1))
    if deal_style == "long":
        return down + up[1:]
    if deal_style == "long_inverted":
        return up + down[1:]
    if deal_style == "short_high_low":
        six = SHORT_HIGH_LOW_START
        return tuple(range(six, 0, -1)) + tuple(range(2, six + 1))
    if deal_style == "short_high":
        return up
    if deal_style == "short_low":
        return down
    raise ValueError(f"unknown deal style {deal_style!r}")


def hand_points(scoring: str, bid: int, tricks: int) -> int:
    """Points for one seat's hand under a scoring style (worked examples OH-E3, OH-E6)."""
    exact = bid == tricks
    if scoring == "positive":
        return tricks + 10 if exact else tricks
    if scoring == "neutral":
        return 10 + tricks if exact else 0
    if scoring == "negative":
        return 10 if exact else -10 * abs(tricks - bid)
    raise ValueError(f"unknown scoring style {scoring!r}")


def trick_winner(cards: Sequence[int], trump_suit: int) -> int:
    """Index in ``cards`` (in play order) of the card that takes the trick (OH-E4)."""
    led = cards[0] // SUIT_SIZE
    best, best_key = 0, -1
    for index, card in enumerate(cards):
        suit = card // SUIT_SIZE
        key = 100 + card if suit == trump_suit else (card if suit == led else -1)
        if key > best_key:
            best, best_key = index, key
    return best


def forbidden_dealer_bid(hand_size: int, other_bids: Sequence[int]) -> int | None:
    """The one bid the dealer may not make, or None when every bid is allowed (OH-E2, OH-E5)."""
    rest = hand_size - sum(other_bids)
    return rest if 0 <= rest <= hand_size else None


class OhHellState(State):
    """A whole game of Oh Hell, from the first deal to the final scores."""

    game_type = OH_HELL

    public_changes = 0
    """Bumped whenever what every seat sees changes but for the current trick (a bid, a
    finished trick, a new hand): what the view's cache is keyed on."""
    view_cache: PublicView | None = None
    """The view's (``view.observe``); the rules never read it."""

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        super().__init__(num_seats, options, rng)
        self.scoring = str(options["scoring"])
        self.deal_style = str(options["deal_style"])
        self.schedule = hand_sizes(str(options["deal_style"]), num_seats)
        self.first_dealer = rng.randrange(num_seats)
        self.scores = [0] * num_seats
        self.exact_bids = [0] * num_seats
        self.previous_hands: list[HandResult] = []
        self.hand_index = -1
        self._deal_next_hand()

    # -- the flow of a hand -------------------------------------------------------------------

    def _deal_next_hand(self) -> None:
        self.hand_index += 1
        n = self.num_seats
        self.hand_size = size = self.schedule[self.hand_index]
        self.dealer = (self.first_dealer + self.hand_index) % n
        # A uniform random ordering of just the cards that leave the deck: the same as dealing
        # from a shuffled deck, without shuffling the cards nobody will see.
        deck = self.arrange_deal(self.rng.sample(_DECK, n * size + 1))
        hands = [0] * n
        for i in range(n * size):  # one card at a time, starting at the dealer's left
            hands[(self.dealer + 1 + i) % n] |= 1 << deck[i]
        self.hands = hands
        self.undealt = _ALL_CARDS.difference(deck)
        self.trump_card = deck[n * size]
        self.trump_suit = self.trump_card // SUIT_SIZE
        self.bids: list[int | None] = [None] * n
        self.tricks_won = [0] * n
        self.trick: list[int] = []
        self.completed_tricks: list[Trick] = []
        self.bidding = True
        self.to_act = self.trick_leader = (self.dealer + 1) % n
        self.public_changes += 1

    def current_seat(self) -> int:
        return self.to_act

    def legal_actions(self) -> Sequence[int]:
        if self.to_act < 0:
            return ()
        if self.bidding:
            return self._legal_bids()
        hand = self.hands[self.to_act]
        if self.trick:
            led = self.trick[0] // SUIT_SIZE
            in_suit = (hand >> (SUIT_SIZE * led)) & SUIT_BITS
            if in_suit:
                return _SUIT_CARDS[led][in_suit]
        return (
            _SUIT_CARDS[0][hand & SUIT_BITS]
            + _SUIT_CARDS[1][(hand >> DIAMONDS_SHIFT) & SUIT_BITS]
            + _SUIT_CARDS[2][(hand >> HEARTS_SHIFT) & SUIT_BITS]
            + _SUIT_CARDS[3][(hand >> SPADES_SHIFT) & SUIT_BITS]
        )

    def _legal_bids(self) -> tuple[int, ...]:
        bids = _BIDS[self.hand_size]
        if self.to_act != self.dealer:
            return bids
        others = [b for b in self.bids if b is not None]
        forbidden = forbidden_dealer_bid(self.hand_size, others)
        if forbidden is None:
            return bids
        return bids[:forbidden] + bids[forbidden + 1 :]

    def apply(self, action: int) -> None:
        seat = self.to_act
        if seat < 0:
            raise IllegalActionError("the game is over")
        if self.bidding:
            self._apply_bid(seat, action)
        else:
            self._apply_play(seat, action)

    def _apply_bid(self, seat: int, action: int) -> None:
        if action not in self._legal_bids():
            raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
        self.bids[seat] = action - BID_BASE
        self.public_changes += 1
        if seat == self.dealer:
            self.bidding = False
            self.to_act = self.trick_leader
        else:
            self.to_act = (seat + 1) % self.num_seats

    def _apply_play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        if not 0 <= card < StandardDeck.SIZE or not (hand >> card) & 1:
            raise IllegalActionError(f"seat {seat} does not hold {self.describe_action(card)}")
        trick = self.trick
        if trick:
            led_mask = _SUIT_MASK[trick[0] // SUIT_SIZE]
            if hand & led_mask and not (1 << card) & led_mask:
                raise IllegalActionError(f"seat {seat} must follow suit")
        self.hands[seat] = hand ^ (1 << card)
        trick.append(card)
        n = self.num_seats
        if len(trick) < n:
            self.to_act = (seat + 1) % n
            return
        winner = (self.trick_leader + trick_winner(trick, self.trump_suit)) % n
        self.tricks_won[winner] += 1
        self.completed_tricks.append((self.trick_leader, tuple(trick), winner))
        self.public_changes += 1
        self.trick = []
        self.to_act = self.trick_leader = winner
        if len(self.completed_tricks) == self.hand_size:
            self._score_hand()

    def _score_hand(self) -> None:
        bids = tuple(b if b is not None else 0 for b in self.bids)
        tricks = tuple(self.tricks_won)
        points = tuple(hand_points(self.scoring, b, t) for b, t in zip(bids, tricks, strict=True))
        for seat in range(self.num_seats):
            self.scores[seat] += points[seat]
            self.exact_bids[seat] += bids[seat] == tricks[seat]
        self.previous_hands.append(
            HandResult(self.hand_size, self.dealer, self.trump_card, bids, tricks, points)
        )
        if self.hand_index + 1 < len(self.schedule):
            self._deal_next_hand()
        else:
            self.to_act = -1

    # -- results and views --------------------------------------------------------------------

    def outcome(self) -> Outcome:
        if self.options["tie_break"] == "most_exact_bids":
            keys: list[tuple[int, ...]] = [
                (s, e) for s, e in zip(self.scores, self.exact_bids, strict=True)
            ]
        else:
            keys = [(s,) for s in self.scores]
        return Outcome(tuple(self.scores), ranks_from_keys(keys))

    def scores_so_far(self) -> tuple[int, ...]:
        return tuple(self.scores)

    observe = observe
    public_table = public_table

    def describe_action(self, action: int) -> str:
        if action >= BID_BASE:
            return f"bid {action - BID_BASE}"
        if action < 0:
            return f"action {action}"
        return f"play {StandardDeck.name(action)}"

    def is_public_action(self, action: int) -> bool:
        # Every seat bids once and plays a card to every trick whatever it holds.
        return True

    def private_cards(self, seat: int) -> frozenset[int]:
        return frozenset(set_bits(self.hands[seat]))

    def concealed_cards(self) -> frozenset[int]:
        return self.undealt

    def public_cards(self) -> frozenset[int]:
        played = [card for _, cards, _ in self.completed_tricks for card in cards]
        return frozenset([self.trump_card, *played, *self.trick])

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS
