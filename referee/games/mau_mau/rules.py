"""Brazilian Mau-Mau with penalty points (rules reference: docs/games/mau-mau.md).

A game is a series of deals. Each deal the dealer gives 7 cards, one at a time, to every seat
starting at his left, turns the next card up as the start card ("carta da partida", the first
card of the discard pile) and leaves the rest as the stock. From the dealer's left, clockwise,
each player must discard one card matching the top card's rank or suit. Special cards act when
discarded: an 8 makes the next player draw 3 and lose his turn; a 7 makes the *previous* player
draw 2; an Ace skips the next player; a Queen reverses the direction; a Jack is wild and its
player announces a suit (the next discard must be that suit or a Jack) or nothing (the next
discard may be anything), and two Jacks may be discarded together. A player who cannot discard
draws one card, loses his turn and is fined 50 points. A discard that leaves one card must carry
the "last card" announcement, or its player draws 5. When the stock runs out, the discard pile
under its top card is shuffled into a new stock. The deal ends when a player discards his last
card; the losers' hands are counted (J 20, 8 20, 7 15, A 15, K Q 10 at 10, others face value),
doubled if the winner went out with a Jack, quadrupled with two Jacks, and doubled again if the
start card is a spade. The game runs to a target (default 1,000).

Decisions the traditional rules leave open (docs/games/mau-mau.md, decisions): one
52-card pack (MAU-A2); the first dealer is drawn at random (a seeded draw, as allowed,
MAU-A19) and the deal passes left; the dealer's left plays first, clockwise (MAU-A3); the start
card's own effect is not applied (MAU-A11); no stacking of 7s or 8s (MAU-A12); the effect of a
player's last card is not applied (MAU-A15); the Jack and spade multipliers multiply and fines
are not multiplied (MAU-A16); the last-card flag is offered only on discards that leave exactly
one card, which is how a false claim is "ignored" (MAU-A18); when the stock and the pile are both
too small, missing draws lapse (MAU-A7).

The open decisions D-MAU-1..5 are options (``MAU_MAU.options``):
``cannot_discard`` (D-MAU-1), ``scoring`` and ``target`` (D-MAU-2), ``jack_wild`` (D-MAU-3),
``seat_range`` (D-MAU-4), ``reshuffle`` (D-MAU-5: which generator shuffles a new stock). The
registered seat range is D-MAU-4's default, 2 to 6; the alternative "3-6" is checked against
the number of seats when a game is created, and "up to 7" would need the registered range
itself to change, so it is not offered.

Every fine is charged to the fined seat in the deal's record; ``scoring`` decides who is paid.
``MAU_MAU.lower_score_wins`` is True because the default scoring is ``negative``; ``outcome()``
and ``lower_score_wins()`` (which the referee uses to rank a forfeit) follow the scoring option
actually in force.

Actions (ints): bits 0-5 hold the discarded card (``StandardDeck`` id, 0..51); bits 6-8 the
suit a Jack announces (0 = none, else the ``Suit`` value); bits 9-11 the suit of a second Jack
discarded with it (0 = a single card; the pair is written with the lower id first); bit 12
(``LAST_CARD``) the last-card announcement. ``DRAW`` (52) draws because no discard is legal;
``PASS`` (53) keeps a drawn card under ``cannot_discard = draw_then_may_play``; only a player
whose drawn card is playable is asked, so ``PASS`` is not public (``is_public_action``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from referee.games.api import (
    GameType,
    IllegalActionError,
    InvalidOptionsError,
    OptionSpec,
    OptionValue,
    Outcome,
    State,
    ranks_from_keys,
)
from referee.games.bits import set_bits
from referee.games.cards import Rank, StandardDeck, Suit
from referee.games.mau_mau.view import (
    ANNOUNCE_SHIFT,
    DIAMONDS_SHIFT,
    DRAW,
    HEARTS_SHIFT,
    LAST_CARD,
    PASS,
    SECOND_JACK_SHIFT,
    SPADES_SHIFT,
    SUIT_BITS,
    SUIT_SIZE,
    DealResult,
    PenaltyCache,
    TableCache,
    action_cards,
    observe,
    public_table,
)

HAND_SIZE = 7
"""Cards dealt to each seat ("Cada jogador receberá 07 cartas")."""

FINE = 50
"""Points for each turn a player could not discard."""

FORGOT_LAST_CARD_DRAW = 5
"""Cards drawn for discarding down to one card without announcing it."""

CANNOT_DISCARD_RULES = ("draw_and_end_turn", "draw_then_may_play", "barred_for_deal")
SCORING_MODES = ("negative", "positive")
SEAT_RANGES = ("2-6", "3-6")
RESHUFFLES = ("game_generator", "deal_seeded")

MAU_MAU = GameType(
    name="mau-mau",
    title="Mau-Mau",
    min_seats=2,
    max_seats=6,
    rules_section="docs/games/mau-mau.md",
    lower_score_wins=True,
    options=(
        OptionSpec(
            "cannot_discard",
            "draw_and_end_turn",
            "D-MAU-1. A player with no legal discard is fined 50 and draws one card; then:"
            " draw_and_end_turn = his turn ends; draw_then_may_play = he may discard the drawn"
            " card if it is playable (or pass); barred_for_deal = his turn ends and he may not"
            " go out for the rest of the deal (the bar is lifted if every seat is barred).",
            choices=CANNOT_DISCARD_RULES,
        ),
        OptionSpec(
            "scoring",
            "negative",
            "D-MAU-2. negative = each loser adds his multiplied hand to his tally, each fine"
            " adds 50 to the fined seat, and once a tally reaches the target the lowest tally"
            " wins; positive = the deal winner scores the losers' multiplied hands plus 50 per"
            " fine of the others, and the first to reach the target wins.",
            choices=SCORING_MODES,
        ),
        OptionSpec(
            "target",
            1000,
            "D-MAU-2. The tally that ends the game, checked after each deal.",
            minimum=1,
            maximum=100_000,
        ),
        OptionSpec(
            "jack_wild",
            True,
            "D-MAU-3. True = a Jack may be discarded on any card; false = a Jack needs a rank or"
            " suit match like any card (its power is then only the suit announcement).",
        ),
        OptionSpec(
            "seat_range",
            "2-6",
            "D-MAU-4. Players allowed: 2-6 (the registered range) or 3-6 (a 2-seat game is"
            " then rejected). An 'up to 7' is not offered: it would change the"
            " registered seat range.",
            choices=SEAT_RANGES,
        ),
        OptionSpec(
            "reshuffle",
            "game_generator",
            "D-MAU-5. What shuffles the pile into a new stock: game_generator = the match's"
            " generator, as every record made before this option replays; deal_seeded = a"
            " generator seeded from the deal's cards, so how often play ran the stock out"
            " cannot change the deals that follow (every rotation of a duplicate set is then"
            " dealt the same cards deal after deal).",
            choices=RESHUFFLES,
        ),
    ),
)

# -- card tables ------------------------------------------------------------------------------

_DECK = StandardDeck.SIZE
_ALL = (1 << _DECK) - 1
_ALL_CARDS = frozenset(range(_DECK))
_JACK = Rank.JACK - 2
_JACK_IDS = tuple(SUIT_SIZE * s + _JACK for s in range(4))
JACKS = sum(1 << c for c in _JACK_IDS)
_SUIT_MASKS = tuple(SUIT_BITS << (SUIT_SIZE * s) for s in range(4))
_RANK_MASKS = tuple(sum(1 << (SUIT_SIZE * s + r) for s in range(4)) for r in range(SUIT_SIZE))

CARD_POINTS = {
    Rank.JACK: 20,
    Rank.EIGHT: 20,
    Rank.SEVEN: 15,
    Rank.ACE: 15,
    Rank.KING: 10,
    Rank.QUEEN: 10,
    Rank.TEN: 10,
    Rank.NINE: 9,
    Rank.SIX: 6,
    Rank.FIVE: 5,
    Rank.FOUR: 4,
    Rank.THREE: 3,
    Rank.TWO: 2,
}
"""Penalty points of a card left in a loser's hand."""

_POINTS_BY_INDEX = tuple(CARD_POINTS[Rank(r + 2)] for r in range(SUIT_SIZE))
_SUIT_POINTS = tuple(
    sum(_POINTS_BY_INDEX[r] for r in range(SUIT_SIZE) if m >> r & 1) for m in range(1 << SUIT_SIZE)
)


def hand_points(cards: int | Sequence[int]) -> int:
    """Penalty value of a hand (a bitmask or card ids); a full pack is worth 516 (MAU-E1)."""
    if not isinstance(cards, int):
        cards = sum(1 << c for c in set(cards))
    return (
        _SUIT_POINTS[cards & SUIT_BITS]
        + _SUIT_POINTS[(cards >> DIAMONDS_SHIFT) & SUIT_BITS]
        + _SUIT_POINTS[(cards >> HEARTS_SHIFT) & SUIT_BITS]
        + _SUIT_POINTS[(cards >> SPADES_SHIFT) & SUIT_BITS]
    )


def deal_multiplier(final_jacks: int, start_card: int) -> int:
    """The losers' multiplier: ×2 for going out with a Jack, ×4 with two, ×2 on a spade start."""
    jack_factor = (1, 2, 4)[final_jacks]
    return jack_factor * (2 if StandardDeck.suit(start_card) is Suit.SPADES else 1)


def playable_after_card(card: int, jack_wild: bool) -> int:
    """Mask of the cards that may follow a non-Jack discard or the start card."""
    mask = _SUIT_MASKS[card // SUIT_SIZE] | _RANK_MASKS[card % SUIT_SIZE]
    return mask | JACKS if jack_wild else mask


def playable_after_jack(announced: int) -> int:
    """Mask of the cards that may follow a Jack announcing ``announced`` (0 = no announcement)."""
    return _SUIT_MASKS[announced - 1] | JACKS if announced else _ALL


def _with_flag(actions: list[int], action: int, flag: bool) -> None:
    actions.append(action)
    if flag:
        actions.append(action | LAST_CARD)


_SINGLES: dict[int, tuple[int, ...]] = {}
"""Single-card discards by suit, in-suit mask and last-card flag (filled as met; at most 64k)."""


def _singles(suit: int, bits: int, flag: bool) -> tuple[int, ...]:
    """The single-card discards of the cards ``bits`` of ``suit`` (a Jack with each announcement),
    ascending, each followed by its last-card variant when ``flag``."""
    key = bits << 3 | suit << 1 | flag
    found = _SINGLES.get(key)
    if found is None:
        actions: list[int] = []
        for rank in set_bits(bits):
            card = SUIT_SIZE * suit + rank
            if rank == _JACK:
                for announce in range(5):
                    _with_flag(actions, card | announce << ANNOUNCE_SHIFT, flag)
            else:
                _with_flag(actions, card, flag)
        found = _SINGLES[key] = tuple(actions)
    return found


def discard_actions(
    playable: int, held_jacks: int, hand_size: int, barred: bool = False
) -> tuple[int, ...]:
    """Every legal discard given the playable cards held and all the Jacks held.

    Two Jacks may go together when at least one of them is playable. The last-card flag is
    offered exactly when the discard leaves one card; a barred seat may not empty its hand.
    """
    actions: list[int] = []
    if not (barred and hand_size == 1):
        flag = hand_size == 2
        actions += _singles(0, playable & SUIT_BITS, flag)
        actions += _singles(1, playable >> DIAMONDS_SHIFT & SUIT_BITS, flag)
        actions += _singles(2, playable >> HEARTS_SHIFT & SUIT_BITS, flag)
        actions += _singles(3, playable >> SPADES_SHIFT & SUIT_BITS, flag)
    if held_jacks & (held_jacks - 1) and playable & JACKS and not (barred and hand_size == 2):
        jacks = set_bits(held_jacks)
        double_flag = hand_size == 3
        for i, first in enumerate(jacks):
            for second in jacks[i + 1 :]:
                if not playable & (1 << first | 1 << second):
                    continue
                base = first | (second // SUIT_SIZE + 1) << SECOND_JACK_SHIFT
                for announce in range(5):
                    _with_flag(actions, base | announce << ANNOUNCE_SHIFT, double_flag)
    return tuple(actions)


_AFTER_CARD = {
    wild: tuple(playable_after_card(c, wild) for c in range(_DECK)) for wild in (False, True)
}
"""``[jack_wild][card]``: the cards playable on ``card`` (see ``playable_after_card``)."""

_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in reversed(range(1, _DECK)))
"""``(i, bits)`` for each step of a Fisher-Yates shuffle of the pack, as ``Random.shuffle``."""


def shuffle(cards: list[int], rng: random.Random) -> None:
    """``rng.shuffle(cards)``, inlined: the same draws from ``rng``, the same result, faster.

    ``Random.shuffle`` swaps ``cards[i]`` with ``cards[_randbelow(i + 1)]`` for ``i`` from the
    top down, and ``_randbelow(n)`` draws ``getrandbits(n.bit_length())`` until below ``n``.
    """
    getrandbits = rng.getrandbits
    for i, bits in _SHUFFLE_STEPS[_DECK - len(cards) :]:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


_SIZE_KEY = tuple(min(size, 4) << 52 for size in range(_DECK + 1))
"""The hand-size part of a legal-moves cache key: 1, 2, 3 or more cards."""

_CACHE: dict[int, tuple[int, ...]] = {}
"""Legal discards by key (see ``MauMauState.legal_actions``): a pure function, shared."""
_CACHE_LIMIT = 1 << 18
_DRAW_ONLY = (DRAW,)
_BITS = tuple(1 << c for c in range(_DECK))
_new = tuple.__new__
"""Builds a NamedTuple from a tuple of its fields in order, without keyword matching."""


# -- results and views ------------------------------------------------------------------------


class MauMauState(State):
    """A whole game of Mau-Mau, from the first deal to the target."""

    game_type = MAU_MAU

    table_changes = 0
    """Bumped wherever a field of the observations' shared ``table`` changes: a deal's end
    (which deals the next one), a Queen, a drawn card becoming playable (``_stuck``), played
    or kept. The view's cache is keyed on it."""
    penalty_changes = 0
    """Bumped when ``fines`` or ``barred`` change: a fine or bar (``_stuck``), a new deal."""
    view_table_cache: TableCache | None = None
    view_penalty_cache: PenaltyCache | None = None
    """The view's (``view.observe``); the rules never read them."""

    observe = observe
    public_table = public_table

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        self._configure(num_seats, options, rng)
        self.tallies = [0] * num_seats
        self.previous_deals: list[DealResult] = []
        self.reshuffles = 0
        self.first_dealer = rng.randrange(num_seats)
        self.deal_number = 0
        self.dealer = self.first_dealer - 1
        self._deal()

    def _configure(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        """What the options decide, for a new game and for a position (``positions``)."""
        State.__init__(self, num_seats, options, rng)
        if options["seat_range"] == "3-6" and num_seats < 3:
            raise InvalidOptionsError("with seat_range 3-6 Mau-Mau seats 3 to 6 players")
        self.jack_wild = bool(options["jack_wild"])
        self.cannot_discard = str(options["cannot_discard"])
        self.may_play_drawn = self.cannot_discard == "draw_then_may_play"
        self.bars = self.cannot_discard == "barred_for_deal"
        self.negative = options["scoring"] == "negative"
        self.target = int(options["target"])
        self.deal_seeded_reshuffles = options["reshuffle"] == "deal_seeded"
        self._after_card = _AFTER_CARD[self.jack_wild]
        # Jacks are always playable when wild; otherwise the Jacks held join the legal-moves key.
        self._jack_key = 0 if self.jack_wild else JACKS

    # -- the flow of a deal -------------------------------------------------------------------

    def _deal(self) -> None:
        n = self.num_seats
        self.deal_number += 1
        self.dealer = (self.dealer + 1) % n
        deck = list(range(_DECK))
        shuffle(deck, self.rng)
        deck = self.arrange_deal(deck)
        self.deal_key = bytes(deck)
        self.deal_reshuffles = 0
        dealt = n * HAND_SIZE
        hands = [0] * n
        for k in range(n):  # one card at a time from the dealer's left: every n-th card
            hands[(self.dealer + 1 + k) % n] = sum(map(_BITS.__getitem__, deck[k:dealt:n]))
        self.hands = hands
        self.counts = [HAND_SIZE] * n
        self.start_card = deck[n * HAND_SIZE]
        self.pile: tuple[int, ...] = (self.start_card,)
        self.stock = deck[n * HAND_SIZE + 1 :]  # drawn from the end
        self.playable = self._after_card[self.start_card]
        self.announced = 0
        self.direction = 1
        self.fines = [0] * n
        self.barred = [False] * n
        self.penalty_changes += 1
        self.drawn: int | None = None
        self.to_act = (self.dealer + 1) % n
        self._legal: tuple[int, ...] | None = None

    def _draw(self, seat: int, count: int) -> int | None:
        """Give ``seat`` up to ``count`` cards, reshuffling the pile when the stock is empty."""
        stock = self.stock
        if count == 1 and stock:
            top = stock.pop()
            self.hands[seat] |= 1 << top
            self.counts[seat] += 1
            return top
        if len(stock) >= count:  # taken from the end of the stock
            taken = 0
            for _ in range(count):
                top = stock.pop()
                taken |= 1 << top
            self.hands[seat] |= taken
            self.counts[seat] += count
            return top
        card = None
        for _ in range(count):
            if not stock:
                if len(self.pile) < 2:
                    return card  # nothing left anywhere: the remaining draws lapse
                stock.extend(self.pile[:-1])
                self.pile = self.pile[-1:]
                shuffle(stock, self._reshuffle_rng() if self.deal_seeded_reshuffles else self.rng)
                self.reshuffles += 1
                self.deal_reshuffles += 1
            card = stock.pop()
            self.hands[seat] |= 1 << card
            self.counts[seat] += 1
        return card

    def _reshuffle_rng(self) -> random.Random:
        """With ``reshuffle=deal_seeded``: the generator of this deal's next reshuffle, seeded
        from the deal (its cards in dealing order) and the reshuffles before it in the deal,
        not drawn from ``rng``: how often play runs the stock out then cannot change the deals
        that follow, so every rotation of a duplicate set is dealt the same cards."""
        return random.Random(self.deal_key + self.deal_reshuffles.to_bytes(4, "big"))

    def current_seat(self) -> int:
        return self.to_act

    def legal_actions(self) -> Sequence[int]:
        legal = self._legal
        if legal is None:
            seat = self.to_act
            if self.drawn is None and not self.bars and seat >= 0:  # the common case, inlined
                hand = self.hands[seat]
                size = self.counts[seat]
                key = hand & self.playable | _SIZE_KEY[size]
                if self._jack_key:
                    key |= (hand & self._jack_key) << 55
                legal = _CACHE.get(key)
                if legal is None:
                    legal = self._compute_legal()
            else:
                legal = self._compute_legal()
            self._legal = legal
        return legal

    def _compute_legal(self) -> tuple[int, ...]:
        seat = self.to_act
        if seat < 0:
            return ()
        hand = self.hands[seat]
        size = self.counts[seat]
        if self.drawn is not None:
            return (*discard_actions(1 << self.drawn, 0, size), PASS)
        if self.bars and self.barred[seat]:
            return discard_actions(hand & self.playable, hand & JACKS, size, True) or _DRAW_ONLY
        # Only the playable cards, the Jacks held (if not all playable) and whether the hand
        # holds 1, 2, 3 or more cards decide the answer.
        key = hand & self.playable | (size if size < 4 else 4) << 52 | (hand & self._jack_key) << 55
        legal = _CACHE.get(key)
        if legal is None:
            if len(_CACHE) >= _CACHE_LIMIT:
                _CACHE.clear()
            legal = discard_actions(hand & self.playable, hand & JACKS, size) or _DRAW_ONLY
            _CACHE[key] = legal
        return legal

    def apply(self, action: int) -> None:
        seat = self.to_act
        legal = self._legal
        if legal is None:
            legal = self._compute_legal()
        if action not in legal:
            if seat < 0:
                raise IllegalActionError("the game is over")
            raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
        self._legal = None
        n = self.num_seats
        if action == DRAW:
            self._stuck(seat)
            return
        if action == PASS:
            self.drawn = None
            self.table_changes += 1
            self.to_act = (seat + self.direction) % n
            return
        if self.drawn is not None:
            self.drawn = None
            self.table_changes += 1
        card = action & 63
        second = action >> SECOND_JACK_SHIFT & 7
        counts = self.counts
        if second:
            other = SUIT_SIZE * (second - 1) + _JACK
            self.hands[seat] ^= 1 << card | 1 << other
            self.pile += (card, other)
            left = counts[seat] = counts[seat] - 2
        else:
            self.hands[seat] ^= 1 << card
            self.pile += (card,)
            left = counts[seat] = counts[seat] - 1
        if left < 2:
            if not left:
                self._end_deal(seat, 2 if second else int(card % SUIT_SIZE == _JACK))
                return
            if not action & LAST_CARD:
                self._draw(seat, FORGOT_LAST_CARD_DRAW)
        rank = card % SUIT_SIZE
        d = self.direction
        if rank == _JACK:
            announced = self.announced = action >> ANNOUNCE_SHIFT & 7
            self.playable = playable_after_jack(announced)
            self.to_act = (seat + d) % n
            return
        self.announced = 0
        self.playable = self._after_card[card]
        if rank < 5 or rank == 7 or rank == 8 or rank == 11:  # 2-6, 9, 10, K: no effect
            self.to_act = (seat + d) % n
        elif rank == 6:  # an 8: the next player draws 3 and loses his turn
            self._draw((seat + d) % n, 3)
            self.to_act = (seat + 2 * d) % n
        elif rank == 5:  # a 7: the previous player draws 2
            self._draw((seat - d) % n, 2)
            self.to_act = (seat + d) % n
        elif rank == 12:  # an Ace: the next player is skipped
            self.to_act = (seat + 2 * d) % n
        else:  # a Queen: the direction reverses
            self.direction = -d
            self.table_changes += 1
            self.to_act = (seat - d) % n

    def _stuck(self, seat: int) -> None:
        self.fines[seat] += 1
        self.penalty_changes += 1
        card = self._draw(seat, 1)
        if self.bars:
            self.barred[seat] = True
            if all(self.barred):  # nobody could ever go out: lift the bar
                self.barred = [False] * self.num_seats
        if self.may_play_drawn and card is not None and self.playable >> card & 1:
            self.drawn = card
            self.table_changes += 1
            return
        self.to_act = (seat + self.direction) % self.num_seats

    def _end_deal(self, winner: int, final_jacks: int) -> None:
        n = self.num_seats
        multiplier = deal_multiplier(final_jacks, self.start_card)
        values = tuple(hand_points(hand) for hand in self.hands)
        fines = tuple(self.fines)
        if self.negative:
            points = tuple(
                (0 if s == winner else values[s] * multiplier) + FINE * fines[s] for s in range(n)
            )
        else:
            won = sum(values) * multiplier + FINE * (sum(fines) - fines[winner])
            points = tuple(won if s == winner else 0 for s in range(n))
        for s in range(n):
            self.tallies[s] += points[s]
        self.table_changes += 1
        self.previous_deals.append(
            DealResult(
                deal_number=self.deal_number,
                dealer=self.dealer,
                start_card=self.start_card,
                winner=winner,
                final_jacks=final_jacks,
                multiplier=multiplier,
                hand_points=values,
                fines=fines,
                points=points,
                tallies=tuple(self.tallies),
            )
        )
        if max(self.tallies) >= self.target:
            self.to_act = -1
            self.drawn = None
            self._legal = None
        else:
            self._deal()

    # -- results and views --------------------------------------------------------------------

    def outcome(self) -> Outcome:
        sign = -1 if self.negative else 1
        return Outcome(tuple(self.tallies), ranks_from_keys([sign * t for t in self.tallies]))

    def scores_so_far(self) -> tuple[int, ...]:
        return tuple(self.tallies)

    def lower_score_wins(self) -> bool:
        return self.negative

    def describe_action(self, action: int) -> str:
        if action == DRAW:
            return "draw (cannot discard)"
        if action == PASS:
            return "keep the drawn card"
        if not 0 <= action < 2 * LAST_CARD or action & 63 >= _DECK:
            return f"action {action}"
        text = "discard " + " ".join(StandardDeck.name(c) for c in action_cards(action))
        announce = action >> ANNOUNCE_SHIFT & 7
        if announce:
            text += f" announcing {Suit(announce).name.lower()}"
        if action & LAST_CARD:
            text += " (last card)"
        return text

    def is_public_action(self, action: int) -> bool:
        # Only a player whose drawn card is playable is asked whether to play it (option
        # draw_then_may_play): keeping it must look like a drawn card that cannot be played.
        return action != PASS

    def private_cards(self, seat: int) -> frozenset[int]:
        return frozenset(set_bits(self.hands[seat]))

    def concealed_cards(self) -> frozenset[int]:
        return frozenset(self.stock)

    def public_cards(self) -> frozenset[int]:
        return frozenset(self.pile)

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS
