"""Replay frames drawn from real match records, and live frames that never show a hidden card."""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import DecodeError

from arena.web.frames import FRAMES, frames_module_name, frames_of
from arena.web.frames.common import CardNamer
from arena.web.frames.live import LiveError, LiveTable, cards_in
from arena.web.frames.live_rules import LiveRules
from arena.web.replay import (
    ReplayError,
    draw_table,
    frames_for_events,
    frames_for_record,
    namer_for,
)
from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import cards_pb2, record_pb2
from referee.codec.common import game_settings
from referee.codec.record import match_record
from referee.codec.watch import public_move_event
from referee.games.api import State
from referee.games.entry import GameEntry
from referee.games.oh_hell import OhHellState
from referee.games.registry import ENTRIES, codec_for, make_game
from referee.games.registry import GAMES as REGISTERED
from referee.match import Fault, FaultKind, FaultPolicy, Match, MatchStatus, MoveLog

GAMES = [
    ("pinochle", 2, {"declare_out": "disabled"}),
    ("king", 4, {}),
    ("mau-mau", 2, {}),
    ("mau-mau", 3, {"cannot_discard": "draw_then_may_play"}),
    ("mau-mau", 6, {}),
    ("klaberjass", 2, {}),
    ("oh-hell", 3, {}),
    ("oh-hell", 5, {"deal_style": "short_high_low"}),
    ("oh-hell", 7, {}),
]
"""Every game, and every seat count of the games that seat several."""

SEEDS = (1, 2, 3)


def played_match(
    name: str,
    seats: int,
    options: dict[str, object],
    seed: int,
    *,
    fault_every: int = 11,
    max_faults: int = 0,
    on_move: Callable[[Match, MoveLog], None] | None = None,
) -> Match:
    """A whole match of random legal moves, a fault now and then (the referee's default plays)."""
    match = Match(make_game(name, seats, options), seed, policy=FaultPolicy(max_faults=max_faults))
    rng = random.Random(seed)
    while not match.is_over:
        elapsed_us = rng.randrange(100, 90_000)
        if fault_every and len(match.moves) % fault_every == fault_every - 1:
            move = match.fault(
                Fault(FaultKind.ILLEGAL_ACTION, "play XX is not legal now"), elapsed_us
            )
        else:
            legal = match.legal_actions()
            move = match.play(legal[rng.randrange(len(legal))], elapsed_us)
        if on_move is not None:
            on_move(match, move)
    return match


def record_of(match: Match, seats: int) -> record_pb2.MatchRecord:
    """The match record the referee would store."""
    return match_record(
        match,
        codec_for(match.game),
        match_id=f"m-{match.seed}",
        seats=[
            record_pb2.SeatAssignment(seat=s, bot_name=f"bot-{s}", bot_version="1")
            for s in range(seats)
        ],
        started_at_us=0,
        finished_at_us=1,
        referee_version="test",
    )


def record_for(
    name: str, seats: int, options: dict[str, object], seed: int
) -> record_pb2.MatchRecord:
    return record_of(played_match(name, seats, options, seed), seats)


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
def test_a_replay_has_a_frame_per_move_and_ends_on_the_recorded_scores(
    name: str, seats: int, options: dict[str, object]
) -> None:
    for seed in SEEDS:
        record = record_for(name, seats, options, seed)
        assert record.status == record_pb2.MATCH_STATUS_COMPLETED
        replay = frames_for_record(record)
        frames = replay["frames"]
        assert len(frames) == len(record.moves)
        assert frames[-1]["table"]["totals"] == list(record.outcome.scores)
        assert replay["outcome"]["scores"] == list(record.outcome.scores)
        assert [f["seat"] for f in frames] == [m.seat for m in record.moves]
        assert [s["name"] for s in replay["seats"]] == [f"bot-{s}" for s in range(seats)]
        faults = [f for f in frames if f["fault"]]
        assert faults and all(f["fault"]["kind"] == "illegal_action" for f in faults)
        assert frames[0]["time_ms"] == round(record.moves[0].elapsed_us / 1000, 1)
        json.dumps(replay)  # JSON-able as it is


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
def test_every_frame_shows_every_card_in_a_hand_face_up(
    name: str, seats: int, options: dict[str, object]
) -> None:
    """After the match nothing is hidden: each frame's hands are the engine's hands then."""
    match = played_match(name, seats, options, 5)
    replay = frames_for_record(record_of(match, seats))
    state = match.game.new_state(match.seed)
    namer = namer_for(match.game)
    for move, frame in zip(match.moves, replay["frames"], strict=True):
        state.apply(move.action)
        for seat, drawn in enumerate(frame["table"]["seats"]):
            expected = sorted(namer(c) for c in state.private_cards(seat))
            shown = drawn["hand"]
            assert shown is not None and set(expected) <= set(shown)
            assert drawn["count"] == len(shown)


def test_a_forfeited_match_ends_on_the_forfeit_scores() -> None:
    match = played_match("oh-hell", 4, {}, 9, fault_every=3, max_faults=5)
    assert match.status is MatchStatus.FORFEITED
    record = record_of(match, 4)
    replay = frames_for_record(record)
    assert replay["status"] == "forfeited" and replay["forfeited_seat"] == record.forfeited_seat
    assert replay["frames"][-1]["table"]["totals"] == list(record.outcome.scores)


def test_a_tampered_record_is_refused_with_one_line() -> None:
    record = record_for("klaberjass", 2, {}, 1)
    record.moves[3].seat = 1 - record.moves[3].seat
    with pytest.raises(ReplayError, match="move 3: recorded seat"):
        frames_for_record(record)
    record = record_for("klaberjass", 2, {}, 1)
    record.outcome.scores[0] += 1
    with pytest.raises(ReplayError, match="scores: recorded"):
        frames_for_record(record)
    record.settings.game = "chess"
    with pytest.raises(ReplayError, match="unknown game"):
        frames_for_record(record)


def hidden_names(state: State, namer: CardNamer) -> set[str]:
    """Names of the cards no spectator may see now: every concealed hand, the stock."""
    hidden: set[int] = set(state.concealed_cards())
    for seat in range(state.num_seats):
        hidden |= state.private_cards(seat)
    return {namer(c) for c in hidden}


def table_cards(table: dict[str, object]) -> list[str]:
    """Every card named anywhere in a drawn table (hands, tricks, melds, pile, facts, calls)."""
    return cards_in(json.dumps(table).replace('"', " "))


def hand_size(state: State, seat: int) -> int:
    """How many cards ``seat`` holds, from its own observation (every game shows its size)."""
    hand = state.observe(seat).hand
    return hand.bit_count() if isinstance(hand, int) else len(hand)


TURN_UP_FACTS = ("Trump", "Turn-up")
"""The facts a live table draws from ``PublicTable.turn_up``."""


def facts_by_label(table: dict[str, Any]) -> dict[str, Any]:
    return {fact["label"]: fact for fact in table["facts"]}


def meld_turn_before_the_last_draw(state: State) -> bool:
    """Pinochle: the winner of the last stock trick may meld, and the draw that takes the
    turn-up follows (spectators see the turn-up as taken already)."""
    return state.public_table().turn_up is None and getattr(state, "turn_up", -1) >= 0


class Spectator:
    """Watches a match as the arena's spectators do, checking each live frame as it comes."""

    def __init__(self, match: Match, namer: CardNamer) -> None:
        self.live = LiveTable(game_settings(match.game))
        self.namer = namer
        self.events: list[arena_service_pb2.MoveEvent] = []
        self.cards_shown = 0
        self.counted = 0
        self.winners = 0
        self.facts = 0

    def on_move(self, match: Match, move: MoveLog) -> None:
        event = public_move_event(match, move, len(self.events))
        if event is None:
            return
        self.events.append(event)
        frame = self.live.add(event)
        cards = table_cards(frame["table"])
        leaked = set(cards) & hidden_names(match.state, self.namer)
        assert not leaked, f"move {move.index} ({event.description}) shows {leaked}"
        for seat, drawn in enumerate(frame["table"]["seats"]):
            assert drawn["hand"] is None
            if drawn["count"] is not None:  # a size the table says must be the real one
                assert drawn["count"] == hand_size(match.state, seat), f"move {move.index}"
                self.counted += 1
        assert frame["table"]["totals"] == list(event.scores)
        self.check_public_facts(match.state, frame["table"], f"move {move.index}")
        self.cards_shown += len(cards)
        last = frame["table"]["last_trick"]
        if last is not None and last["winner"] is not None:
            assert last == draw_table(match.state, self.namer)["last_trick"], f"move {move.index}"
            self.winners += 1

    def check_public_facts(self, state: State, live: dict[str, Any], where: str) -> None:
        """The turn-up, the pile's top and the announced suit a live table shows are what
        the engine's observations show (as the finished record draws them)."""
        engine = draw_table(state, self.namer)
        live_facts, engine_facts = facts_by_label(live), facts_by_label(engine)
        for label in TURN_UP_FACTS:
            if label not in live_facts:
                continue
            shown, real = live_facts[label], engine_facts[label]
            if shown["text"] == "taken" and meld_turn_before_the_last_draw(state):
                continue
            assert (shown["cards"], shown["text"]) == (real["cards"], real["text"]), where
            self.facts += 1
        if live["pile"] is not None:
            assert live["pile"]["cards"] == engine["pile"]["cards"][-1:], where
            assert live["pile"]["announced"] == engine["pile"]["announced"], where
            self.facts += 1


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
def test_a_live_table_never_shows_a_card_hidden_from_spectators(
    name: str, seats: int, options: dict[str, object]
) -> None:
    """Every update of whole matches, checked against the engine's hidden cards at that moment."""
    game = make_game(name, seats, options)
    shown = 0
    for seed in SEEDS:
        spectator = Spectator(Match(game, seed), namer_for(game))
        match = played_match(name, seats, options, seed, on_move=spectator.on_move)
        replay = frames_for_events(game_settings(game), spectator.events)
        assert len(replay["frames"]) == len(spectator.events) and replay["live"]
        assert replay["frames"][-1]["table"]["totals"] == list(match.state.scores_so_far())
        shown += spectator.cards_shown
        assert spectator.counted or name == "mau-mau", "no hand size was shown"
        assert spectator.winners or name == "mau-mau", "no trick's winner was shown"
        assert spectator.facts or name == "king", "no turn-up or pile was shown"
        if name == "mau-mau":
            assert spectator.counted, "no Mau-Mau hand size was shown"
    assert shown, "the live table never showed a card: the test would prove nothing"


def test_a_voided_or_aborted_match_shows_what_was_played_and_no_outcome() -> None:
    game = make_game("king", 4)
    voided = Match(game, 3)
    voided.void("seat 2 was unreachable at the start")
    replay = frames_for_record(record_of(voided, 4))
    assert replay["frames"] == [] and replay["outcome"] is None and replay["status"] == "voided"
    assert all(len(seat["hand"]) == 13 for seat in replay["start"]["seats"])
    aborted = Match(game, 3)
    for _ in range(10):
        aborted.play(aborted.legal_actions()[0], 1000)
    aborted.abort("the referee shut down")
    replay = frames_for_record(record_of(aborted, 4))
    assert len(replay["frames"]) == 10 and replay["outcome"] is None
    assert replay["status"] == "aborted" and "shut down" in replay["status_detail"]


def test_a_live_table_refuses_settings_and_events_that_do_not_fit() -> None:
    settings = game_settings(make_game("oh-hell", 4))
    live = LiveTable(settings)
    with pytest.raises(LiveError, match="4-seat"):
        live.add(arena_service_pb2.MoveEvent(seat=4, description="bid 1", scores=[0] * 4))
    with pytest.raises(LiveError, match="4-seat"):
        live.add(arena_service_pb2.MoveEvent(seat=0, description="bid 1", scores=[0] * 3))
    long = live.add(arena_service_pb2.MoveEvent(seat=0, description="x" * 10_000, scores=[0] * 4))
    assert len(long["move"]) == 200
    not_a_card = cards_pb2.Card(rank=cards_pb2.Rank.ValueType(99))
    bad_tables = {
        "turn_up is not a card": arena_service_pb2.PublicTable(turn_up=not_a_card),
        "hand sizes of 3 seats": arena_service_pb2.PublicTable(hand_sizes=[1, 2, 3]),
        "more than 104 cards": arena_service_pb2.PublicTable(hand_sizes=[1, 2, 3, 10**6]),
        "announced suit": arena_service_pb2.PublicTable(announced_suit=cards_pb2.Suit.ValueType(9)),
    }
    for message, table in bad_tables.items():
        event = arena_service_pb2.MoveEvent(seat=0, description="bid 1", scores=[0] * 4)
        event.table.CopyFrom(table)
        with pytest.raises(LiveError, match=message):
            live.add(event)
    settings.game = "chess"
    with pytest.raises(LiveError, match="unknown game"):
        LiveTable(settings)


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        ("play 10H", ["TH"]),
        ("play TH", ["TH"]),
        ("play KS and announce bella", ["KS"]),
        ("meld royal marriage KH#0 QH#1", ["KH#0", "QH#1"]),
        ("discard JC JH announcing spades", ["JC", "JH"]),
        ("declare a sequence of 4 to the K", []),
        ("exchange the 7 of trumps for the turn-up", []),
        ("bid 2", []),
    ],
)
def test_cards_are_read_from_descriptions(text: str, cards: list[str]) -> None:
    assert cards_in(text) == cards


@pytest.mark.parametrize(("name", "seats", "options"), GAMES[::2])
def test_a_mangled_record_is_drawn_or_refused_never_crashes(
    name: str, seats: int, options: dict[str, object]
) -> None:
    """Moves whose actions are other well-formed protobuf messages (random bytes that parse)."""
    original = record_for(name, seats, options, 1)
    rng = random.Random(7)
    refused = 0
    for _ in range(60):
        record = record_pb2.MatchRecord()
        record.CopyFrom(original)
        move = record.moves[rng.randrange(len(record.moves))]
        raw = bytearray(move.action.SerializeToString())
        for _ in range(rng.randrange(1, 4)):
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        try:
            move.action.Clear()
            move.action.MergeFromString(bytes(raw))
        except DecodeError:  # not a message at all: nothing to replay
            continue
        try:
            frames_for_record(record)
        except ReplayError as error:
            assert "\n" not in str(error)
            refused += 1
    assert refused, "no mangled record was refused: the test would prove nothing"


def test_every_registered_game_has_its_frames_module() -> None:
    """``FRAMES`` is the registry's games, each with ``arena/web/frames/<package>.py``."""
    assert list(FRAMES) == [entry.name for entry in REGISTERED]
    for entry in REGISTERED:
        frames = FRAMES[entry.name]
        module = importlib.import_module(frames_module_name(entry))
        assert frames.table is module.table
        assert frames.live is getattr(module, "Live", LiveRules)


def test_a_registered_game_without_a_frames_module_is_named() -> None:
    unframed = type(
        "SixtySixState", (OhHellState,), {"__module__": "referee.games.sixty_six.rules"}
    )
    entry = GameEntry(state_class=unframed, codec=ENTRIES["oh-hell"].codec, demo_seats=3)
    with pytest.raises(LookupError, match=r"no frames module arena\.web\.frames\.sixty_six"):
        frames_of(entry)
