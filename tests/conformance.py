"""Invariants every registered game must keep, checked over many seeded random playouts.

Used by ``tests/test_conformance.py`` for every game in the registry, so a new game gets the
whole suite by registering itself (and its codec).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import NamedTuple

from google.protobuf.message import Message

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2
from referee.codec.common import game_settings
from referee.codec.requests import RequestEncoder
from referee.codec.watch import public_move_event
from referee.games.api import Game, State
from referee.games.registry import STATE_CLASSES, codec_for
from referee.match import FaultPolicy, Match, TimeControl
from referee.runner import _end_requests

HISTORY_PREFIX = "previous_"
"""Fields named ``previous_*`` describe earlier deals: their cards are not this deal's cards."""


def wire_cards(message: Message) -> Iterator[tuple[int, int, int]]:
    """Every Card inside ``message`` (outside ``previous_*`` history), as (suit, rank, copy)."""
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None or descriptor.name.startswith(HISTORY_PREFIX):
            continue
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if isinstance(item, cards_pb2.Card):
                yield (int(item.suit), int(item.rank), item.copy)
            elif isinstance(item, Message):
                yield from wire_cards(item)


def card_keys(game: Game, cards: frozenset[int]) -> set[tuple[int, int, int]]:
    """Engine card ids as (suit, rank, copy), through the game's own codec."""
    codec = codec_for(game)
    keys: set[tuple[int, int, int]] = set()
    for card in cards:
        wire = codec.card(card)
        keys.add((int(wire.suit), int(wire.rank), wire.copy))
    return keys


def random_playout(game: Game, seed: int, check_views: bool = False) -> tuple[State, list[int]]:
    """Play one game with uniformly random legal actions, checking invariants at each step."""
    state = game.new_state(seed)
    rng = random.Random(seed)
    actions: list[int] = []
    codec = codec_for(game) if check_views else None
    steps = 0
    while not state.is_terminal():
        seat = state.current_seat()
        assert 0 <= seat < game.num_seats
        legal = state.legal_actions()
        assert legal, f"no legal action for seat {seat} before the end (seed {seed})"
        assert len(set(legal)) == len(legal), "duplicate legal actions"
        if codec is not None:
            check_observations(game, state)
            for action in legal:
                assert codec.decode_action(codec.encode_action(action)) == action
        action = legal[rng.randrange(len(legal))]
        state.apply(action)
        actions.append(action)
        steps += 1
        assert steps < 1_000_000, "game does not end"
    assert state.legal_actions() == () or not state.legal_actions()
    return state, actions


def check_observations(game: Game, state: State) -> None:
    """No seat's wire observation shows another seat's private cards or any concealed card."""
    codec = codec_for(game)
    concealed = card_keys(game, state.concealed_cards())
    private = [card_keys(game, state.private_cards(seat)) for seat in range(game.num_seats)]
    for seat in range(game.num_seats):
        seen = set(wire_cards(codec.observation(state.observe(seat))))
        assert private[seat] <= seen, f"seat {seat} cannot see its own hand"
        assert not seen & concealed, f"seat {seat} sees concealed cards {seen & concealed}"
        for other in range(game.num_seats):
            if other != seat:
                leaked = seen & private[other]
                assert not leaked, f"seat {seat} sees seat {other}'s cards {leaked}"


def check_cached_observations(state: State) -> None:
    """Every seat's ``observe`` equals the same observation computed without any cache (a
    copy starts without the views' caches: ``State.copy``)."""
    fresh = state.copy()
    for seat in range(state.num_seats):
        assert state.observe(seat) == fresh.observe(seat), f"stale observation for seat {seat}"


def check_card_conservation(state: State) -> None:
    """Private hands, concealed and public cards partition the deck."""
    parts = [state.private_cards(seat) for seat in range(state.num_seats)]
    parts += [state.concealed_cards(), state.public_cards()]
    union: set[int] = set()
    for part in parts:
        assert not union & part, f"card in two places: {union & part}"
        union |= part
    assert union == state.all_cards(), f"cards missing: {state.all_cards() - union}"


# -- two deals that differ only in cards hidden from one seat ------------------------------------


def hidden_from(state: State, seat: int) -> frozenset[int]:
    """The cards ``seat`` cannot see now: the other seats' concealed hands and the stock."""
    hidden = state.concealed_cards()
    for other in range(state.num_seats):
        if other != seat:
            hidden |= state.private_cards(other)
    return hidden


def with_cards_exchanged(state_class: type[State], pairs: Sequence[tuple[int, int]]) -> type[State]:
    """``state_class`` whose first deal has the cards of each pair in each other's place (a
    card the game does not deal, as Oh Hell's undealt ones, takes the other's place)."""

    class Exchanged(state_class):  # type: ignore[valid-type, misc]
        _exchanged = False

        def arrange_deal(self, cards: list[int]) -> list[int]:
            if self._exchanged:
                return cards
            self._exchanged = True
            cards = list(cards)
            for a, b in pairs:
                where = {card: i for i, card in enumerate(cards)}
                if a in where:
                    cards[where[a]] = b
                if b in where:
                    cards[where[b]] = a
            return cards

    return Exchanged


class Sent(NamedTuple):
    """One message that reaches a seat (its own requests) or every spectator (move events)."""

    kind: str
    data: bytes
    seen: tuple[frozenset[int], frozenset[int]]
    """Every card the seat has seen by then, ever: in its own hand, and shown to everyone
    (played, tabled, turned up): where a card is, not only that it was seen."""
    declined: tuple[int, ...]
    """The actions other seats took so far that are not public (``is_public_action``)."""
    redealt: bool
    """Whether a card the seat had seen is hidden again (a new deal, a reshuffle): the deal
    is over, and with it what was hidden in it (a deal's end shows its hands' worth)."""


MATCH_ID = "hidden-card-test"
TIME_CONTROL = TimeControl(move_time_ms=1000, time_bank_ms=5000)
MAX_SENT = 3000


def other_seat_choice(state: State, legal: Sequence[int], salt: int) -> int:
    """How the seats other than the watched one play: decline every optional decision (its
    decline is the action that is not public), else the legal action first in a fixed
    pseudo-random order of action ids. Two deals that differ only in hidden cards then get the
    same public choices wherever those cards do not change what is legal."""
    for action in legal:
        if not state.is_public_action(action):
            return action
    return min(legal, key=lambda action: (action * 2654435761 + salt) & 0xFFFFFFFF)


def sent_to_seat(game: Game, seed: int, seat: int, policy_seed: int) -> Iterator[Sent]:
    """Everything that reaches ``seat`` as ``game`` is played from ``seed``, in order: its
    StartMatch (as the runner builds it: settings, seat and clock), its ChooseAction requests
    and EndMatch (the runner's bytes), the live move events (as the ladder numbers them).
    ``seat`` plays uniformly at random from ``policy_seed``; the others by
    ``other_seat_choice``."""
    match = Match(game, seed, TIME_CONTROL, FaultPolicy(max_faults=0))
    state = match.state
    codec, settings = codec_for(game), game_settings(game)
    encoder = RequestEncoder(codec, settings, MATCH_ID)
    mine = random.Random(policy_seed)
    seen = (state.private_cards(seat), state.public_cards())
    declined: list[int] = []
    redealt = False
    start = bot_service_pb2.StartMatchRequest(
        match_id=MATCH_ID,
        settings=settings,
        seat=seat,
        time_control=bot_service_pb2.TimeControl(
            move_time_ms=TIME_CONTROL.move_time_ms, time_bank_ms=TIME_CONTROL.time_bank_ms
        ),
    )
    yield Sent("start", start.SerializeToString(), seen, (), False)
    events = 0
    while not match.is_over:
        actor = match.to_act()
        legal = match.legal_actions()
        if actor == seat:
            yield Sent("request", encoder.encode(match), seen, tuple(declined), redealt)
            action = legal[mine.randrange(len(legal))]
        else:
            action = other_seat_choice(state, legal, policy_seed)
            if not state.is_public_action(action):
                declined.append(action)
        move = match.play(action, 0)
        hidden = hidden_from(state, seat)
        redealt = redealt or not (seen[0] | seen[1]).isdisjoint(hidden)
        seen = (seen[0] | state.private_cards(seat), seen[1] | state.public_cards())
        event = public_move_event(match, move, events)
        if event is not None:
            events += 1
            yield Sent("event", event.SerializeToString(), seen, tuple(declined), redealt)
    end = _end_requests(match, MATCH_ID)[seat]
    yield Sent("end", end.SerializeToString(), seen, tuple(declined), redealt)


def exchange_for(game: Game, seed: int, seat: int) -> list[tuple[int, int]]:
    """Two cards hidden from ``seat`` at the start of ``seed``, in different places (two other
    hands, a hand and the stock, two places in the stock), drawn from ``seed`` and ``seat``;
    empty if no two such cards exist."""
    state = game.new_state(seed)
    rng = random.Random(seed * 31 + seat)
    hidden = hidden_from(state, seat)
    if len(hidden) < 2:
        return []
    a = rng.choice(sorted(hidden))
    hands = (state.private_cards(other) for other in range(state.num_seats) if other != seat)
    same_hand = next((hand for hand in hands if a in hand), frozenset({a}))
    elsewhere = sorted(hidden - same_hand)
    return [(a, rng.choice(elsewhere))] if elsewhere else []


def hidden_decisions(game: Game, limit: int = 1 << 14) -> frozenset[int]:
    """The actions of ``game`` below ``limit`` that are not public (``is_public_action``)."""
    state = game.new_state(0)
    return frozenset(action for action in range(limit) if not state.is_public_action(action))


@dataclass
class TwoDeals:
    """What comparing the messages of two deals found."""

    compared: int = 0
    """Messages found identical before a card the seat saw differed."""
    declined_unseen: frozenset[int] = frozenset()
    """Non-public actions of other seats taken in one deal and not the other while every
    message stayed identical: the hidden-dependent decisions this comparison exercised."""


def compare_two_deals(
    game: Game, seed: int, seat: int, pairs: Sequence[tuple[int, int]]
) -> TwoDeals:
    """Play ``seed`` as dealt and with the cards of each pair (all hidden from ``seat``)
    exchanged; every message reaching ``seat`` must be identical in both until the seat has
    seen a card that differs. Raises AssertionError at the first message that differs before.

    The messages are compared a stretch at a time: the move events since the seat's last
    request, then its next request. A stretch ends the comparison where a card shown to
    everyone differs, or where the seat holds different cards when it is next asked (it may
    have drawn one of the exchanged cards: its own next decision may then differ, and so may
    what the other seats were asked in between, when they drew from the stock too)."""
    state_class = STATE_CLASSES[game.type.name]
    exchanged = Game(with_cards_exchanged(state_class, pairs), game.num_seats, game.options)
    found = TwoDeals()
    stretches = zip(  # to the shorter: a game that ends has shown everything
        _stretches(sent_to_seat(game, seed, seat, seed)),
        _stretches(sent_to_seat(exchanged, seed, seat, seed)),
        strict=False,
    )
    for first_stretch, second_stretch in stretches:
        first_end, second_end = first_stretch[-1], second_stretch[-1]
        hands_differ = first_end.seen[0] != second_end.seen[0]
        for first, second in zip_longest(first_stretch, second_stretch):
            if first is None or second is None:
                if hands_differ:
                    return found
                raise _differs(game, seed, seat, pairs, found.compared, first, second)
            if first.redealt or second.redealt or found.compared >= MAX_SENT:
                return found
            if first.seen[1] != second.seen[1]:  # a card shown to everyone differs
                return found
            if (first.kind, first.data) != (second.kind, second.data):
                if hands_differ:
                    return found
                raise _differs(game, seed, seat, pairs, found.compared, first, second)
            found.compared += 1
        if hands_differ:
            return found
        if first_end.declined != second_end.declined:
            counts, other = Counter(first_end.declined), Counter(second_end.declined)
            found.declined_unseen |= frozenset((counts - other) + (other - counts))
    return found


def _stretches(sent: Iterator[Sent]) -> Iterator[list[Sent]]:
    """The messages in stretches: the move events up to and with the next other message."""
    stretch: list[Sent] = []
    for message in sent:
        stretch.append(message)
        if message.kind != "event":
            yield stretch
            stretch = []


def _differs(
    game: Game,
    seed: int,
    seat: int,
    pairs: Sequence[tuple[int, int]],
    index: int,
    first: Sent | None,
    second: Sent | None,
) -> AssertionError:
    return AssertionError(
        f"{game.type.name} ({game.num_seats} seats, {dict(game.options)}) seed {seed}, seat"
        f" {seat}, cards {list(pairs)} exchanged: message {index} differs although the seat has"
        f" seen the same cards: {_show(first)} != {_show(second)}; the others declined"
        f" {first.declined if first else '?'} vs {second.declined if second else '?'}"
    )


def _show(sent: Sent | None) -> str:
    message: Message
    if sent is None:
        return "nothing"
    if sent.kind == "request":
        message = bot_service_pb2.ChooseActionRequest.FromString(sent.data)
        text = f"move_index={message.move_index} "
        return f"request({text}{len(sent.data)} bytes)"
    return f"{sent.kind}({sent.data!r})"
