"""King, the Brazilian four-player game of six negative and four positive hands.

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
auction whose offers are counted in tricks, following the state machine of the docs page's
auction section (D-KING-1):

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

Options (every D-KING decision of the docs page): ``auction`` ("full", or "simplified": one
round, then the dealer accepts or names trumps, no matching and no opt-out),
``trump_lead_restricted`` (no trump lead while holding another suit),
``stop_when_penalties_exhausted`` (a negative hand ends once its penalty cards are all taken;
scores are unchanged).

The package: the rules (this module), what a seat sees (``view``), positions as values
(``positions``) and the wire form (``codec``).

Actions (ints): ``0..51`` play that card (``StandardDeck`` ids); ``52`` pass; ``52 + k`` offer
``k`` tricks (k = 1..13); ``65 + k`` match an offer of ``k`` tricks "pela mão"; ``79`` accept;
``80`` refuse; ``81`` opt out; ``82 + s`` name suit ``s`` (0 clubs, 1 diamonds, 2 hearts,
3 spades) as trumps.
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
from referee.games.cards import Rank, StandardDeck, Suit
from referee.games.king.view import (
    ACCEPT,
    DIAMONDS_SHIFT,
    HEARTS_SHIFT,
    MATCH_BASE,
    MAX_OFFER,
    NO_HEARTS,
    NO_KING_OF_HEARTS,
    NO_KINGS_OR_JACKS,
    NO_LAST_TWO_TRICKS,
    NO_QUEENS,
    NO_TRICKS,
    NUM_CARDS,
    NUM_HANDS,
    NUM_SEATS,
    NUM_TRICKS,
    OFFER_BASE,
    OPT_OUT,
    PASS,
    PHASE_AUCTION,
    PHASE_COMPETITION,
    PHASE_DECISION,
    PHASE_PLAY,
    PHASE_TRUMP,
    POSITIVE,
    REFUSE,
    SPADES_SHIFT,
    SUIT_BITS,
    SUIT_CARDS,
    SUIT_SIZE,
    TRUMP_BASE,
    AuctionCache,
    HandResult,
    Trick,
    TrickCache,
    cards_of,
    observe,
)

NUM_NEGATIVE_HANDS = 6

# -- scoring --------------------------------------------------------------------------------------

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

SUIT_MASKS = tuple(SUIT_BITS << (SUIT_SIZE * suit) for suit in range(4))
"""A hand's cards of each suit (by suit index)."""
HEARTS_MASK = SUIT_MASKS[HEARTS]
KING_OF_HEARTS = StandardDeck.card(Suit.HEARTS, Rank.KING)
KING_OF_HEARTS_BIT = 1 << KING_OF_HEARTS
KINGS_AND_JACKS_MASK = sum(
    1 << StandardDeck.card(suit, rank) for suit in Suit for rank in (Rank.KING, Rank.JACK)
)
QUEENS_MASK = sum(1 << StandardDeck.card(suit, Rank.QUEEN) for suit in Suit)
FULL_DECK_MASK = (1 << NUM_CARDS) - 1
NO_SUIT = -1
"""``trump``, ``lead_restriction`` and ``led_suit`` (between tricks) when there is none."""

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
            "D-KING-1. full = the auction state machine of docs/games/king.md (rounds of offers,"
            " the dealer accepts or refuses, matching 'pela mão', opt-out 4/3/3/3 when no offer"
            " above one trick was made); simplified = one round of rising offers, then the dealer"
            " accepts the best one or names trumps himself (no matching, no opt-out).",
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

# -- cards and tricks -----------------------------------------------------------------------------


def contract_of_hand(hand_number: int) -> int:
    """The contract played in hand ``hand_number`` (1..10), in the fixed order of the rules."""
    return min(hand_number, POSITIVE)


def beats(card: int, best: int, trump_suit: int = NO_SUIT) -> bool:
    """Whether ``card`` takes the trick from ``best``, the card winning it so far: a higher card
    of the same suit, or a trump over a card of another suit."""
    suit, best_suit = card // SUIT_SIZE, best // SUIT_SIZE
    return (suit == best_suit and card > best) or (suit == trump_suit and best_suit != trump_suit)


def trick_winner(cards: Sequence[int], trump_suit: int = NO_SUIT) -> int:
    """Index in ``cards`` (play order) of the card that takes the trick."""
    best = 0
    for index in range(1, len(cards)):
        if beats(cards[index], cards[best], trump_suit):
            best = index
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


def playable(hand: int, led_suit: int, kh_rule: bool, lead_restriction: int) -> int:
    """The cards of ``hand`` its seat may play, as a mask, with ``led_suit`` led (``NO_SUIT``
    for a lead): the led suit if it holds any; else, under the K♥ rule (hand 5), the K♥ if held;
    a lead of the ``lead_restriction`` suit (hearts in hands 2 and 5, trumps with
    ``trump_lead_restricted``) only with nothing else."""
    if led_suit != NO_SUIT:
        follow = hand & SUIT_MASKS[led_suit]
        if follow:
            return follow
        if kh_rule and hand & KING_OF_HEARTS_BIT:
            return KING_OF_HEARTS_BIT
        return hand
    if lead_restriction != NO_SUIT and hand & ~SUIT_MASKS[lead_restriction]:
        return hand & ~SUIT_MASKS[lead_restriction]
    return hand


# -- tables for the hot path, built from the functions above --------------------------------------

_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_CARDS
_ALL_CARDS = frozenset(range(NUM_CARDS))
_BITS = tuple(1 << card for card in range(NUM_CARDS))
"""``_BITS[card]``: the card's bit in a hand mask."""
_BEATERS = tuple(
    tuple(
        sum(_BITS[card] for card in range(NUM_CARDS) if beats(card, best, trump_suit))
        for best in range(NUM_CARDS)
    )
    for trump_suit in (0, 1, 2, 3, NO_SUIT)
)
"""``_BEATERS[trump][best]``: the cards that ``beats`` ``best`` under those trumps, as a mask.
No trumps (``NO_SUIT``, -1) is the last entry, so indexing by the trump suit finds it; a hand
keeps its row as ``KingState.beaters``."""


def _duty(hand: int, led_suit: int, kh_rule: bool, lead_restriction: int) -> int:
    """What ``playable`` makes the holder of ``hand`` play if it holds any of it: 0 for no duty
    (every card of ``hand`` playable)."""
    cards = playable(hand, led_suit, kh_rule, lead_restriction)
    return 0 if cards == hand else cards


_VOID_DUTY = tuple(
    _duty(FULL_DECK_MASK & ~SUIT_MASKS[0], 0, kh_rule, NO_SUIT) for kh_rule in (False, True)
)
"""``_VOID_DUTY[kh_rule]``: what a seat void in the led suit must play if it holds any (the K♥
under the K♥ rule; 0, no duty, without it)."""
_LEAD_DUTY = tuple(_duty(FULL_DECK_MASK, NO_SUIT, False, suit) for suit in (0, 1, 2, 3, NO_SUIT))
"""``_LEAD_DUTY[lead_restriction]``: what a seat must lead if it holds any (every suit but the
restricted one; 0 with no restriction, the last entry). With these a card's legality is
``hand & duty or hand``, as following suit is ``hand & SUIT_MASKS[led]``: ``legal_actions`` and
``apply`` run at every card and a call there costs more than the rule."""
_NEXT_SEAT = tuple((seat + 1) % NUM_SEATS for seat in range(NUM_SEATS))
"""``_NEXT_SEAT[seat]``: the seat on its left, who plays next unless the trick is complete."""
_PASS_ONLY = (PASS,)
_TRUMPS = tuple(TRUMP_BASE + s for s in range(4))
_TRUMPS_OR_OPT_OUT = (*_TRUMPS, OPT_OUT)

_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in reversed(range(1, NUM_CARDS)))
"""``(i, bits)`` per step of ``Random.shuffle`` on the pack: swap ``i`` with
``_randbelow(i + 1)``, which draws ``getrandbits(bits)`` until the value is at most ``i``."""


# -- the state ------------------------------------------------------------------------------------


class KingState(State):
    """A whole game of King: ten hands, from the first deal to the final balances."""

    game_type = KING

    trick_changes = 0
    """Bumped whenever a trick is taken or a hand starts or ends: what the view keeps its
    tricks, points, totals and finished hands on."""
    call_changes = 0
    """Bumped at every call of an auction and at every new hand: what the view keeps its
    ``AuctionView`` on."""
    view_trick_cache: TrickCache | None = None
    view_auction_cache: AuctionCache | None = None
    """The view's (``view.observe``); the rules never read them."""

    observe = observe

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        super().__init__(num_seats, options, rng)
        self._configure(options)
        self.first_dealer = rng.randrange(NUM_SEATS)
        self.negative_totals = [0] * NUM_SEATS
        self.positive_totals = [0] * NUM_SEATS
        self.previous_hands: list[HandResult] = []
        self.hand_number = 0
        self._deal_next_hand()

    def _configure(self, options: Mapping[str, OptionValue]) -> None:
        """What the options fix for the whole game (``positions`` builds states with it)."""
        self.full_auction = options["auction"] == "full"
        self.trump_lead_restricted = bool(options["trump_lead_restricted"])
        self.stop_early = bool(options["stop_when_penalties_exhausted"])

    # -- dealing ----------------------------------------------------------------------------------

    def _deal_next_hand(self) -> None:
        self.hand_number += 1
        self.contract = contract_of_hand(self.hand_number)
        self.dealer = dealer = (self.first_dealer + self.hand_number - 1) % NUM_SEATS
        deck = list(range(NUM_CARDS))
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
        self.win_card = -1
        self.win_seat = -1
        self.led_suit = NO_SUIT
        self.played_mask = 0
        self.completed_tricks: list[Trick] = []
        self.trick_leader = dealer
        self.trump = NO_SUIT
        self.beaters = _BEATERS[NO_SUIT]
        self.kh_rule = contract == NO_KING_OF_HEARTS
        self.lead_restriction = HEARTS if contract in (NO_HEARTS, NO_KING_OF_HEARTS) else NO_SUIT
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
        self.trick_changes += 1
        self.call_changes += 1
        if contract == POSITIVE:
            self.phase = PHASE_AUCTION
            self.to_act = (dealer + 1) % NUM_SEATS
        else:
            self.phase = PHASE_PLAY
            self.to_act = dealer

    # -- whose turn, what is legal ----------------------------------------------------------------

    def current_seat(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0  # as ``State.is_terminal``, a call cheaper: asked every decision

    def legal_actions(self) -> Sequence[int]:
        seat = self.to_act
        if seat < 0:
            return ()
        if self.phase != PHASE_PLAY:
            return self._legal_calls(seat)
        hand = self.hands[seat]
        led = self.led_suit
        if led >= 0:  # a trick under way (``NO_SUIT`` is -1)
            follow = hand >> SUIT_SIZE * led & SUIT_BITS
            if follow:  # the led suit, straight from its table
                return SUIT_CARDS[led][follow]
            hand = hand & _VOID_DUTY[self.kh_rule] or hand
        else:
            hand = hand & _LEAD_DUTY[self.lead_restriction] or hand
        bits = SUIT_BITS
        return (  # cards_of(hand), listed in place: it runs at every lead and discard
            _CLUBS[hand & bits]
            + _DIAMONDS[hand >> DIAMONDS_SHIFT & bits]
            + _HEARTS[hand >> HEARTS_SHIFT & bits]
            + _SPADES[hand >> SPADES_SHIFT]
        )

    def _why_illegal(self, seat: int, card: int) -> str:
        name = StandardDeck.name(card)
        if not self.hands[seat] & _BITS[card]:
            return f"seat {seat} does not hold {name}"
        if self.trick:
            if self.hands[seat] & SUIT_MASKS[self.led_suit]:
                return f"seat {seat} must follow suit, not play {name}"
            return f"seat {seat} must play the KH at the first chance, not {name}"
        return f"seat {seat} may not lead {name} while holding another suit"

    def _may_opt_out(self) -> bool:
        return self.full_auction and self.highest_offer <= 1

    def _legal_calls(self, seat: int) -> tuple[int, ...]:
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
            if action not in self._legal_calls(seat):
                raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
            self._apply_call(seat, action)
            return
        if not 0 <= action < NUM_CARDS:
            raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
        hand = self.hands[seat]
        bit = _BITS[action]
        led = self.led_suit
        # ``playable``, from its tables (see ``_LEAD_DUTY``)
        if led >= 0:
            legal = hand & SUIT_MASKS[led] or hand & _VOID_DUTY[self.kh_rule] or hand
        else:
            legal = hand & _LEAD_DUTY[self.lead_restriction] or hand
        if not legal & bit:
            raise IllegalActionError(self._why_illegal(seat, action))
        # The card goes to the trick (kept in this one frame: it runs at every card).
        self.hands[seat] = hand ^ bit
        self.hand_sizes[seat] -= 1
        trick = self.trick
        trick.append(action)
        if led < 0:
            self.win_card, self.win_seat = action, seat
            self.led_suit = action // SUIT_SIZE
        elif self.beaters[self.win_card] & bit:
            self.win_card, self.win_seat = action, seat
        next_seat = _NEXT_SEAT[seat]
        if next_seat != self.trick_leader:
            self.to_act = next_seat
        else:
            self._take_trick()

    def _take_trick(self) -> None:
        """The trick's winner takes its cards and leads next; the last trick scores the hand."""
        winner, trick = self.win_seat, self.trick
        first, second, third, fourth = trick
        cards = _BITS[first] | _BITS[second] | _BITS[third] | _BITS[fourth]
        self.taken[winner] |= cards
        self.played_mask |= cards
        self.tricks_won[winner] += 1
        self.completed_tricks.append((self.trick_leader, tuple(trick), winner))
        self.trick_changes += 1
        self.trick = []
        self.led_suit = NO_SUIT
        self.to_act = self.trick_leader = winner
        penalty = self.penalty_mask  # 0 unless the hand may stop once its penalty cards are out
        if len(self.completed_tricks) == NUM_TRICKS or (
            penalty and self.played_mask & penalty == penalty
        ):
            self._score_hand()

    def _apply_call(self, seat: int, action: int) -> None:
        self.calls.append((seat, action))
        self.call_changes += 1
        dealer = self.dealer
        if action >= TRUMP_BASE:
            self.trump = action - TRUMP_BASE
            self.beaters = _BEATERS[self.trump]
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
            if priority(seat, dealer) < NUM_SEATS - 1:
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
        last_two = [winner for _, _, winner in tricks[NUM_TRICKS - 2 : NUM_TRICKS]]
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
        self.trick_changes += 1
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
        if self.contract == POSITIVE:
            return tuple([POSITIVE_TRICK * tricks for tricks in self.tricks_won])
        return self._negative_hand_points()

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
    if 0 <= action < NUM_CARDS:
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
        return f"trumps {StandardDeck.suit(SUIT_SIZE * (action - TRUMP_BASE)).name.lower()}"
    return f"action {action}"
