"""A heuristic King bot that plays from each request alone, reading only the wire messages.

Sample code for bot authors: everything it knows comes from the ``KingObservation`` and the
legal actions of one ``ChooseActionRequest``; it keeps no state between requests.

- Negative hands: duck (play the highest card that still loses the trick), dump the most
  dangerous card when void (the penalty cards, else the highest), lead the card most likely to be
  beaten. In hand 6 it unloads high cards before the last two tricks.
- Positive hands: win cheaply (the lowest card that takes the trick when last, a master card
  otherwise), trump in when void, lead masters and long trumps.
- Auction: estimates the tricks its hand would take with its best trump suit; offers only when
  that beats a fair share by a margin, and only the cheapest legal offer (matching "pela mão"
  when it may). As dealer it accepts offers worth it, opts out of a weak hand, and otherwise
  names its best suit.
"""

from __future__ import annotations

from collections.abc import Sequence

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, game_pb2, king_pb2
from sample_bots.cards import FULL_DECK, Card, beats, winning_index, wire_card, wire_cards

HEARTS = cards_pb2.SUIT_HEARTS
KING, QUEEN, JACK, ACE = 13, 12, 11, 14
KING_OF_HEARTS: Card = (HEARTS, KING)
FAIR_SHARE = 13 / 4

C = king_pb2  # short alias for enum values


def card_penalty(contract: int, card: Card) -> int:
    """What taking ``card`` costs in a negative contract (trick-level penalties excluded)."""
    suit, rank = card
    if contract == C.KING_CONTRACT_NO_HEARTS:
        return 20 if suit == HEARTS else 0
    if contract == C.KING_CONTRACT_NO_KINGS_OR_JACKS:
        return 30 if rank in (KING, JACK) else 0
    if contract == C.KING_CONTRACT_NO_QUEENS:
        return 50 if rank == QUEEN else 0
    if contract == C.KING_CONTRACT_NO_KING_OF_HEARTS:
        return 160 if card == KING_OF_HEARTS else 0
    return 0


def estimate_tricks(hand: Sequence[Card], trump: int) -> float:
    """A rough count of the tricks ``hand`` takes in a positive hand with ``trump``."""
    by_suit: dict[int, list[int]] = {suit: [] for suit in range(1, 5)}
    for suit, rank in hand:
        by_suit[suit].append(rank)
    trumps = len(by_suit.get(trump, []))
    total = 0.0
    for suit, ranks in by_suit.items():
        length = len(ranks)
        if suit == trump:
            total += (ACE in ranks) + 0.9 * (KING in ranks) + 0.6 * (QUEEN in ranks and length >= 3)
            total += 0.3 * (JACK in ranks and length >= 4) + 0.9 * max(0, length - 3)
        else:
            total += (ACE in ranks) + 0.6 * (KING in ranks and length >= 2)
            total += 0.3 * (QUEEN in ranks and length >= 3)
            if trump and trumps >= 3:
                total += 0.8 if length == 0 else 0.4 if length == 1 else 0.0
    return total


def best_trump(hand: Sequence[Card]) -> tuple[int, float]:
    """The suit to name as trumps and the tricks the hand is then expected to take."""
    return max(
        ((suit, estimate_tricks(hand, suit)) for suit in range(1, 5)),
        key=lambda pair: (pair[1], sum(1 for card in hand if card[0] == pair[0])),
    )


class HandView:
    """What one request says, decoded once."""

    def __init__(self, obs: king_pb2.KingObservation) -> None:
        self.obs = obs
        self.contract = int(obs.contract)
        self.trump = int(obs.trump)
        self.hand = wire_cards(obs.hand)
        self.trick = wire_cards(obs.current_trick.cards)
        played = {card for trick in obs.completed_tricks for card in wire_cards(trick.cards)}
        played.update(self.trick)
        self.unseen = FULL_DECK - played - set(self.hand)
        self.trick_number = len(obs.completed_tricks)  # 0-based

    def higher_unseen(self, card: Card) -> int:
        return sum(1 for suit, rank in self.unseen if suit == card[0] and rank > card[1])

    def lower_unseen(self, card: Card) -> int:
        return sum(1 for suit, rank in self.unseen if suit == card[0] and rank < card[1])

    def is_master(self, card: Card) -> bool:
        return self.higher_unseen(card) == 0

    def suit_length(self, suit: int) -> int:
        return sum(1 for card in self.hand if card[0] == suit)


def choose_card(view: HandView, legal: Sequence[Card]) -> Card:
    """The card to play among ``legal``."""
    if view.contract == C.KING_CONTRACT_POSITIVE:
        return _positive_card(view, legal)
    return _negative_card(view, legal)


def _negative_card(view: HandView, legal: Sequence[Card]) -> Card:
    contract = view.contract
    trick = view.trick
    if contract == C.KING_CONTRACT_NO_LAST_TWO_TRICKS and view.trick_number < 10:
        # Tricks 1-10 cost nothing: unload the high cards that would win the last two.
        return max(legal, key=lambda card: (card[1], -view.suit_length(card[0])))

    def danger(card: Card) -> tuple[int, int, int]:
        return (card_penalty(contract, card), card[1], -view.suit_length(card[0]))

    if not trick:
        # Lead the card the others are most likely to beat, never a penalty card if avoidable.
        return min(
            legal,
            key=lambda card: (
                card_penalty(contract, card) > 0,
                view.higher_unseen(card) == 0,
                -view.higher_unseen(card) + view.lower_unseen(card),
                card[1],
            ),
        )
    winner = trick[winning_index(trick, 0)]
    led = trick[0][0]
    if legal[0][0] != led:  # void: throw the most dangerous card
        return max(legal, key=danger)
    ducks = [card for card in legal if card[1] < winner[1]]
    if ducks:
        return max(ducks, key=danger)
    if len(trick) == 3:
        # The trick is ours anyway: win it with the highest card that is not itself a penalty.
        safe = [card for card in legal if card_penalty(contract, card) == 0]
        return max(safe or legal, key=lambda card: card[1])
    # Someone may still go over us: play low, and never add a penalty card to the trick.
    return min(legal, key=lambda card: (card_penalty(contract, card), card[1]))


def _positive_card(view: HandView, legal: Sequence[Card]) -> Card:
    trump = view.trump
    trick = view.trick
    if not trick:
        return _positive_lead(view, legal)
    winner = trick[winning_index(trick, trump)]
    last = len(trick) == 3
    winning = [card for card in legal if beats(card, winner, trump)]
    led = trick[0][0]
    following = legal[0][0] == led
    if winning:
        if last:
            return min(winning, key=lambda card: card[1])
        if following and winning[0][0] != trump:
            masters = [card for card in winning if view.is_master(card)]
            if masters:
                return min(masters, key=lambda card: card[1])
            if led != trump and view.higher_unseen(max(winning)) <= 1:
                return max(winning, key=lambda card: card[1])
        elif not following:
            return min(winning, key=lambda card: card[1])  # ruff as cheaply as possible
        else:
            masters = [card for card in winning if view.is_master(card)]
            if masters:
                return min(masters, key=lambda card: card[1])
    # Cannot (or should not) win: throw the cheapest card, keeping trumps.
    return min(legal, key=lambda card: (card[0] == trump, card[1], view.suit_length(card[0])))


def _positive_lead(view: HandView, legal: Sequence[Card]) -> Card:
    trump = view.trump
    trumps = [card for card in legal if card[0] == trump]
    unseen_trumps = sum(1 for card in view.unseen if card[0] == trump)
    if trumps and unseen_trumps:
        top = max(trumps)
        if view.is_master(top) or len(trumps) >= 5:
            return top
    masters = [card for card in legal if card[0] != trump and view.is_master(card)]
    if masters:
        # Prefer the master in the suit where the others still hold most cards (least ruffed).
        return max(masters, key=lambda card: (view.lower_unseen(card), card[1]))
    side = [card for card in legal if card[0] != trump] or list(legal)
    return min(side, key=lambda card: (-view.suit_length(card[0]), card[1]))


def _action_card(action: game_pb2.Action) -> Card:
    return wire_card(action.king.play)


def choose_auction(
    obs: king_pb2.KingObservation, seat: int, legal: Sequence[game_pb2.Action]
) -> game_pb2.Action:
    """A call, an answer or a trump suit among ``legal``."""
    hand = wire_cards(obs.hand)
    suit, tricks = best_trump(hand)
    kinds = {action.king.WhichOneof("action") for action in legal}
    if "trump" in kinds:
        opt_out = _find_answer(legal, C.KING_ANSWER_OPT_OUT)
        if opt_out is not None and seat == obs.dealer and tricks < 4:
            return opt_out
        return next(
            a for a in legal if a.king.WhichOneof("action") == "trump" and a.king.trump == suit
        )
    if "answer" in kinds:
        offer = obs.auction.best_offer
        opt_out = _find_answer(legal, C.KING_ANSWER_OPT_OUT)
        if opt_out is not None and tricks < 4:
            return opt_out
        accept = _find_answer(legal, C.KING_ANSWER_ACCEPT)
        refuse = _find_answer(legal, C.KING_ANSWER_REFUSE)
        if accept is not None and (offer >= 2 or offer >= tricks - 2 or refuse is None):
            return accept
        assert refuse is not None
        return refuse
    # A bidder: pay at most the tricks we expect beyond a fair share, by a margin.
    limit = int(tricks - FAIR_SHARE - 0.75)
    bids = [action for action in legal if action.king.bid.kind != C.KING_BID_KIND_PASS]
    affordable = [action for action in bids if action.king.bid.tricks <= limit]
    if affordable:
        return min(
            affordable,
            key=lambda a: (a.king.bid.tricks, a.king.bid.kind != C.KING_BID_KIND_MATCH),
        )
    return next(action for action in legal if action.king.bid.kind == C.KING_BID_KIND_PASS)


def _find_answer(legal: Sequence[game_pb2.Action], answer: int) -> game_pb2.Action | None:
    for action in legal:
        if action.king.WhichOneof("action") == "answer" and action.king.answer == answer:
            return action
    return None


def make_king_heuristic_bot(seed: int | None = None) -> Bot:
    """The heuristic King bot (deterministic; ``seed`` is accepted for the common signature)."""

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        obs = request.observation.king
        legal = list(request.legal_actions)
        if len(legal) == 1:
            return legal[0]
        if legal[0].king.WhichOneof("action") != "play":
            return choose_auction(obs, request.seat, legal)
        view = HandView(obs)
        cards = [_action_card(action) for action in legal]
        chosen = choose_card(view, cards)
        return legal[cards.index(chosen)]

    return Bot(choose=choose, name="king-heuristic", version="1", games=("king",))
