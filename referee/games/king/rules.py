"""King, the Brazilian four-player game of six negative and four positive hands .

Rules reference: docs/games/king.md (its decisions and options).

Four players, a 52-card deck dealt one card at a time from the dealer's left, 13 each, ace high.
The deal passes to the left every hand. A game is ten hands in a fixed order:

====  =========================  ==================================================
hand  contract                   penalty (no trumps; the highest card of the led suit wins)
====  =========================  ==================================================
1     no tricks                  -20 per trick taken                       (-260)
2     no hearts                  -20 per heart taken                       (-260)
3     no kings or jacks          -30 per king or jack taken                (-240)
4     no queens                  -50 per queen taken                       (-200)
5     no king of hearts          -160 for the trick holding the K♥         (-160)
6     not the last two tricks    -90 for trick 12 and -90 for trick 13     (-180)
7-10  positive                   +25 per trick taken, with trumps          (+325 each)
====  =========================  ==================================================

The dealer leads the first trick of every hand; the winner of a trick leads the next. Everyone
must follow suit if able. In hands 2 and 5 hearts may be led only by a player holding nothing
else; in hand 5 a player who holds the K♥ and cannot follow suit must play it. In the positive
hands a void player may play any card (there is no duty to trump or overtrump).

Before each positive hand the dealer (the "Beneficiado") may sell the right to name trumps in an
auction whose offers are counted in tricks, following the state machine of §2.1 (D-KING-1):

1. *round*: the three others speak once each, from the dealer's left: pass, or offer more than
   the best offer and at least the floor (initially 1);
2. *decision*: the dealer accepts the best offer, refuses it (the floor becomes that offer + 1 and
   a new round starts) or, with no offer left, names trumps himself. If no offer above one trick
   was ever made he may instead opt out: no cards are played, he scores 100 and the others 75;
3. *competition* after an acceptance: the bidders speak in turn from the dealer's left, skipping
   the best bidder; each may pass, outbid, or match the best offer "pela mão" when he sits
   closer to the dealer's left than its holder. Once both others have passed since the last
   offer the holder buys: he names trumps, and at the end of the hand pays 25 points per trick
   of his price to the dealer (even if that leaves him below zero for the hand).

The final balance of a seat is its positive column plus its (negative) negative column; the
four balances sum to zero and the best balance wins; equal balances share a rank.

Options (every D-KING decision of §6.1): ``auction`` ("full", or "simplified": one round, then
the dealer accepts or names trumps, no matching and no opt-out), ``trump_lead_restricted``
(no trump lead while holding another suit), ``stop_when_penalties_exhausted`` (a negative hand
ends once its penalty cards are all taken; scores are unchanged).

Actions (ints): ``0..51`` play that card (``StandardDeck`` ids); ``52`` pass; ``52 + k`` offer
``k`` tricks (k = 1..13); ``65 + k`` match an offer of ``k`` tricks "pela mão"; ``79`` accept;
``80`` refuse; ``81`` opt out; ``82 + s`` name suit ``s`` (0 clubs, 1 diamonds, 2 hearts,
3 spades) as trumps.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from referee.games.api import (
    GameType,
    IllegalActionError,
    OptionSpec,
    OptionValue,
    Outcome,
    State,
    ranks_from_keys,
)
from referee.games.bits import suit_card_tables
from referee.games.cards import Rank, StandardDeck, Suit

NUM_SEATS = 4
NUM_TRICKS = 13
NUM_HANDS = 10
NUM_NEGATIVE_HANDS = 6

# -- contracts ------------------------------------------------------------------------------------

NO_TRICKS = 1
NO_HEARTS = 2
NO_KINGS_OR_JACKS = 3
NO_QUEENS = 4
NO_KING_OF_HEARTS = 5
NO_LAST_TWO_TRICKS = 6
POSITIVE = 7
"""Contract numbers (they match the wire's ``KingContract``); hand ``h`` plays ``min(h, 7)``."""

CONTRACT_NAMES = {
    NO_TRICKS: "no tricks",
    NO_HEARTS: "no hearts",
    NO_KINGS_OR_JACKS: "no kings or jacks",
    NO_QUEENS: "no queens",
    NO_KING_OF_HEARTS: "no king of hearts",
    NO_LAST_TWO_TRICKS: "not the last two tricks",
    POSITIVE: "positive",
}

TRICK_PENALTY = 20
HEART_PENALTY = 20
KING_OR_JACK_PENALTY = 30
QUEEN_PENALTY = 50
KING_OF_HEARTS_PENALTY = 160
LAST_TWO_PENALTY = 90
POSITIVE_TRICK = 25
OPT_OUT_DEALER_TRICKS = 4
OPT_OUT_OTHER_TRICKS = 3

NEGATIVE_HAND_TOTALS = {
    NO_TRICKS: -260,
    NO_HEARTS: -260,
    NO_KINGS_OR_JACKS: -240,
    NO_QUEENS: -200,
    NO_KING_OF_HEARTS: -160,
    NO_LAST_TWO_TRICKS: -180,
}
"""The rules' own checks: each negative hand's total over the four players (KING-E1)."""

POSITIVE_HAND_TOTAL = NUM_TRICKS * POSITIVE_TRICK  # 325; four hands make 1,300

HEARTS = Suit.HEARTS - 1
"""Suit index (``card // 13``) of hearts."""

_SUIT_MASK = tuple(0x1FFF << (13 * s) for s in range(4))
HEARTS_MASK = _SUIT_MASK[HEARTS]
KING_OF_HEARTS = StandardDeck.card(Suit.HEARTS, Rank.KING)
KING_OF_HEARTS_BIT = 1 << KING_OF_HEARTS
KINGS_AND_JACKS_MASK = sum(
    1 << StandardDeck.card(suit, rank) for suit in Suit for rank in (Rank.KING, Rank.JACK)
)
QUEENS_MASK = sum(1 << StandardDeck.card(suit, Rank.QUEEN) for suit in Suit)
FULL_DECK_MASK = (1 << 52) - 1

PENALTY_CARDS = {
    NO_HEARTS: HEARTS_MASK,
    NO_KINGS_OR_JACKS: KINGS_AND_JACKS_MASK,
    NO_QUEENS: QUEENS_MASK,
    NO_KING_OF_HEARTS: KING_OF_HEARTS_BIT,
}
"""Contracts whose penalty lies in cards; once all are taken such a hand may stop early."""

CARD_PENALTY = {
    NO_HEARTS: HEART_PENALTY,
    NO_KINGS_OR_JACKS: KING_OR_JACK_PENALTY,
    NO_QUEENS: QUEEN_PENALTY,
    NO_KING_OF_HEARTS: KING_OF_HEARTS_PENALTY,
}
"""Points lost per card of ``PENALTY_CARDS`` taken, for the contracts scored by cards."""

# -- actions --------------------------------------------------------------------------------------

PASS = 52
OFFER_BASE = 52
"""Action ``OFFER_BASE + k`` offers ``k`` tricks (1..13) for the right to name trumps."""
MATCH_BASE = 65
"""Action ``MATCH_BASE + k`` matches the best offer of ``k`` tricks "pela mão"."""
ACCEPT = 79
REFUSE = 80
OPT_OUT = 81
TRUMP_BASE = 82
"""Action ``TRUMP_BASE + s`` names suit index ``s`` (``card // 13``) as trumps."""
MAX_OFFER = 13
NUM_ACTIONS = TRUMP_BASE + 4

# -- phases (numbers match the wire's ``KingPhase``) ---------------------------------------------

PHASE_AUCTION = 1
"""The three bidders speak once each, from the dealer's left."""
PHASE_DECISION = 2
"""The dealer answers the best offer: accept, refuse (or opt out)."""
PHASE_COMPETITION = 3
"""After an acceptance: the bidders outbid or match until two pass in a row."""
PHASE_TRUMP = 4
"""The dealer (no sale) or the buyer names trumps; the dealer may also opt out if allowed."""
PHASE_PLAY = 5
"""Tricks are played."""

AUCTION_STYLES = ("full", "simplified")

KING = GameType(
    name="king",
    title="King",
    min_seats=NUM_SEATS,
    max_seats=NUM_SEATS,
    rules_section="docs/games/king.md",
    options=(
        OptionSpec(
            "auction",
            "full",
            "D-KING-1. full = the auction state machine of §2.1 (rounds of offers, the dealer"
            " accepts or refuses, matching 'pela mão', opt-out 4/3/3/3 when no offer above one"
            " trick was made); simplified = one round of rising offers, then the dealer accepts"
            " the best one or names trumps himself (no matching, no opt-out).",
            choices=AUCTION_STYLES,
        ),
        OptionSpec(
            "trump_lead_restricted",
            False,
            "D-KING-2. false = a trump may be led at any time in the positive hands; true = no"
            " trump lead while holding another suit (as hearts in hands 2 and 5).",
        ),
        OptionSpec(
            "stop_when_penalties_exhausted",
            False,
            "D-KING-3. false = every hand plays all 13 tricks; true = hands 2-5 end as soon as"
            " all their penalty cards have been taken (the scores are the same).",
        ),
    ),
)

# -- card tables ----------------------------------------------------------------------------------


_SUIT_CARDS = suit_card_tables(4, 13)
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = _SUIT_CARDS
_ALL_CARDS = frozenset(range(StandardDeck.SIZE))
_BITS = tuple(1 << card for card in range(StandardDeck.SIZE))
_PASS_ONLY = (PASS,)
_KING_OF_HEARTS_ONLY = (KING_OF_HEARTS,)
_TRUMPS = tuple(TRUMP_BASE + s for s in range(4))
_TRUMPS_OR_OPT_OUT = (*_TRUMPS, OPT_OUT)


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask, ascending (suit by suit)."""
    return (
        _CLUBS[mask & 0x1FFF]
        + _DIAMONDS[(mask >> 13) & 0x1FFF]
        + _HEARTS[(mask >> 26) & 0x1FFF]
        + _SPADES[(mask >> 39) & 0x1FFF]
    )


def contract_of_hand(hand_number: int) -> int:
    """The contract played in hand ``hand_number`` (1..10), in the fixed order of the rules."""
    return min(hand_number, POSITIVE)


def trick_winner(cards: Sequence[int], trump_suit: int = -1) -> int:
    """Index in ``cards`` (play order) of the card that takes the trick; ``-1`` = no trumps."""
    best = 0
    win = cards[0]
    for index in range(1, len(cards)):
        card = cards[index]
        suit, win_suit = card // 13, win // 13
        if (suit == win_suit and card > win) or (suit == trump_suit and win_suit != trump_suit):
            best, win = index, card
    return best


def negative_points(
    contract: int, taken: int, tricks: int, won_trick_12: bool, won_trick_13: bool
) -> int:
    """One seat's (negative) score in a negative hand from the cards and tricks it took."""
    if contract == NO_TRICKS:
        return -TRICK_PENALTY * tricks
    if contract in PENALTY_CARDS:
        return -CARD_PENALTY[contract] * (taken & PENALTY_CARDS[contract]).bit_count()
    if contract == NO_LAST_TWO_TRICKS:
        return -LAST_TWO_PENALTY * (won_trick_12 + won_trick_13)
    raise ValueError(f"not a negative contract: {contract}")


def positive_points(tricks: Sequence[int], dealer: int, buyer: int, price: int) -> tuple[int, ...]:
    """Each seat's score in a positive hand: 25 a trick, the buyer paying ``25 × price``."""
    points = [POSITIVE_TRICK * t for t in tricks]
    if buyer >= 0:
        points[buyer] -= POSITIVE_TRICK * price
        points[dealer] += POSITIVE_TRICK * price
    return tuple(points)


def opt_out_points(dealer: int) -> tuple[int, ...]:
    """Scores when the dealer opts out: four tricks to him and three to each other seat."""
    return tuple(
        POSITIVE_TRICK * (OPT_OUT_DEALER_TRICKS if seat == dealer else OPT_OUT_OTHER_TRICKS)
        for seat in range(NUM_SEATS)
    )


def priority(seat: int, dealer: int) -> int:
    """Auction priority "pela mão": 1 for the dealer's left, 2 and 3 after; lower is better."""
    return (seat - dealer) % NUM_SEATS


# -- views ----------------------------------------------------------------------------------------


class AuctionView(NamedTuple):
    """The public state of a positive hand's auction."""

    calls: tuple[tuple[int, int], ...]
    """Every call so far as (seat, action): passes, offers, matches and the dealer's answers."""
    best_offer: int
    """The best standing offer in tricks; 0 when there is none."""
    best_bidder: int
    """Who made it; -1 when there is none."""
    minimum_offer: int
    """The smallest offer allowed after the dealer's refusals (1 until he refuses)."""
    highest_offer: int
    """The highest offer made at any point; opting out needs it to be at most 1."""
    accepted: bool
    """Whether the dealer has accepted (the competition between bidders is on or done)."""
    buyer: int
    """The seat that bought the right to name trumps; -1 while unsold or when the dealer plays."""
    price: int
    """The buyer's price in tricks (0 when there is no buyer)."""


@dataclass(frozen=True)
class HandResult:
    """How one finished hand went for every seat."""

    hand_number: int
    contract: int
    dealer: int
    trump: int
    """Suit index of trumps; -1 in negative hands and when the dealer opted out."""
    buyer: int
    price: int
    opted_out: bool
    tricks: tuple[int, ...]
    points: tuple[int, ...]


class KingObservation(NamedTuple):
    """What one seat sees: its own hand and everything public, never another hand."""

    seat: int
    hand_number: int
    contract: int
    dealer: int
    phase: int
    trump: int
    hand: tuple[int, ...]
    cards_in_hand: tuple[int, ...]
    tricks_won: tuple[int, ...]
    hand_points: tuple[int, ...]
    negative_totals: tuple[int, ...]
    positive_totals: tuple[int, ...]
    auction: AuctionView | None
    trick_leader: int
    current_trick: tuple[int, ...]
    completed_tricks: tuple[tuple[int, tuple[int, ...], int], ...]
    previous_hands: tuple[HandResult, ...]


# -- the state ------------------------------------------------------------------------------------


_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in reversed(range(1, 52)))
"""``(i, bits)`` per step of ``Random.shuffle`` on the pack: swap ``i`` with
``_randbelow(i + 1)``, which draws ``getrandbits(bits)`` until the value is at most ``i``."""


_FinishedTrick = tuple[int, tuple[int, ...], int]
"""(leader, cards in play order, winner)."""
_TrickBlock = tuple[
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[_FinishedTrick, ...],
    tuple[HandResult, ...],
]
"""Tricks won, hand points, negative and positive totals, finished tricks, finished hands."""
_BlockCache = tuple[list[_FinishedTrick], int, int, _TrickBlock]
"""The finished tricks' list and length and the number of finished hands it was built for."""
_AuctionCache = tuple[list[tuple[int, int]], int, AuctionView]
"""The list of calls and its length it was built for."""

_new = tuple.__new__
"""Builds a NamedTuple from a tuple of its fields in order, ~5x cheaper than keywords."""


class KingState(State):
    """A whole game of King: ten hands, from the first deal to the final balances."""

    _block_cache: _BlockCache | None = None
    """``_trick_block`` for one list of finished tricks, its length and the hands finished."""
    _auction_cache: _AuctionCache | None = None
    """The auction's public view for one list of calls at one length."""

    game_type = KING

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        super().__init__(num_seats, options, rng)
        self.full_auction = options["auction"] == "full"
        self.trump_lead_restricted = bool(options["trump_lead_restricted"])
        self.stop_early = bool(options["stop_when_penalties_exhausted"])
        self.first_dealer = rng.randrange(NUM_SEATS)
        self.negative_totals = [0] * NUM_SEATS
        self.positive_totals = [0] * NUM_SEATS
        self.previous_hands: list[HandResult] = []
        self.hand_number = 0
        self._deal_next_hand()

    # -- dealing ----------------------------------------------------------------------------------

    def _deal_next_hand(self) -> None:
        self.hand_number += 1
        self.contract = contract_of_hand(self.hand_number)
        self.dealer = dealer = (self.first_dealer + self.hand_number - 1) % NUM_SEATS
        deck = list(range(52))
        # rng.shuffle(deck), inlined: the same getrandbits draws, the same deck, ~2x cheaper.
        getrandbits = self.rng.getrandbits
        for i, bits in _SHUFFLE_STEPS:
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            deck[i], deck[j] = deck[j], deck[i]
        deck = self.arrange_deal(deck)
        hands = [0] * NUM_SEATS
        for i in range(NUM_SEATS):  # one at a time, starting at the dealer's left
            hands[(dealer + 1 + i) % NUM_SEATS] = sum(map(_BITS.__getitem__, deck[i::NUM_SEATS]))
        self._start_hand(hands)

    def _start_hand(self, hands: list[int]) -> None:
        """Reset the per-hand state around a deal; the auction or the play begins."""
        contract, dealer = self.contract, self.dealer
        self.hands = hands
        # cards in each hand, kept beside ``hands`` by ``apply``: ``observe`` shows them at every
        # decision, and copying this list is cheaper than counting bits
        self.hand_sizes = [hand.bit_count() for hand in hands]
        self.taken = [0] * NUM_SEATS
        self.tricks_won = [0] * NUM_SEATS
        self.trick: list[int] = []
        self.trick_mask = 0
        self.win_card = -1
        self.win_seat = -1
        self.led_suit = -1
        self.played_mask = 0
        self.completed_tricks: list[tuple[int, tuple[int, ...], int]] = []
        self.trick_leader = dealer
        self.trump = -1
        self.kh_rule = contract == NO_KING_OF_HEARTS
        self.lead_restriction = HEARTS if contract in (NO_HEARTS, NO_KING_OF_HEARTS) else -1
        self.penalty_mask = PENALTY_CARDS.get(contract, 0) if self.stop_early else 0
        # auction
        self.calls: list[tuple[int, int]] = []
        self.best_offer = 0
        self.best_bidder = -1
        self.minimum_offer = 1
        self.highest_offer = 0
        self.accepted = False
        self.buyer = -1
        self.price = 0
        self.passes_in_a_row = 0
        if contract == POSITIVE:
            self.phase = PHASE_AUCTION
            self.to_act = (dealer + 1) % NUM_SEATS
        else:
            self.phase = PHASE_PLAY
            self.to_act = dealer

    # -- whose turn, what is legal ----------------------------------------------------------------

    def current_seat(self) -> int:
        return self.to_act

    def legal_actions(self) -> Sequence[int]:
        seat = self.to_act
        if seat < 0:
            return ()
        if self.phase != PHASE_PLAY:
            return self._legal_auction_actions(seat)
        hand = self.hands[seat]
        if self.trick:
            led = self.led_suit
            follow = (hand >> (13 * led)) & 0x1FFF
            if follow:
                return _SUIT_CARDS[led][follow]
            if self.kh_rule and hand & KING_OF_HEARTS_BIT:
                return _KING_OF_HEARTS_ONLY
        elif self.lead_restriction >= 0:
            others = hand & ~_SUIT_MASK[self.lead_restriction]
            if others:
                hand = others
        return (
            _CLUBS[hand & 0x1FFF]
            + _DIAMONDS[(hand >> 13) & 0x1FFF]
            + _HEARTS[(hand >> 26) & 0x1FFF]
            + _SPADES[(hand >> 39) & 0x1FFF]
        )

    def _why_illegal(self, seat: int, card: int) -> str:
        name = StandardDeck.name(card)
        if self.trick:
            if self.hands[seat] & _SUIT_MASK[self.led_suit]:
                return f"seat {seat} must follow suit, not play {name}"
            return f"seat {seat} must play the KH at the first chance, not {name}"
        return f"seat {seat} may not lead {name} while holding another suit"

    def _may_opt_out(self) -> bool:
        return self.full_auction and self.highest_offer <= 1

    def _legal_auction_actions(self, seat: int) -> tuple[int, ...]:
        phase = self.phase
        if phase == PHASE_TRUMP:
            if seat == self.dealer and self.buyer < 0 and self._may_opt_out():
                return _TRUMPS_OR_OPT_OUT
            return _TRUMPS
        if phase == PHASE_DECISION:
            if self._may_opt_out():
                return (ACCEPT, REFUSE, OPT_OUT)
            return (ACCEPT, REFUSE)
        # a bidder speaks (round or competition)
        best = self.best_offer
        lowest = max(self.minimum_offer, best + 1)
        actions = [PASS]
        if (
            self.full_auction
            and best
            and priority(seat, self.dealer) < priority(self.best_bidder, self.dealer)
        ):
            actions.append(MATCH_BASE + best)
        actions.extend(range(OFFER_BASE + lowest, OFFER_BASE + MAX_OFFER + 1))
        return tuple(actions) if len(actions) > 1 else _PASS_ONLY

    # -- applying actions -------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        seat = self.to_act
        if seat < 0:
            raise IllegalActionError("the game is over")
        if self.phase != PHASE_PLAY:
            if action not in self._legal_auction_actions(seat):
                raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
            self._apply_auction(seat, action)
            return
        if not 0 <= action < 52:
            raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
        bit = _BITS[action]
        hand = self.hands[seat]
        trick = self.trick
        if not hand & bit:
            raise IllegalActionError(f"seat {seat} does not hold {StandardDeck.name(action)}")
        if trick:
            led_mask = _SUIT_MASK[self.led_suit]
            if not bit & led_mask and (
                hand & led_mask
                or (self.kh_rule and hand & KING_OF_HEARTS_BIT and action != KING_OF_HEARTS)
            ):
                raise IllegalActionError(self._why_illegal(seat, action))
        elif (
            self.lead_restriction >= 0
            and bit & _SUIT_MASK[self.lead_restriction]
            and hand & ~_SUIT_MASK[self.lead_restriction]
        ):
            raise IllegalActionError(self._why_illegal(seat, action))
        self.hands[seat] = hand ^ bit
        self.hand_sizes[seat] -= 1
        self.trick_mask |= bit
        trick.append(action)
        if len(trick) == 1:
            self.win_card, self.win_seat = action, seat
            self.led_suit = action // 13
        else:
            win = self.win_card
            suit, win_suit = action // 13, win // 13
            if (suit == win_suit and action > win) or (
                suit == self.trump and win_suit != self.trump
            ):
                self.win_card, self.win_seat = action, seat
        if len(trick) < NUM_SEATS:
            self.to_act = (seat + 1) % NUM_SEATS
            return
        winner = self.win_seat
        self.taken[winner] |= self.trick_mask
        self.played_mask |= self.trick_mask
        self.tricks_won[winner] += 1
        self.completed_tricks.append((self.trick_leader, tuple(trick), winner))
        self.trick = []
        self.trick_mask = 0
        self.to_act = self.trick_leader = winner
        if len(self.completed_tricks) == NUM_TRICKS or (
            self.penalty_mask and self.played_mask & self.penalty_mask == self.penalty_mask
        ):
            self._score_hand()

    def _apply_auction(self, seat: int, action: int) -> None:
        self.calls.append((seat, action))
        dealer = self.dealer
        if action >= TRUMP_BASE:
            self.trump = action - TRUMP_BASE
            if self.trump_lead_restricted:
                self.lead_restriction = self.trump
            self.phase = PHASE_PLAY
            self.to_act = self.trick_leader = dealer
            return
        if action == OPT_OUT:
            self._finish_hand(opt_out_points(dealer), opted_out=True)
            return
        if action == ACCEPT:
            self.accepted = True
            if self.full_auction:
                self.phase = PHASE_COMPETITION
                self.passes_in_a_row = 0
                self._next_competitor((dealer + 1) % NUM_SEATS)
            else:
                self._sell()
            return
        if action == REFUSE:
            if self.full_auction:
                self.minimum_offer = self.best_offer + 1
                self.best_offer, self.best_bidder = 0, -1
                self.phase = PHASE_AUCTION
                self.to_act = (dealer + 1) % NUM_SEATS
            else:
                self.phase = PHASE_TRUMP
                self.to_act = dealer
            return
        # a bidder's call: pass, offer or match
        if action != PASS:
            amount = action - OFFER_BASE if action < MATCH_BASE + 1 else action - MATCH_BASE
            self.best_offer, self.best_bidder = amount, seat
            self.highest_offer = max(self.highest_offer, amount)
        if self.phase == PHASE_AUCTION:
            if (seat - dealer) % NUM_SEATS < NUM_SEATS - 1:
                self.to_act = (seat + 1) % NUM_SEATS
            elif self.best_offer:
                self.phase = PHASE_DECISION
                self.to_act = dealer
            else:
                self.phase = PHASE_TRUMP
                self.to_act = dealer
            return
        # competition
        self.passes_in_a_row = self.passes_in_a_row + 1 if action == PASS else 0
        if self.passes_in_a_row == 2:
            self._sell()
        else:
            self._next_competitor((seat + 1) % NUM_SEATS)

    def _next_competitor(self, seat: int) -> None:
        """The next bidder to speak in the competition: skip the dealer and the best bidder."""
        while seat == self.dealer or seat == self.best_bidder:
            seat = (seat + 1) % NUM_SEATS
        self.to_act = seat

    def _sell(self) -> None:
        self.buyer, self.price = self.best_bidder, self.best_offer
        self.phase = PHASE_TRUMP
        self.to_act = self.buyer

    # -- scoring ----------------------------------------------------------------------------------

    def _score_hand(self) -> None:
        contract = self.contract
        if contract == POSITIVE:
            points = positive_points(self.tricks_won, self.dealer, self.buyer, self.price)
        else:
            points = self._negative_hand_points()
        self._finish_hand(points, opted_out=False)

    def _negative_hand_points(self) -> tuple[int, ...]:
        """Every seat's ``negative_points`` so far; ``observe`` asks after every trick, so the
        contracts scored by cards or by tricks are written for all seats at once."""
        contract = self.contract
        if contract in PENALTY_CARDS:
            mask, penalty = PENALTY_CARDS[contract], CARD_PENALTY[contract]
            return tuple([-penalty * (taken & mask).bit_count() for taken in self.taken])
        if contract == NO_TRICKS:
            return tuple([-TRICK_PENALTY * tricks for tricks in self.tricks_won])
        tricks = self.completed_tricks
        last_two = [winner for _, _, winner in tricks[11:13]]
        return tuple(
            negative_points(
                self.contract,
                self.taken[seat],
                self.tricks_won[seat],
                len(last_two) > 0 and last_two[0] == seat,
                len(last_two) > 1 and last_two[1] == seat,
            )
            for seat in range(NUM_SEATS)
        )

    def _finish_hand(self, points: tuple[int, ...], opted_out: bool) -> None:
        totals = self.positive_totals if self.contract == POSITIVE else self.negative_totals
        for seat in range(NUM_SEATS):
            totals[seat] += points[seat]
        self.previous_hands.append(
            HandResult(
                hand_number=self.hand_number,
                contract=self.contract,
                dealer=self.dealer,
                trump=self.trump,
                buyer=self.buyer,
                price=self.price,
                opted_out=opted_out,
                tricks=tuple(self.tricks_won),
                points=points,
            )
        )
        if self.hand_number < NUM_HANDS:
            self._deal_next_hand()
        else:
            self.to_act = -1
            self.hands = [0] * NUM_SEATS
            self.hand_sizes = [0] * NUM_SEATS
            self.phase = PHASE_PLAY

    # -- results and views ------------------------------------------------------------------------

    def balances(self) -> tuple[int, ...]:
        """Positive column plus (negative) negative column, per seat."""
        return tuple(p + n for p, n in zip(self.positive_totals, self.negative_totals, strict=True))

    def outcome(self) -> Outcome:
        balances = self.balances()
        return Outcome(balances, ranks_from_keys(balances))

    def scores_so_far(self) -> tuple[int, ...]:
        return self.balances()

    def hand_points_so_far(self) -> tuple[int, ...]:
        """Each seat's points in the current hand from the tricks played so far (no payment)."""
        return self._trick_block()[1]

    def _trick_block(self) -> _TrickBlock:
        """What changes only when a trick is taken or a hand ends, as tuples shared until then."""
        tricks = self.completed_tricks
        cached = self._block_cache
        if (
            cached is None
            or cached[0] is not tricks
            or cached[1] != len(tricks)
            or cached[2] != len(self.previous_hands)
        ):
            cached = self._refresh_block_cache()
        return cached[3]

    def _refresh_block_cache(self) -> _BlockCache:
        """Rebuild ``_block_cache``: ``observe`` reuses it at every decision until it is stale.

        It is keyed on the very list of finished tricks (a new hand, or a search bot's
        re-created state, brings a new list), its length and the number of finished hands (the
        last hand ends without a new list).
        """
        tricks = self.completed_tricks
        hands_done = len(self.previous_hands)
        if self.contract == POSITIVE:
            points = tuple([POSITIVE_TRICK * t for t in self.tricks_won])
        else:
            points = self._negative_hand_points()
        last = self._block_cache
        if last is not None and last[0] is tricks and last[2] == hands_done:
            _, _, negative, positive, _, previous = last[3]  # a trick taken: same hand
        else:
            negative = tuple(self.negative_totals)
            positive = tuple(self.positive_totals)
            previous = tuple(self.previous_hands)
        block = (tuple(self.tricks_won), points, negative, positive, tuple(tricks), previous)
        cached = self._block_cache = (tricks, len(tricks), hands_done, block)
        return cached

    def _refresh_auction_cache(self) -> _AuctionCache:
        """Rebuild ``_auction_cache``, the auction's public state, keyed on the list of calls and
        its length: every change to the auction is a call, and a new hand brings a new list."""
        calls = self.calls
        view = _new(
            AuctionView,
            (
                tuple(calls),  # calls
                self.best_offer,  # best_offer
                self.best_bidder,  # best_bidder
                self.minimum_offer,  # minimum_offer
                self.highest_offer,  # highest_offer
                self.accepted,  # accepted
                self.buyer,  # buyer
                self.price,  # price
            ),
        )
        cached = self._auction_cache = (calls, len(calls), view)
        return cached

    def observe(self, seat: int) -> KingObservation:
        # Called at every decision: the parts that change per trick, per hand or per call come
        # from the two caches (checked inline, a call costs more than the check), and the
        # observation is built positionally.
        tricks = self.completed_tricks
        block = self._block_cache
        if (
            block is None
            or block[0] is not tricks
            or block[1] != len(tricks)
            or block[2] != len(self.previous_hands)
        ):
            block = self._refresh_block_cache()
        tricks_won, hand_points, negative, positive, completed, previous = block[3]
        if self.contract == POSITIVE:
            calls = self.calls
            auction = self._auction_cache
            if auction is None or auction[0] is not calls or auction[1] != len(calls):
                auction = self._refresh_auction_cache()
            view: AuctionView | None = auction[2]
        else:
            view = None
        hand = self.hands[seat]
        return _new(
            KingObservation,
            (
                seat,  # seat
                self.hand_number,  # hand_number
                self.contract,  # contract
                self.dealer,  # dealer
                self.phase,  # phase
                self.trump,  # trump
                _CLUBS[hand & 0x1FFF]  # hand
                + _DIAMONDS[(hand >> 13) & 0x1FFF]
                + _HEARTS[(hand >> 26) & 0x1FFF]
                + _SPADES[(hand >> 39) & 0x1FFF],
                tuple(self.hand_sizes),  # cards_in_hand
                tricks_won,  # tricks_won
                hand_points,  # hand_points
                negative,  # negative_totals
                positive,  # positive_totals
                view,  # auction
                self.trick_leader,  # trick_leader
                tuple(self.trick),  # current_trick
                completed,  # completed_tricks
                previous,  # previous_hands
            ),
        )

    def describe_action(self, action: int) -> str:
        return describe_action(action)

    def is_public_action(self, action: int) -> bool:
        # Every seat is asked every decision whatever it holds (a card to each trick, a call in
        # each auction turn), so no decision's existence tells of a hand.
        return True

    def private_cards(self, seat: int) -> frozenset[int]:
        return frozenset(cards_of(self.hands[seat]))

    def concealed_cards(self) -> frozenset[int]:
        return frozenset()

    def public_cards(self) -> frozenset[int]:
        held = 0
        for hand in self.hands:
            held |= hand
        return frozenset(cards_of(FULL_DECK_MASK & ~held))

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS


def describe_action(action: int) -> str:
    """A short human-readable form of an action id."""
    if 0 <= action < 52:
        return f"play {StandardDeck.name(action)}"
    if action == PASS:
        return "pass"
    if OFFER_BASE < action <= OFFER_BASE + MAX_OFFER:
        return f"offer {action - OFFER_BASE}"
    if MATCH_BASE < action <= MATCH_BASE + MAX_OFFER:
        return f"match {action - MATCH_BASE} pela mão"
    if action == ACCEPT:
        return "accept"
    if action == REFUSE:
        return "refuse"
    if action == OPT_OUT:
        return "opt out"
    if TRUMP_BASE <= action < TRUMP_BASE + 4:
        return f"trumps {StandardDeck.suit(13 * (action - TRUMP_BASE)).name.lower()}"
    return f"action {action}"
