"""A heuristic Oh Hell bot that plays from each request alone, reading only the wire messages.

Sample code for bot authors: everything it knows comes from the ``OhHellObservation`` and the
legal actions of one ``ChooseActionRequest``; it keeps no state between requests.

- Bidding: counts the tricks the hand is sure (or likely) to take: aces, protected kings,
  high and long trumps, ruffs with short side suits; bids the nearest allowed number.
- Play: while short of its bid it wins as cheaply as it can (the lowest winning card when it
  plays last, a master card otherwise, the lowest trump when void); once it has enough it ducks
  with the highest card that still loses, and when void it dumps its most dangerous high card.
"""

from __future__ import annotations

from collections.abc import Sequence

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, oh_hell_pb2
from sample_bots.cards import FULL_DECK, Card, beats, winning_index, wire_card, wire_cards

ACE, KING, QUEEN, JACK = 14, 13, 12, 11


def estimate_tricks(hand: Sequence[Card], trump: int, num_seats: int) -> float:
    """A rough count of the tricks ``hand`` takes with ``trump`` as trumps."""
    by_suit: dict[int, list[int]] = {suit: [] for suit in range(1, 5)}
    for suit, rank in hand:
        by_suit[suit].append(rank)
    trumps = by_suit[trump]
    crowd = 0.1 * max(0, num_seats - 4)  # more players: fewer side tricks survive
    total = 0.0
    for suit, ranks in by_suit.items():
        length = len(ranks)
        if suit == trump:
            total += (ACE in ranks) + 0.85 * (KING in ranks and length >= 2)
            total += 0.4 * (KING in ranks and length == 1)
            total += 0.6 * (QUEEN in ranks and length >= 3) + 0.3 * (JACK in ranks and length >= 4)
            total += 0.8 * max(0, length - 3)
        else:
            total += (0.95 - crowd) * (ACE in ranks and length <= 5)
            total += (0.6 - crowd) * (KING in ranks and 2 <= length <= 4)
            total += 0.2 * (QUEEN in ranks and 3 <= length <= 4)
            spare_trumps = len(trumps) - 1
            if spare_trumps > 0 and length <= 1:
                total += 0.5 if length == 0 else 0.3
    return total


def choose_bid(obs: oh_hell_pb2.OhHellObservation, legal_bids: Sequence[int]) -> int:
    """The bid among ``legal_bids`` nearest to the hand's expected tricks."""
    hand = wire_cards(obs.hand)
    trump = int(obs.trump_card.suit)
    estimate = estimate_tricks(hand, trump, len(obs.seats))
    return min(legal_bids, key=lambda bid: (abs(bid - estimate), bid))


class HandView:
    """What one request says about the hand being played, decoded once."""

    def __init__(self, obs: oh_hell_pb2.OhHellObservation, seat: int) -> None:
        self.trump = int(obs.trump_card.suit)
        self.hand = wire_cards(obs.hand)
        self.trick = wire_cards(obs.current_trick.cards)
        self.num_seats = len(obs.seats)
        played = {card for trick in obs.completed_tricks for card in wire_cards(trick.cards)}
        played.update(self.trick)
        played.add(wire_card(obs.trump_card))
        self.unseen = FULL_DECK - played - set(self.hand)
        me = obs.seats[seat]
        self.need = (me.bid if me.HasField("bid") else 0) - me.tricks_won

    def higher_unseen(self, card: Card) -> int:
        return sum(1 for suit, rank in self.unseen if suit == card[0] and rank > card[1])

    def is_master(self, card: Card) -> bool:
        """No unseen card of its suit is higher (it wins unless trumped)."""
        return self.higher_unseen(card) == 0

    def suit_length(self, suit: int) -> int:
        return sum(1 for card in self.hand if card[0] == suit)

    def danger(self, card: Card) -> tuple[int, int, int]:
        """How likely ``card`` is to take a trick later (higher = more dangerous)."""
        return (
            card[0] == self.trump,
            card[1] - self.higher_unseen(card),
            -self.suit_length(card[0]),
        )


def choose_card(view: HandView, legal: Sequence[Card]) -> Card:
    """The card to play among ``legal``."""
    if not view.trick:
        return _lead(view, legal)
    trump = view.trump
    winner = view.trick[winning_index(view.trick, trump)]
    last = len(view.trick) == view.num_seats - 1
    winning = [card for card in legal if beats(card, winner, trump)]
    losing = [card for card in legal if not beats(card, winner, trump)]
    following = legal[0][0] == view.trick[0][0]
    if view.need > 0:
        if winning:
            if last or not following:
                return min(winning, key=lambda card: (card[0] == trump, card[1]))
            masters = [card for card in winning if view.is_master(card)]
            if masters:
                return min(masters, key=lambda card: card[1])
            if view.need >= len(view.hand):
                return max(winning, key=lambda card: card[1])
        # Cannot win cheaply: keep the high cards, throw the least useful.
        return min(legal, key=view.danger)
    if losing:
        return max(losing, key=view.danger)  # duck with the highest card that loses
    if last:
        return max(legal, key=view.danger)  # the trick is ours anyway: spend the worst card
    return min(legal, key=lambda card: card[1])


def _lead(view: HandView, legal: Sequence[Card]) -> Card:
    if view.need > 0:
        masters = [card for card in legal if view.is_master(card)]
        if masters:
            # A master trump is sure; a side master is safest where the others still hold cards.
            return max(masters, key=lambda card: (card[0] == view.trump, card[1]))
        if view.need >= len(view.hand):
            return max(legal, key=view.danger)
        # Lead low from the longest side suit to set up its high cards.
        side = [card for card in legal if card[0] != view.trump] or list(legal)
        return min(side, key=lambda card: (-view.suit_length(card[0]), card[1]))
    # Enough tricks: lead the card most likely to be beaten.
    return min(legal, key=lambda card: (card[0] == view.trump, -view.higher_unseen(card), card[1]))


def make_oh_hell_heuristic_bot(seed: int | None = None) -> Bot:
    """The heuristic Oh Hell bot (deterministic; ``seed`` is accepted for the common signature)."""

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        legal = list(request.legal_actions)
        if len(legal) == 1:
            return legal[0]
        try:
            obs = request.observation.oh_hell
            if legal[0].oh_hell.WhichOneof("action") == "bid":
                bid = choose_bid(obs, [action.oh_hell.bid for action in legal])
                return next(action for action in legal if action.oh_hell.bid == bid)
            view = HandView(obs, request.seat)
            cards = [wire_card(action.oh_hell.play) for action in legal]
            return legal[cards.index(choose_card(view, cards))]
        except Exception:  # a sample bot never answers an illegal action
            return legal[0]

    return Bot(choose=choose, name="oh-hell-heuristic", version="1", games=("oh-hell",))
