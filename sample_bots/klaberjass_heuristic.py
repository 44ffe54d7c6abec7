"""A heuristic Klaberjass bot that plays from each request alone, reading only the wire messages.

Sample code for bot authors: everything it knows comes from the ``KlaberjassObservation`` and the
legal actions of one ``ChooseActionRequest``; it keeps no state between requests.

- Bidding: values its hand for a trump suit (trump J, 9, A, 10 and length; plain aces and
  guarded tens; the turn-up when it holds the 7 to exchange) and takes the turn-up's suit, or names
  its best other suit, only above a threshold: a maker who is beaten gives away the hand.
- Dix, sequences, bella: always exchanges the 7 of trumps, declares its best sequence and announces
  bella (K and Q of trumps are kept for it: the bot spends lower trumps first).
- Play: it counts the cards. Leading, it draws trumps with the master trump when it holds most of
  the trumps left, cashes master cards in plain suits the opponent can still follow, and otherwise
  leads a cheap card. Following (always last in a two-player trick), it takes the trick with its
  cheapest winning card when the trick is worth it, and otherwise throws its least valuable card.
"""

from __future__ import annotations

from collections.abc import Sequence

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, klaberjass_pb2
from sample_bots.cards import Card, wire_card, wire_cards

SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = 7, 8, 9, 10, 11, 12, 13, 14
SUITS = (1, 2, 3, 4)
DECK = frozenset((suit, rank) for suit in SUITS for rank in range(7, 15))
"""The 32 cards (ranks 7 to ace) as ``Card`` pairs."""
TRUMP_STRENGTH = {SEVEN: 0, EIGHT: 1, QUEEN: 2, KING: 3, TEN: 4, ACE: 5, NINE: 6, JACK: 7}
PLAIN_STRENGTH = {SEVEN: 0, EIGHT: 1, NINE: 2, JACK: 3, QUEEN: 4, KING: 5, TEN: 6, ACE: 7}
TRUMP_POINTS = {JACK: 20, NINE: 14, ACE: 11, TEN: 10, KING: 4, QUEEN: 3}
PLAIN_POINTS = {ACE: 11, TEN: 10, KING: 4, QUEEN: 3, JACK: 2}
TRUMP_VALUE = {JACK: 4.0, NINE: 3.0, ACE: 2.0, TEN: 1.5, KING: 1.0, QUEEN: 1.0, EIGHT: 0.5}
"""How much each trump adds to a hand's bidding value (on top of 1 per trump)."""
TAKE_THRESHOLD = 9.0
"""Hand value (6 cards, before the completion deal) from which the bot makes trump."""

K = klaberjass_pb2


def strength(card: Card, trump: int) -> int:
    """Rank of ``card`` within its suit, 0..7, trumps ranked J 9 A 10 K Q 8 7."""
    return (TRUMP_STRENGTH if card[0] == trump else PLAIN_STRENGTH)[card[1]]


def points(card: Card, trump: int) -> int:
    """Card points of ``card``."""
    return (TRUMP_POINTS if card[0] == trump else PLAIN_POINTS).get(card[1], 0)


def beats(follow: Card, lead: Card, trump: int) -> bool:
    """Whether ``follow`` takes a trick led with ``lead``."""
    if follow[0] == lead[0]:
        return strength(follow, trump) > strength(lead, trump)
    return follow[0] == trump


def hand_value(hand: Sequence[Card], trump: int, extra: Card | None = None) -> float:
    """Bidding value of ``hand`` with ``trump`` (plus ``extra``, a turn-up it would take)."""
    cards = [*hand, extra] if extra is not None else list(hand)
    value = 0.0
    for suit, rank in cards:
        if suit == trump:
            value += 1.0 + TRUMP_VALUE.get(rank, 0.0)
        elif rank == ACE:
            value += 2.0
        elif rank == TEN and (suit, ACE) in cards:
            value += 1.0
        elif rank == TEN:
            value += 0.3
    return value


def _decide_bid(obs: klaberjass_pb2.KlaberjassObservation, legal: list[game_pb2.Action]) -> int:
    """Index in ``legal`` of the bid to make."""
    hand = wire_cards(obs.hand)
    turn_up = wire_card(obs.turn_up)
    best_index, best_value = -1, TAKE_THRESHOLD
    pass_index = 0
    for index, action in enumerate(legal):
        move = action.klaberjass
        kind = move.WhichOneof("action")
        if kind == "call" and move.call == K.KLABERJASS_CALL_PASS:
            pass_index = index
            continue
        if kind == "call" and move.call == K.KLABERJASS_CALL_ACCEPT:
            trump = turn_up[0]
            extra = turn_up if (trump, SEVEN) in hand else None
            value = hand_value(hand, trump, extra)
        elif kind == "name_trump":
            trump = int(move.name_trump)
            value = hand_value(hand, trump) - 0.5  # no turn-up to exchange for
        else:
            continue
        if value >= best_value:
            best_index, best_value = index, value
    return best_index if best_index >= 0 else pass_index


def _decide_declaration(legal: list[game_pb2.Action]) -> int:
    best_index, best_key = 0, (-1, -1)
    for index, action in enumerate(legal):
        move = action.klaberjass
        if move.WhichOneof("action") == "declare_sequence":
            key = (move.declare_sequence.length, int(move.declare_sequence.top))
            if key > best_key:
                best_index, best_key = index, key
    return best_index


def unseen_cards(obs: klaberjass_pb2.KlaberjassObservation) -> set[Card]:
    """Cards that could be in the opponent's hand (or the stock) as far as this seat knows."""
    seen = set(wire_cards(obs.hand))
    for trick in [*obs.completed_tricks, obs.current_trick]:
        seen.update(wire_cards(trick.cards))
    if obs.HasField("bottom_card"):
        seen.add(wire_card(obs.bottom_card))
    turn_up = wire_card(obs.turn_up)
    seen.add(turn_up)
    if obs.HasField("dix_exchanged_by"):
        seen.add((int(obs.trump), SEVEN))  # the 7 now lies face up under the stock
    unseen = set(DECK - seen)
    for seat in obs.seats:  # cards known in a hand (the taken turn-up, a shown sequence)
        unseen.update(wire_cards(seat.known_cards))
    unseen -= set(wire_cards(obs.hand))
    return unseen


def _choose_card(
    obs: klaberjass_pb2.KlaberjassObservation, plays: list[tuple[int, Card, bool]]
) -> int:
    """Index in the legal actions of the card to play; ``plays`` is (index, card, bella)."""
    trump = int(obs.trump)
    # Always announce bella when it is offered: the same card, with 20 points more.
    with_bella = {card: index for index, card, bella in plays if bella}
    options = {card: with_bella.get(card, index) for index, card, bella in plays if not bella}
    cards = list(options)
    hand = wire_cards(obs.hand)
    trick = wire_cards(obs.current_trick.cards)

    def cheapness(card: Card) -> tuple[int, int, int]:
        # Least valuable first: plain before trump, few points, low rank; keep K/Q of trumps.
        is_trump = card[0] == trump
        return (int(is_trump), points(card, trump), strength(card, trump))

    if trick:
        lead = trick[0]
        winners = [c for c in cards if beats(c, lead, trump)]
        value = points(lead, trump)
        if winners:
            best = min(winners, key=cheapness)
            stake = value + points(best, trump)
            if best[0] != trump or stake >= 4 or len(hand) <= 2:
                return options[best]
        return options[min(cards, key=cheapness)]

    unseen = unseen_cards(obs)
    other_trumps = [c for c in unseen if c[0] == trump]
    my_trumps = sorted((c for c in cards if c[0] == trump), key=lambda c: -strength(c, trump))
    # Draw trumps with a master trump while the opponent may still hold some.
    if my_trumps and other_trumps:
        top = my_trumps[0]
        if all(strength(top, trump) > strength(c, trump) for c in other_trumps) and len(
            my_trumps
        ) >= min(2, len(other_trumps)):
            return options[top]
    # Cash a master in a plain suit.
    masters = []
    for card in cards:
        if card[0] == trump:
            continue
        rivals = [c for c in unseen if c[0] == card[0]]
        if all(strength(card, trump) > strength(c, trump) for c in rivals) and (
            rivals or not other_trumps
        ):
            masters.append(card)
    if masters:
        return options[max(masters, key=lambda c: points(c, trump))]
    return options[min(cards, key=cheapness)]


def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
    """The heuristic's action for one request."""
    obs = request.observation.klaberjass
    legal = list(request.legal_actions)
    if len(legal) == 1:
        return legal[0]
    first = legal[0].klaberjass
    kind = first.WhichOneof("action")
    if obs.phase in (
        K.KLABERJASS_PHASE_BIDDING_TURN_UP,
        K.KLABERJASS_PHASE_BIDDING_OTHER_SUIT,
    ):
        return legal[_decide_bid(obs, legal)]
    if obs.phase == K.KLABERJASS_PHASE_DIX:
        for action in legal:
            if action.klaberjass.call == K.KLABERJASS_CALL_EXCHANGE_DIX:
                return action
    if obs.phase == K.KLABERJASS_PHASE_DECLARING:
        return legal[_decide_declaration(legal)]
    if kind == "play":
        plays = [
            (index, wire_card(action.klaberjass.play.card), action.klaberjass.play.bella)
            for index, action in enumerate(legal)
        ]
        return legal[_choose_card(obs, plays)]
    return legal[0]


def make_klaberjass_heuristic_bot(seed: int | None = None) -> Bot:
    """The heuristic bot (deterministic; ``seed`` is accepted for the common signature)."""
    del seed
    return Bot(choose=choose, name="klaberjass-heuristic", version="1", games=("klaberjass",))
