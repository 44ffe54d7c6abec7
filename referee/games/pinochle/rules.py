"""Two-handed Pinochle with a turned-up trump (rules reference: docs/games/pinochle.md).

Two players, 48 cards: two copies each of A 10 K Q J 9 (ranking in that order) in every suit.
Each hand the dealer deals twelve cards each in packets of four, non-dealer first, and turns the
25th card face up under the stock: its suit is trump and it is the last card drawn. If the
turn-up is a Ten (option ``turnup_bonus_rank``) the dealer scores 10 at once.

Phase 1 (twelve tricks, while the stock lasts): the non-dealer leads, later the trick winner.
The second card may be anything; a trump beats a plain card, a higher card of the suit led wins,
otherwise (other plain suit, or the identical card) the card led wins. After each trick the
winner may make one meld and/or exchange the 9 of trumps for the turn-up, then draws the top
stock card; the loser draws the next (after trick 12 the loser takes the turn-up). The meld turn
is opened only when he can do one of those, so ending it with a draw is not public
(``is_public_action``): to the other player it looks like the draw after any other trick.

Melds (scored as announced): marriage K+Q of a suit 20, royal marriage K+Q of trumps 40,
flush A 10 K Q J of trumps 150 (class A); four aces 100, kings 80, queens 60, jacks 40, one of
each suit (class B); pinochle Q♠+J♦ 40 (class C). One meld per won trick; each meld takes at
least one card from the concealed hand; a card already melded may be used again only in a meld of
another class or of higher value in the same class. Melded cards stay on the table, still part of
their owner's hand: they may be played to tricks.

Phase 2 (twelve tricks, no stock): melded cards go back into the hands, no more melds; the second
player must follow suit, trump when void, and beat a trump lead (option ``phase2_rule``). Card
points in tricks (A 11, 10 10, K 4, Q 3, J 2, 9 0) and 10 for the last trick are added at the end
of the hand. After each hand, if exactly one player has reached the target (1,000) he wins; while
both have, the target rises by 250 (1,250, 1,500, ...). A player may instead declare himself
out on any of his turns (option ``declare_out``).

Decisions the traditional rules leave open (docs/games/pinochle.md, decisions): PIN-A1 ranking,
A2/A3 trick winner, A4 winner leads, A5 turn-up drawn last, A7 dix exchange timing, A8 one meld
per won trick, A9 meld classes, A10 trump K+Q scores 40 only, A11 tabled cards playable, A12 a
meld after trick 12, A13 phase-2 obligations, A14 last trick = trick 24, A16 ``>=`` and +250
steps, A19 alternating deal, A20 non-dealer first. The D-PIN-* decisions are options.

Two choices of ours where the reference is silent, both documented in ``docs/games/pinochle.md``:
- When both totals reach the target at the end of a hand the target rises by 250 until at most
  one does; if one then does, he wins at once ("nesse momento", at that very moment).
- A declaration closes the score sheet: a right claim records the declarer's claimed total and
  the opponent's total from finished hands; a wrong claim records the declarer at 0 (he loses).

Cards: ``id = 12 * suit + 2 * rank + copy`` with suit 0..3 = ♣ ♦ ♥ ♠ (``Suit`` - 1), rank
0..5 = 9 J Q K 10 A (ascending strength) and copy 0/1. So ``id // 2`` names a card up to its copy,
and within a suit a larger ``id // 2`` is a stronger card.

Actions:
- ``0..47``: play that card.
- ``MELD_BASE + m`` (``48..259``): declare meld ``m`` of ``MELDS``, a table fixed per
  (meld type, physical cards) and independent of trump:
  ``m = 4*suit + 2*king_copy + queen_copy`` (0..15) marriage of a suit (royal when it is trumps);
  ``m = 16 + 32*suit + bits`` (16..143) flush of a suit (only trumps is ever legal), bits =
  copies of A,10,K,Q,J as bits 4..0; ``m = 144 + 2*queen_copy + jack_copy`` pinochle;
  ``m = 148 + 16*r + bits`` (148..211) four of a kind, r = 0..3 for A K Q J, bit i = copy of the
  card of suit i.
- ``DIX_BASE + copy`` (260, 261): exchange that 9 of trumps for the turn-up (or, when the turn-up
  already is a 9 of trumps and ``dix_points`` > 0, show it for the points).
- ``DRAW`` (262): end the meld turn and draw.
- ``DECLARE_OUT`` (263): declare out (claim to have reached the target).

The card and action ids, the meld table and what a seat sees are in ``view``, which the codec
and the bots read; positions as values (to set up a state) are in ``positions``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import starmap

from referee.games.api import (
    GameType,
    IllegalActionError,
    OptionSpec,
    OptionValue,
    Outcome,
    State,
)
from referee.games.bits import set_bits
from referee.games.pinochle.view import (
    ACE,
    ALL_CARDS_MASK,
    BOTH_COPIES,
    CARD_POINTS,
    CLUBS,
    DECLARE_OUT,
    DIAMONDS,
    DIX_BASE,
    DRAW,
    FLUSH,
    JACK,
    KING,
    MARRIAGE,
    MELD_BASE,
    MELD_NAMES,
    MELDS,
    NINE,
    NUM_CARDS,
    PHASE_MELD,
    PHASE_NO_STOCK,
    PHASE_OVER,
    PHASE_STOCK,
    PINOCHLE,
    QUEEN,
    SPADES,
    SUIT_BITS,
    SUIT_CARDS,
    SUIT_MASKS,
    TEN,
    TRICKS_PER_HAND,
    HandResult,
    Meld,
    SeatView,
    TableView,
    Trick,
    card_id,
    cards_of,
    mask_of,
    observe,
    pinochle_card_name,
    public_table,
)

FIRST_TARGET = 1000
TARGET_STEP = 250
LAST_TRICK_BONUS = 10
TURNUP_BONUS = 10


PHASE2_RULES = ("standard", "must_head", "free")
DECLARE_OUT_RULES = ("standard", "literal", "disabled")
TURNUP_BONUS_RANKS = ("10", "9")

PINOCHLE_GAME = GameType(
    name="pinochle",
    title="Pinochle (two-handed)",
    min_seats=2,
    max_seats=2,
    rules_section="docs/games/pinochle.md",
    options=(
        OptionSpec(
            "turnup_bonus_rank",
            "10",
            "D-PIN-1. The turn-up rank that scores 10 for the dealer: 10 = a Ten (the traditional"
            " words); 9 = the 9 of trumps, the dix (standard rules).",
            choices=TURNUP_BONUS_RANKS,
        ),
        OptionSpec(
            "dix_points",
            0,
            "D-PIN-2. Points for exchanging the 9 of trumps for the turn-up, and for showing the"
            " second 9 of trumps: 0 (the traditional table has no dix); 10 in standard rules.",
            minimum=0,
            maximum=100,
        ),
        OptionSpec(
            "declare_out",
            "standard",
            "D-PIN-3. 'Deixar / retirar-se' on one's turn: standard = claim to have reached the"
            " target (cumulative + this hand's melds + card points won so far); right wins,"
            " wrong loses; literal = withdraw and tally both: whoever alone reached the target"
            " wins, else the higher total (tie: the other player); disabled = no declaring.",
            choices=DECLARE_OUT_RULES,
        ),
        OptionSpec(
            "phase2_rule",
            "standard",
            "D-PIN-4. Obligations of the second player once the stock is out: standard = follow"
            " suit, trump when void, beat a trump lead; must_head = follow suit and win the"
            " trick if possible; free = any card (no obligations).",
            choices=PHASE2_RULES,
        ),
    ),
)


def _card_points_table() -> tuple[int, ...]:
    table = [0] * (1 << 12)
    for m in range(1 << 12):
        table[m] = sum(CARD_POINTS[c >> 1] for c in set_bits(m))
    return tuple(table)


_SUIT_POINTS = _card_points_table()


def card_points(mask: int) -> int:
    """Card points of the cards in a bitmask (PIN-E4)."""
    return (
        _SUIT_POINTS[mask & SUIT_BITS]
        + _SUIT_POINTS[(mask >> 12) & SUIT_BITS]
        + _SUIT_POINTS[(mask >> 24) & SUIT_BITS]
        + _SUIT_POINTS[(mask >> 36) & SUIT_BITS]
    )


# -- tricks ---------------------------------------------------------------------------------


def follower_wins(lead: int, follow: int, trump: int) -> bool:
    """Whether the second card takes the trick (PIN-E1; PIN-A2, PIN-A3)."""
    follow_suit = follow // 12
    if follow_suit == lead // 12:
        return follow >> 1 > lead >> 1
    return follow_suit == trump


def _above(card: int) -> int:
    """Cards of the same suit strictly stronger than ``card``."""
    return SUIT_MASKS[card // 12] & ~((1 << (2 * (card >> 1) + 2)) - 1)


_ABOVE = tuple(_above(c) for c in range(NUM_CARDS))
_POINTS_BY_CARD = tuple(CARD_POINTS[(c >> 1) % 6] for c in range(NUM_CARDS))
_TRICK_POINTS = tuple(_POINTS_BY_CARD[a] + _POINTS_BY_CARD[b] for a in range(48) for b in range(48))
"""``[48 * lead + second]``: the card points of a trick."""
_FOLLOWER_WINS = tuple(
    bytes(follower_wins(a, b, trump) for a in range(48) for b in range(48)) for trump in range(4)
)
"""``[trump][48 * lead + second]``: 1 if the second card takes the trick (PIN-E1)."""


def legal_follow_mask(hand: int, lead: int, trump: int, rule: str) -> int:
    """The cards the second player may play to ``lead`` once the stock is out (PIN-E6)."""
    if rule == "free":
        return hand
    led = lead // 12
    in_suit = hand & SUIT_MASKS[led]
    if in_suit:
        if rule == "must_head" or led == trump:
            return (in_suit & _ABOVE[lead]) or in_suit
        return in_suit
    return (hand & SUIT_MASKS[trump]) or hand


# -- melds ----------------------------------------------------------------------------------


_MELD_MASKS = tuple(spec.mask for spec in MELDS)


_COPY0 = 0x555555555555
"""The copy-0 position of every card: ``(hand | hand >> 1) & _COPY0`` says which cards are held."""
_KINGS = mask_of([card_id(s, KING) for s in range(4)])
_PINOCHLE = mask_of([card_id(SPADES, QUEEN), card_id(DIAMONDS, JACK)])
_QUEENS_OF_SPADES = BOTH_COPIES << card_id(SPADES, QUEEN)
_JACKS_OF_DIAMONDS = BOTH_COPIES << card_id(DIAMONDS, JACK)
_FLUSHES = tuple(mask_of([card_id(s, r) for r in (ACE, TEN, KING, QUEEN, JACK)]) for s in range(4))


def _suit_features(bits: int) -> int:
    """What the 12 card bits of one suit hold, as ``_HAS_*`` flags."""
    has = [bool(bits >> (2 * rank) & BOTH_COPIES) for rank in range(6)]
    return (
        (has[KING] and has[QUEEN]) * _HAS_MARRIAGE
        | has[ACE] * _HAS_ACE
        | has[KING] * _HAS_KING
        | has[QUEEN] * _HAS_QUEEN
        | has[JACK] * _HAS_JACK
    )


_HAS_MARRIAGE, _HAS_ACE, _HAS_KING, _HAS_QUEEN, _HAS_JACK = 1, 2, 4, 8, 16
_HAS_FOUR = _HAS_ACE | _HAS_KING | _HAS_QUEEN | _HAS_JACK
_SUIT_FEATURES = bytes(_suit_features(bits) for bits in range(1 << 12))
"""``[bits]``: flags of a suit holding these cards: a K+Q, and which of A K Q J it has."""

HOLDS_MARRIAGE, HOLDS_FOURS, HOLDS_PINOCHLE = 1, 2, 4
"""``held_families`` flags: a K+Q of a suit, one of A, K, Q or J in every suit, Q♠ and J♦."""


def held_families(hand: int) -> int:
    """Which meld families ``hand`` holds the cards of, as ``HOLDS_*`` flags (0: no meld).

    Four per-suit flag lookups. A flush has no flag of its own: it holds a royal marriage.
    """
    features = _SUIT_FEATURES
    clubs, diamonds = features[hand & SUIT_BITS], features[hand >> 12 & SUIT_BITS]
    hearts, spades = features[hand >> 24 & SUIT_BITS], features[hand >> 36]
    return (
        (clubs | diamonds | hearts | spades) & HOLDS_MARRIAGE
        | (clubs & diamonds & hearts & spades & _HAS_FOUR and HOLDS_FOURS)
        | (spades & _HAS_QUEEN and diamonds & _HAS_JACK and HOLDS_PINOCHLE)
    )


def _meld_table_by_window(
    candidates: range, shifts: tuple[int, ...], width: int
) -> tuple[tuple[int, ...], ...]:
    """``table[key]``: the melds (as actions) among ``candidates`` held by a hand whose bits at
    ``shifts`` (``width`` bits each, packed low first into ``key``) are those of ``key``."""
    table = []
    for key in range(1 << (width * len(shifts))):
        hand = 0
        for i, shift in enumerate(shifts):
            hand |= ((key >> (width * i)) & ((1 << width) - 1)) << shift
        table.append(tuple(MELD_BASE + m for m in candidates if not _MELD_MASKS[m] & ~hand))
    return tuple(table)


_MARRIAGE_SHIFT = 2 * QUEEN
"""Where a suit's Q and K copies start among its 12 bits (Q, Q#1, K, K#1: 4 bits)."""
_MARRIAGE_BITS = 0xF
_FLUSH_SHIFT = 2 * JACK
"""Where a suit's J to A copies start among its 12 bits (10 bits: the cards of a flush)."""
_QUEEN_BITS = BOTH_COPIES << 2 * QUEEN
"""The two copies of the queen among a suit's 12 bits."""
_JACK_BITS = BOTH_COPIES << 2 * JACK
"""The two copies of the jack among a suit's 12 bits."""
_MARRIAGE_MELDS = tuple(
    _meld_table_by_window(range(4 * s, 4 * s + 4), (12 * s + _MARRIAGE_SHIFT,), 4) for s in range(4)
)
"""``[suit][bits >> _MARRIAGE_SHIFT & _MARRIAGE_BITS]`` (``bits``: the suit's 12): the
marriages held in that suit."""
_FLUSH_MELDS = tuple(
    _meld_table_by_window(range(16 + 32 * s, 48 + 32 * s), (12 * s + _FLUSH_SHIFT,), 10)
    for s in range(4)
)
"""``[suit][bits >> _FLUSH_SHIFT]``: the flushes held in that suit."""
_PINOCHLE_MELDS = _meld_table_by_window(
    range(144, 148), (card_id(DIAMONDS, JACK), card_id(SPADES, QUEEN)), 2
)
"""``[jacks of diamonds | queens of spades << 2]`` (two copy bits each): the pinochles held."""
_FOUR_MELDS = tuple(
    _meld_table_by_window(
        range(148 + 16 * i, 164 + 16 * i), tuple(12 * s + 2 * rank for s in range(4)), 2
    )
    for i, rank in enumerate((ACE, KING, QUEEN, JACK))
)
"""``[i][key]`` for ranks A K Q J: the four-of-a-kinds held (``key``: 2 copy bits per suit)."""


_FOUR_FACES = mask_of([card_id(CLUBS, r) for r in (ACE, KING, QUEEN, JACK)])
"""Copy-0 bits of A K Q J in the first suit: ranks held in every suit, once folded."""


def held_meld_actions(hand: int, trump: int) -> tuple[int, ...]:
    """The actions of every meld whose cards ``hand`` holds (flushes of trumps only), ascending.

    Built from per-suit / per-rank tables indexed by the bits of one suit (small ints, cheap),
    skipping the families the suits' ``_HAS_*`` flags rule out; the families come in meld id
    order, so no sort is needed."""
    features = _SUIT_FEATURES
    clubs, diamonds, hearts, spades = suits = (
        hand & SUIT_BITS,
        hand >> 12 & SUIT_BITS,
        hand >> 24 & SUIT_BITS,
        hand >> 36,
    )
    has = features[clubs], features[diamonds], features[hearts], features[spades]
    found: tuple[int, ...] = ()
    if (has[0] | has[1] | has[2] | has[3]) & _HAS_MARRIAGE:
        marriages = _MARRIAGE_MELDS
        found = (
            marriages[0][clubs >> _MARRIAGE_SHIFT & _MARRIAGE_BITS]
            + marriages[1][diamonds >> _MARRIAGE_SHIFT & _MARRIAGE_BITS]
            + marriages[2][hearts >> _MARRIAGE_SHIFT & _MARRIAGE_BITS]
            + marriages[3][spades >> _MARRIAGE_SHIFT & _MARRIAGE_BITS]
        )
        if has[trump] & _HAS_MARRIAGE:  # a flush holds a royal marriage
            found += _FLUSH_MELDS[trump][suits[trump] >> _FLUSH_SHIFT]
    if spades & _QUEEN_BITS and diamonds & _JACK_BITS:
        # The jacks' copy bits (2, 3) and the queens' (4, 5) do not overlap: shifted down
        # together they make the key, jacks low.
        found += _PINOCHLE_MELDS[(diamonds & _JACK_BITS | spades & _QUEEN_BITS) >> 2 * JACK]
    everywhere = has[0] & has[1] & has[2] & has[3] & _HAS_FOUR
    if everywhere:
        for flag, shift, table in _FOURS_BY_RANK:
            if everywhere & flag:
                found += table[
                    clubs >> shift & BOTH_COPIES
                    | (diamonds >> shift & BOTH_COPIES) << 2
                    | (hearts >> shift & BOTH_COPIES) << 4
                    | (spades >> shift & BOTH_COPIES) << 6
                ]
    return found


_FOURS_BY_RANK = tuple(
    zip(
        (_HAS_ACE, _HAS_KING, _HAS_QUEEN, _HAS_JACK),
        (2 * ACE, 2 * KING, 2 * QUEEN, 2 * JACK),
        _FOUR_MELDS,
        strict=True,
    )
)
"""(flag, shift of the rank's copy bits in a suit, ``_FOUR_MELDS`` entry) for A, K, Q, J."""


# -- game end -------------------------------------------------------------------------------


def settle(scores: Sequence[int], target: int) -> tuple[int | None, int]:
    """After a hand: (the winner or None, the target to play on to) (PIN-E5; PIN-A16).

    While both totals have reached the target it rises by ``TARGET_STEP``; then a player who
    alone has reached it wins.
    """
    while all(score >= target for score in scores):
        target += TARGET_STEP
    reached = [seat for seat, score in enumerate(scores) if score >= target]
    return (reached[0] if reached else None), target


# -- the state ------------------------------------------------------------------------------


_CARD_PHASES = frozenset((PHASE_STOCK, PHASE_NO_STOCK))
"""Phases in which the legal actions are card plays."""

_NO_ACTIONS: tuple[int, ...] = ()
NO_USED = (0, 0, 0, 0)
"""``used`` of a hand without melds."""
_NINE_FACES = tuple(card_id(suit, NINE) >> 1 for suit in range(4))
"""``[trump]``: ``card >> 1`` of the 9 of trumps (the card up to its copy)."""
_DIX_ACTIONS = (_NO_ACTIONS, (DIX_BASE,), (DIX_BASE + 1,), (DIX_BASE, DIX_BASE + 1))
"""By the copy bits of the 9s of trumps held (and not yet exchanged or shown)."""


def _meld_play_table() -> tuple[tuple[tuple[int, int, tuple[Meld, Meld]], ...], ...]:
    """``[trump][meld]``: (points, mask, the ``Meld`` record per seat)."""
    return tuple(
        tuple(
            (
                spec.points(trump),
                spec.mask,
                (
                    Meld(0, meld, spec.kind_in(trump), spec.cards, spec.points(trump)),
                    Meld(1, meld, spec.kind_in(trump), spec.cards, spec.points(trump)),
                ),
            )
            for meld, spec in enumerate(MELDS)
        )
        for trump in range(4)
    )


_MELD_PLAY = _meld_play_table()


def meld_record(trump: int, seat: int, meld: int) -> Meld:
    """The record of ``seat`` declaring meld ``meld`` (``MELDS``) with this trump: one shared
    object per (trump, seat, meld), as the state keeps them."""
    return _MELD_PLAY[trump][meld][2][seat]


USED_MARRIAGE, USED_FLUSH, USED_FOURS, USED_PINOCHLE = range(4)
"""The masks of melded cards the reuse rule needs (``used`` below), by index.

A tabled card may go into a new meld (PIN-E2, PIN-E3) unless it already was in a meld of the
same class worth as much or more. Each card has one possible value per class except trumps in
class A, so that comes down to four masks: cards melded in a marriage or flush (a marriage may
use none of them), in a flush (nor may a flush: a royal marriage's K and Q may go on into one),
in a four of a kind, in a pinochle.
"""
_MELD_USED = tuple(
    {MARRIAGE: USED_MARRIAGE, FLUSH: USED_FLUSH, PINOCHLE: USED_PINOCHLE}.get(spec.kind, USED_FOURS)
    for spec in MELDS
)
"""``[meld]``: the ``used`` mask whose cards may not go into this meld again."""
_ACTION_MASK_USED = (((0, 0),) * MELD_BASE) + tuple(
    (spec.mask, used) for spec, used in zip(MELDS, _MELD_USED, strict=True)
)
"""``[action]``: (the meld's cards, its ``used`` index) for the meld actions."""


def used_after(used: tuple[int, int, int, int], meld: int) -> tuple[int, int, int, int]:
    """The ``used`` masks (see ``USED_MARRIAGE``) once meld ``meld`` (``MELDS``) is declared:
    a flush's cards may go into neither a marriage nor a flush again."""
    mask = MELDS[meld].mask
    marriage, flush, fours, pinochle = used
    family = _MELD_USED[meld]
    if family == USED_MARRIAGE:
        marriage |= mask
    elif family == USED_FLUSH:
        marriage |= mask
        flush |= mask
    elif family == USED_FOURS:
        fours |= mask
    else:
        pinochle |= mask
    return marriage, flush, fours, pinochle


def allowed_melds(actions: tuple[int, ...], tabled: int, used: Sequence[int]) -> tuple[int, ...]:
    """The meld actions among ``actions`` (all held) that the rules allow (the tests check it
    against ``meld_is_legal``, the definition, in ``tests/pinochle_oracles.py``).

    A meld needs a concealed card and no tabled card already used in its family (see
    ``USED_MARRIAGE``); ``used[i]`` is the mask of family ``i``.
    """
    table = _ACTION_MASK_USED
    return tuple(
        [
            action
            for action in actions
            if (entry := table[action])[0] & ~tabled and not entry[0] & used[entry[1]]
        ]
    )


def any_meld_allowed(hand: int, tabled: int, used: Sequence[int], trump: int, held: int) -> bool:
    """Whether ``allowed_melds`` of the melds held is non-empty, without listing them.

    ``held`` is ``held_families(hand)``: only those families are looked at. Per family: the
    ranks held once the cards barred from it are taken out, and a concealed card of a rank the
    meld needs (a concealed copy is never barred, so it can always be the one chosen).
    """
    concealed = hand & ~tabled
    concealed = (concealed | concealed >> 1) & _COPY0
    if held & HOLDS_MARRIAGE:
        ranks = hand & ~used[USED_MARRIAGE]
        ranks = (ranks | ranks >> 1) & _COPY0
        if ranks & ranks << 2 & (concealed | concealed << 2) & _KINGS:
            return True
        flush = _FLUSHES[trump]
        ranks = hand & ~used[USED_FLUSH]
        ranks = (ranks | ranks >> 1) & _COPY0
        if ranks & flush == flush and concealed & flush:
            return True
    if held & HOLDS_FOURS:
        ranks = hand & ~used[USED_FOURS]
        ranks = (ranks | ranks >> 1) & _COPY0
        if (
            ranks
            & ranks >> 12
            & ranks >> 24
            & ranks >> 36
            & (concealed | concealed >> 12 | concealed >> 24 | concealed >> 36)
            & _FOUR_FACES
        ):
            return True
    if held & HOLDS_PINOCHLE:
        ranks = hand & ~used[USED_PINOCHLE]
        return bool(
            ranks & _QUEENS_OF_SPADES and ranks & _JACKS_OF_DIAMONDS and concealed & _PINOCHLE
        )
    return False


def shuffled_deck(rng: random.Random) -> list[int]:
    """A uniformly shuffled deck: the cards sorted by independent random keys.

    As uniform as ``rng.shuffle`` (ties among 48 doubles have negligible probability) and about
    three times cheaper, which matters because a game deals many hands.
    """
    keys = list(starmap(rng.random, _NO_ARGS))  # rng.random() for each card, in a C loop
    return sorted(_DECK, key=keys.__getitem__)


_DECK = range(NUM_CARDS)
_NO_ARGS = ((),) * NUM_CARDS
_PAIR = tuple(tuple((1 << a) | (1 << b) for b in _DECK) for a in _DECK)
"""``_PAIR[a][b]``: the mask of cards ``a`` and ``b``."""

_HAND_START: dict[str, object] = {
    "stock_pos": 0,
    "used": NO_USED,
    "dixed": 0,
    "lead": -1,
    "phase": PHASE_STOCK,
    "_melded": False,
    "_dix_done": False,
    "_meld_options": _NO_ACTIONS,
    "_legal": None,
}
"""The per-hand attributes that start every deal with these (immutable) values."""


def _fixed_attributes(options: Mapping[str, OptionValue]) -> dict[str, object]:
    """The attributes a new game takes from its options (and the game's starting values)."""
    declare = (DECLARE_OUT,) if options["declare_out"] != "disabled" else _NO_ACTIONS
    return {
        "phase2_rule": str(options["phase2_rule"]),
        "declare_rule": str(options["declare_out"]),
        "_declare": declare,
        "_draw_declare": (DRAW, *declare),
        "dix_points": int(options["dix_points"]),
        "bonus_rank": NINE if options["turnup_bonus_rank"] == "9" else TEN,
        "target": FIRST_TARGET,
        "hand_number": 0,
        "final_scores": None,
        "winner": -1,
        "declared_by": None,
    }


_FIXED_BY_OPTIONS: dict[tuple[tuple[str, OptionValue], ...], dict[str, object]] = {}
_new_tuple = tuple.__new__
"""``_new_tuple(Trick, (leader, cards, winner))``: a NamedTuple without keyword matching."""


class PinochleState(State):
    """A whole game of two-handed Pinochle, from the first deal to 1,000 (or more)."""

    game_type = PINOCHLE_GAME

    table_changes = 0
    """Bumped wherever a field of the observations' shared ``table`` changes: at the end of a
    trick (which may deal a new hand), when a card known to the other player is played (tabled,
    or the taken turn-up) and at every meld-turn action (meld, dix, draw, declaring out).
    Leading an unseen card, the most common decision, changes nothing public but the current
    trick (a field of its own). The view's cache is keyed on it."""
    view_changes_cache = -1
    """The ``table_changes`` of the table in ``view_table_cache``."""
    view_table_cache: TableView
    view_seats_cache: tuple[SeatView, SeatView] | None = None
    """The view's (``view.observe``); the rules never read them."""

    observe = observe
    public_table = public_table

    # Set per hand from _HAND_START by one dict update (cheap deals: random games are short).
    lead: int
    phase: int
    stock_pos: int
    dixed: int
    used: tuple[int, int, int, int]
    """Cards melded this hand, by family (``USED_MARRIAGE``...): what the reuse rule needs."""
    _melded: bool
    _dix_done: bool
    _meld_options: tuple[int, ...] | None
    """The meld actions open in this meld turn; None: to be listed."""
    _legal: tuple[int, ...] | None
    _legal_cards: int
    """The card plays among ``_legal`` as a mask (set with it; 0 outside card play)."""
    # Set per game from the options by one dict update (see _fixed_attributes).
    phase2_rule: str
    declare_rule: str
    _declare: tuple[int, ...]
    _draw_declare: tuple[int, ...]
    dix_points: int
    bonus_rank: int
    target: int
    hand_number: int
    final_scores: tuple[int, ...] | None
    winner: int
    declared_by: int | None

    def __init__(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        self._configure(num_seats, options, rng)
        self.scores = [0, 0]
        self.previous_hands: tuple[HandResult, ...] = ()
        """Finished hands, oldest first (a new tuple per hand, shared like ``melds``)."""
        # rng.randrange(2), inlined (the same draws from the generator).
        first = rng.getrandbits(2)
        while first >= 2:
            first = rng.getrandbits(2)
        self.first_dealer = first
        self._deal()

    def _configure(
        self, num_seats: int, options: Mapping[str, OptionValue], rng: random.Random
    ) -> None:
        """What the options decide, for a new game and for a position (``positions``)."""
        State.__init__(self, num_seats, options, rng)
        key = tuple(options.items())
        fixed = _FIXED_BY_OPTIONS.get(key)
        if fixed is None:
            fixed = _FIXED_BY_OPTIONS[key] = _fixed_attributes(options)
        self.__dict__.update(fixed)

    # -- dealing and drawing ------------------------------------------------------------------

    def _deal(self) -> None:
        self.hand_number = number = self.hand_number + 1
        self.dealer = dealer = (self.first_dealer + number - 1) % 2
        deck = self.arrange_deal(shuffled_deck(self.rng))
        # Packets of four: non-dealer, dealer, non-dealer, dealer, non-dealer, dealer.
        pair = _PAIR
        first = (
            pair[deck[0]][deck[1]]
            | pair[deck[2]][deck[3]]
            | pair[deck[8]][deck[9]]
            | pair[deck[10]][deck[11]]
            | pair[deck[16]][deck[17]]
            | pair[deck[18]][deck[19]]
        )
        second = (
            pair[deck[4]][deck[5]]
            | pair[deck[6]][deck[7]]
            | pair[deck[12]][deck[13]]
            | pair[deck[14]][deck[15]]
            | pair[deck[20]][deck[21]]
            | pair[deck[22]][deck[23]]
        )
        self.hands = [first, second] if dealer == 1 else [second, first]
        self.turn_up = self.original_turn_up = turn_up = deck[24]
        self.trump = trump = turn_up // 12
        self.stock = deck[25:]
        """Face-down stock, top first."""
        self.__dict__.update(_HAND_START)
        self.tabled = [0, 0]
        self.known = [0, 0]
        """Cards in each hand that the other player has seen go there (melded, turn-up)."""
        self.melds: tuple[Meld, ...] = ()
        """This hand's melds in the order declared (a new tuple per meld: observations share it)."""
        self.trick_points = [0, 0]
        self.tricks_won = [0, 0]
        self.completed: tuple[Trick, ...] = ()
        """This hand's finished tricks (a new tuple per trick: observations share it)."""
        self.to_act = self.trick_leader = 1 - dealer
        if turn_up >> 1 == 6 * trump + self.bonus_rank:
            self.hand_points = [TURNUP_BONUS, 0] if dealer == 0 else [0, TURNUP_BONUS]
        else:
            self.hand_points = [0, 0]

    def _draw(self, winner: int) -> None:
        """The winner (the seat to act, and to lead next) draws the top stock card, the loser
        the next (or the turn-up)."""
        loser = 1 - winner
        stock, pos = self.stock, self.stock_pos
        self.hands[winner] |= 1 << stock[pos]
        if pos + 1 < len(stock):
            self.hands[loser] |= 1 << stock[pos + 1]
            self.stock_pos = pos + 2
            self.phase = PHASE_STOCK
        else:  # trick 12: the loser takes the card face up under the stock; phase 2 begins
            turn_up = self.turn_up
            self.hands[loser] |= 1 << turn_up
            self.known[loser] |= 1 << turn_up
            self.stock_pos = pos + 1
            self.turn_up = -1
            self.tabled = [0, 0]
            self.phase = PHASE_NO_STOCK

    # -- the interface ------------------------------------------------------------------------

    def current_seat(self) -> int:
        return self.to_act

    def legal_actions(self) -> tuple[int, ...]:
        legal = self._legal
        if legal is None:
            phase = self.phase
            if phase in _CARD_PHASES:
                hand = self.hands[self.to_act]
                if phase == PHASE_NO_STOCK and self.lead >= 0:
                    hand = legal_follow_mask(hand, self.lead, self.trump, self.phase2_rule)
                self._legal_cards = hand
                legal = self._legal = (
                    *SUIT_CARDS[0][hand & SUIT_BITS],
                    *SUIT_CARDS[1][hand >> 12 & SUIT_BITS],
                    *SUIT_CARDS[2][hand >> 24 & SUIT_BITS],
                    *SUIT_CARDS[3][hand >> 36],
                    *self._declare,
                )
            elif phase == PHASE_MELD:
                self._legal_cards = 0
                legal = self._legal = (
                    self.meld_actions() + self._dix_actions(self.to_act) + self._draw_declare
                )
            else:
                self._legal_cards = 0
                legal = self._legal = _NO_ACTIONS
        return legal

    def legal_cards(self) -> int:
        """The card plays among ``legal_actions()``, as a mask of cards (0 outside card play).

        The legal actions are these cards in id order, then declaring out where it is open:
        what a codec needs to write them a suit at a time instead of an action at a time."""
        if self._legal is None:
            self.legal_actions()
        return self._legal_cards

    def meld_actions(self) -> tuple[int, ...]:
        """The meld actions open to the seat in its meld turn (none once it has melded)."""
        if self._melded:
            return _NO_ACTIONS
        found = self._meld_options
        if found is None:
            found = self._find_melds(self.to_act)
        return found

    def _dix_nines(self, seat: int) -> int:
        """The copy bits of the 9s of trumps ``seat`` may exchange (or show) now; 0: none.

        A 9 of trumps not yet exchanged or shown; showing the second one when the turn-up is
        already a 9 of trumps only where the dix scores (``dix_points``)."""
        trump = self.trump
        nines = (self.hands[seat] & ~self.dixed) >> (12 * trump) & BOTH_COPIES
        if nines and (self.dix_points or self.turn_up >> 1 != _NINE_FACES[trump]):
            return nines
        return 0

    def _dix_actions(self, seat: int) -> tuple[int, ...]:
        if self._dix_done:
            return _NO_ACTIONS
        return _DIX_ACTIONS[self._dix_nines(seat)]

    def apply(self, action: int) -> None:
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            seat = self.to_act
            if seat < 0:
                raise IllegalActionError("the game is over")
            raise IllegalActionError(f"seat {seat} may not {self.describe_action(action)} now")
        self._legal = None
        seat = self.to_act
        if action >= MELD_BASE:
            self.table_changes += 1
            if action < DIX_BASE:
                self._meld(seat, action - MELD_BASE)
            elif action < DRAW:
                self._dix(seat, 12 * self.trump + action - DIX_BASE)
            elif action == DRAW:
                self._draw(seat)
            else:
                self._declare_out(seat)
            return
        # Play a card: the hot path of random playouts.
        bit = 1 << action
        self.hands[seat] ^= bit
        known = self.known
        if known[seat] & bit:  # a card the other player saw go into the hand: public
            self.tabled[seat] &= ~bit
            known[seat] ^= bit
            self.table_changes += 1
        lead = self.lead
        if lead < 0:
            self.lead = action
            self.to_act = 1 - seat
            return
        # The end of a trick: score it, then the winner's meld turn or the draws (phase 1), or
        # the next trick or the end of the hand (phase 2).
        self.table_changes += 1
        index = NUM_CARDS * lead + action
        winner = seat if _FOLLOWER_WINS[self.trump][index] else 1 - seat
        self.trick_points[winner] += _TRICK_POINTS[index]
        self.tricks_won[winner] += 1
        self.completed += (_new_tuple(Trick, (1 - seat, (lead, action), winner)),)
        self.lead = -1
        self.to_act = self.trick_leader = winner
        if self.phase == PHASE_STOCK:
            self._begin_meld_turn(winner)
        elif len(self.completed) == TRICKS_PER_HAND:
            self._end_hand(winner)

    def _begin_meld_turn(self, winner: int) -> None:
        """The winner of a phase-1 trick may meld / exchange the dix; else both draw at once.
        Whether he may meld is decided from flags and masks; the melds are listed only when
        asked for (``meld_actions``)."""
        hand = self.hands[winner]
        held = held_families(hand)
        if held:
            tabled = self.tabled[winner]
            if tabled and not any_meld_allowed(hand, tabled, self.used, self.trump, held):
                held = 0
        if held or self._dix_nines(winner):
            self._meld_options = None if held else _NO_ACTIONS
            self._melded = self._dix_done = False
            self.phase = PHASE_MELD
        else:
            self._draw(winner)

    def _find_melds(self, seat: int) -> tuple[int, ...]:
        """List (as actions) and keep the melds ``seat`` may declare now (not yet melded)."""
        hand, trump = self.hands[seat], self.trump
        found = held_meld_actions(hand, trump)
        if found:
            tabled = self.tabled[seat]
            if tabled:
                found = allowed_melds(found, tabled, self.used)
        self._meld_options = found
        return found

    def _meld(self, seat: int, meld: int) -> None:
        trump = self.trump
        points, mask, record = _MELD_PLAY[trump][meld]
        self.used = used_after(self.used, meld)
        self.tabled[seat] |= mask
        self.known[seat] |= mask
        self.hand_points[seat] += points
        self.melds += (record[seat],)
        self._melded = True
        self._meld_options = _NO_ACTIONS
        if not self._dix_actions(seat):
            self._draw(seat)

    def _dix(self, seat: int, nine: int) -> None:
        turn_up = self.turn_up
        if turn_up >> 1 != nine >> 1:  # exchange
            self.hands[seat] ^= (1 << nine) | (1 << turn_up)
            self.known[seat] |= 1 << turn_up
            self.turn_up = nine
        else:  # the turn-up already is a dix: show the second one
            self.known[seat] |= 1 << nine
        self.dixed |= 1 << nine
        self.hand_points[seat] += self.dix_points
        self._dix_done = True
        if self._melded or not self._find_melds(seat):
            self._draw(seat)

    def claim(self, seat: int) -> int:
        """What ``seat`` would count if it declared out now (PIN-A15, PIN-A17)."""
        return self.scores[seat] + self.hand_points[seat] + self.trick_points[seat]

    def _declare_out(self, seat: int) -> None:
        other = 1 - seat
        scores = self.scores
        claim = scores[seat] + self.hand_points[seat] + self.trick_points[seat]
        if self.declare_rule == "standard":
            right = claim >= self.target
            self.winner = seat if right else other
            final = (claim if right else 0, scores[other])
            if seat:
                final = (final[1], final[0])
        else:  # literal: withdraw; the tally decides
            final = (self.claim(0), self.claim(1))
            reached = [s for s in (0, 1) if final[s] >= self.target]
            if len(reached) == 1:
                self.winner = reached[0]
            elif final[seat] > final[other]:
                self.winner = seat
            else:
                self.winner = other
        self.declared_by = seat
        self._record_hand((0, 0), final)
        self._finish(final)

    def _end_hand(self, last_winner: int) -> None:
        last = [0, 0]
        last[last_winner] = LAST_TRICK_BONUS
        for seat in (0, 1):
            self.scores[seat] += self.hand_points[seat] + self.trick_points[seat] + last[seat]
        self._record_hand(tuple(last), tuple(self.scores))
        winner, self.target = settle(self.scores, self.target)
        if winner is None:
            self._deal()
        else:
            self.winner = winner
            self._finish(tuple(self.scores))

    def _record_hand(self, last: tuple[int, ...], totals: tuple[int, ...]) -> None:
        self.previous_hands += (
            HandResult(
                self.dealer,
                self.original_turn_up,
                tuple(self.hand_points),
                tuple(self.trick_points),
                last,
                totals,
            ),
        )

    def _finish(self, final: tuple[int, ...]) -> None:
        self.final_scores = final
        self.to_act = -1
        self.phase = PHASE_OVER
        self._legal = _NO_ACTIONS
        self._legal_cards = 0

    # -- results and views --------------------------------------------------------------------

    def outcome(self) -> Outcome:
        if self.final_scores is None:
            raise RuntimeError("the game is not over")
        ranks = tuple(1 if seat == self.winner else 2 for seat in (0, 1))
        return Outcome(self.final_scores, ranks)

    def scores_so_far(self) -> tuple[int, ...]:
        if self.final_scores is not None:
            return self.final_scores
        return (self.scores[0] + self.hand_points[0], self.scores[1] + self.hand_points[1])

    def describe_action(self, action: int) -> str:
        if 0 <= action < MELD_BASE:
            return f"play {pinochle_card_name(action)}"
        if MELD_BASE <= action < DIX_BASE:
            spec = MELDS[action - MELD_BASE]
            cards = " ".join(pinochle_card_name(c) for c in spec.cards)
            trump = getattr(self, "trump", -1)
            return f"meld {MELD_NAMES[spec.kind_in(trump)]} {cards}"
        if DIX_BASE <= action < DRAW:
            return f"exchange the dix (copy {action - DIX_BASE})"
        if action == DRAW:
            return "draw"
        if action == DECLARE_OUT:
            return "declare out"
        return f"action {action}"

    def is_public_action(self, action: int) -> bool:
        # A trick's winner has a meld turn only when he holds a meld or a 9 of trumps: ending
        # it unmelded (DRAW) must look like the draw that follows a trick without one.
        return action != DRAW

    def private_cards(self, seat: int) -> frozenset[int]:
        return frozenset(cards_of(self.hands[seat] & ~self.known[seat]))

    def concealed_cards(self) -> frozenset[int]:
        return frozenset(self.stock[self.stock_pos :])

    def public_cards(self) -> frozenset[int]:
        hidden = self.hands[0] & ~self.known[0] | self.hands[1] & ~self.known[1]
        hidden |= mask_of(self.stock[self.stock_pos :])
        return frozenset(cards_of(ALL_CARDS_MASK & ~hidden))

    def all_cards(self) -> frozenset[int]:
        return _ALL_CARDS


_ALL_CARDS = frozenset(range(NUM_CARDS))
