"""A simple two-handed Pinochle bot that plays from each request alone (sample code).

It reads only the wire messages (``PinochleObservation`` and the legal actions):
- it declares out only when its own count has surely reached the target;
- in its meld turn it takes the dix exchange first (the turn-up beats a 9), then the meld
  worth most (``meld_options`` lists each offered meld's points), then draws;
- while the stock lasts it leads cheap plain cards, keeps trumps and meld cards for later, and
  wins a trick when the win is cheap (a higher card of the suit led) or worth it (points in
  the trick, or a meld waiting to be declared);
- once the stock is out it wins tricks with the cheapest card that wins, leads its aces, and
  otherwise throws its least valuable card.
"""

from __future__ import annotations

from dataclasses import dataclass

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, game_pb2, pinochle_pb2

STRENGTH = {9: 0, 11: 1, 12: 2, 13: 3, 10: 4, 14: 5}
"""Rank (the wire's face value) to strength in Pinochle: A > 10 > K > Q > J > 9."""
POINTS = {9: 0, 11: 2, 12: 3, 13: 4, 10: 10, 14: 11}
"""Card points by rank."""
KING, QUEEN, JACK, ACE = 13, 12, 11, 14
SPADES, DIAMONDS = 4, 2


def beats(card: cards_pb2.Card, lead: cards_pb2.Card, trump: int) -> bool:
    """Whether ``card``, played second, takes the trick led with ``lead``."""
    if card.suit == lead.suit:
        return STRENGTH[card.rank] > STRENGTH[lead.rank]
    return card.suit == trump


def keep_value(card: cards_pb2.Card, hand: list[cards_pb2.Card], trump: int) -> float:
    """How much the bot would rather keep ``card``: points, trump power and meld chances."""
    value = POINTS[card.rank] + STRENGTH[card.rank] * 0.5
    if card.suit == trump:
        value += 12
    faces = {(c.suit, c.rank) for c in hand}
    if card.rank == KING and (card.suit, QUEEN) in faces:
        value += 8
    if card.rank == QUEEN and (card.suit, KING) in faces:
        value += 8
    if (card.suit, card.rank) in ((SPADES, QUEEN), (DIAMONDS, JACK)):
        value += 6
    if card.rank in (ACE, KING, QUEEN, JACK):
        same_rank = len({c.suit for c in hand if c.rank == card.rank})
        value += 2 * same_rank
    return value


@dataclass(frozen=True)
class Style:
    """The heuristic's choices that a deliberately weaker (still deterministic) variant may
    change (benchmarks/fairness.py); the defaults are the heuristic's own."""

    best_meld: bool = True
    """Declare the meld worth most; False: the one worth least."""
    exchange_dix: bool = True
    """Take the dix exchange when offered."""


TUNED = Style()
"""The heuristic's own style."""


def make_pinochle_heuristic_bot(seed: int | None = None, style: Style = TUNED) -> Bot:
    """The heuristic Pinochle bot playing in ``style`` (deterministic; ``seed`` is accepted
    and unused)."""
    del seed
    pick_meld = max if style.best_meld else min

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        obs = request.observation.pinochle
        legal = list(request.legal_actions)
        me = obs.seats[request.seat]
        kinds = [action.pinochle.WhichOneof("action") for action in legal]

        if "declare_out" in kinds and me.score + me.hand_points + me.trick_points >= obs.target:
            return legal[kinds.index("declare_out")]

        if obs.phase == pinochle_pb2.PINOCHLE_PHASE_MELD:
            if style.exchange_dix and "exchange_dix" in kinds:
                return legal[kinds.index("exchange_dix")]
            melds = [i for i, kind in enumerate(kinds) if kind == "meld"]
            if melds:
                # meld_options lists the offered melds in the order of the meld actions.
                chosen = pick_meld(range(len(melds)), key=lambda j: obs.meld_options[j].points)
                return legal[melds[chosen]]
            return legal[kinds.index("draw")]

        plays = [
            (action, action.pinochle.play) for action in legal if action.pinochle.HasField("play")
        ]
        hand = list(obs.hand)
        trump = obs.trump
        value = {id(card): keep_value(card, hand, trump) for _, card in plays}

        def cheapest(options: list[tuple[game_pb2.Action, cards_pb2.Card]]) -> game_pb2.Action:
            return min(options, key=lambda option: value[id(option[1])])[0]

        stock_out = obs.phase == pinochle_pb2.PINOCHLE_PHASE_NO_STOCK
        if obs.current_trick.cards:  # following
            lead = obs.current_trick.cards[0]
            winners = [p for p in plays if beats(p[1], lead, trump)]
            if not winners:
                return cheapest(plays)
            plain_wins = [p for p in winners if p[1].suit == lead.suit and lead.suit != trump]
            at_stake = POINTS[lead.rank]
            if stock_out or plain_wins:
                return cheapest(plain_wins or winners)
            meld_waiting = len(obs.seats[request.seat].tabled) < len(hand) and at_stake >= 0
            if at_stake >= 10 or (meld_waiting and _has_unmelded_meld(hand, me, trump)):
                return cheapest(winners)
            return cheapest(plays)

        # leading
        if stock_out:
            aces = [p for p in plays if p[1].rank == ACE]
            if aces:
                trump_aces = [p for p in aces if p[1].suit == trump]
                return (trump_aces or aces)[0][0]
            return cheapest(plays)
        plain = [p for p in plays if p[1].suit != trump] or plays
        return cheapest(plain)

    name = "pinochle-heuristic" if style == TUNED else "pinochle-heuristic-restyled"
    return Bot(choose=choose, name=name, version="1", games=("pinochle",))


def _has_unmelded_meld(
    hand: list[cards_pb2.Card], me: pinochle_pb2.PinochleSeat, trump: int
) -> bool:
    """Whether the hand holds a marriage, pinochle or four-of-a-kind not yet on the table."""
    tabled = {(c.suit, c.rank, c.copy) for c in me.tabled}
    loose = [c for c in hand if (c.suit, c.rank, c.copy) not in tabled]
    faces = {(c.suit, c.rank) for c in hand}
    for card in loose:
        if card.rank == KING and (card.suit, QUEEN) in faces:
            return True
        if card.rank == QUEEN and (card.suit, KING) in faces:
            return True
        if (card.suit, card.rank) in ((SPADES, QUEEN), (DIAMONDS, JACK)) and {
            (SPADES, QUEEN),
            (DIAMONDS, JACK),
        } <= faces:
            return True
        if card.rank in (ACE, KING, QUEEN, JACK) and all(
            (suit, card.rank) in faces for suit in (1, 2, 3, 4)
        ):
            return True
    del trump
    return False
