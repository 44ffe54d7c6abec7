"""Whatever bytes a bot answers become the seat's move or a typed fault, never an exception.

Hypothesis drives the pure step the runner takes after every ChooseAction call
(``runner.record_answer``: the answer's bytes to an action or a fault) and the strict parsing
of the other calls' answers, in every registered game, with arbitrary bytes, mutations of
valid answers, messages of other types and random messages built from the contract's own
descriptors (so every field of every game's action is tried with odd values).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, oh_hell_pb2
from referee.bot_client import CallResult, read_info
from referee.codec.untrusted import (
    MAX_DETAIL_CHARS,
    MalformedResponseError,
    bounded,
    parse_strictly,
)
from referee.codec.wire import length_delimited, varint
from referee.games.api import Game
from referee.games.registry import codec_for, game_types, make_game
from referee.match import FaultKind, Match
from referee.runner import record_answer

GAMES = {t.name: make_game(t.name, t.min_seats) for t in game_types()}
ANSWER_FAULTS = {FaultKind.MALFORMED_RESPONSE, FaultKind.ILLEGAL_ACTION}


def scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    """Any value the field's type can hold on the wire, odd ones likely."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == FieldDescriptor.TYPE_STRING:
        return st.text(max_size=8)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=8)
    if kind == FieldDescriptor.TYPE_ENUM:
        return st.integers(-3, 12)  # proto3 enums are open: unknown values arrive as ints
    if kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1))
    if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return st.one_of(st.integers(0, 70), st.integers(0, 2**64 - 1))
    if kind in (
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
    ):
        return st.one_of(st.integers(-5, 70), st.integers(-(2**63), 2**63 - 1))
    return st.one_of(st.integers(-5, 70), st.integers(-(2**31), 2**31 - 1))


@st.composite
def messages(draw: st.DrawFn, descriptor: Descriptor, depth: int = 0) -> bytes:
    """The bytes of a random message of ``descriptor``'s type (some fields set, any values)."""
    message = _message_class(descriptor)()
    fields = list(descriptor.fields)
    for field in draw(st.lists(st.sampled_from(fields), max_size=4)) if fields else []:
        count = draw(st.integers(1, 3)) if field.is_repeated else 1
        for _ in range(count):
            if field.message_type is not None:
                if depth >= 4:
                    continue
                inner = draw(messages(field.message_type, depth + 1))
                target = getattr(message, field.name)
                if field.is_repeated:
                    target.add().MergeFromString(inner)
                else:
                    target.MergeFromString(inner)
            elif field.is_repeated:
                getattr(message, field.name).append(draw(scalar(field)))
            else:
                setattr(message, field.name, draw(scalar(field)))
    return message.SerializeToString()


def _message_class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def as_answer(action_bytes: bytes) -> bytes:
    """``ChooseActionResponse`` bytes around an ``Action``'s bytes."""
    return length_delimited(b"\x0a", action_bytes)


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """A valid answer bit-flipped, truncated, extended, or with bytes spliced in."""
    how = draw(st.sampled_from(["flip", "truncate", "extend", "splice", "unknown"]))
    if how == "flip" and valid:
        index = draw(st.integers(0, len(valid) - 1))
        bit = 1 << draw(st.integers(0, 7))
        return valid[:index] + bytes([valid[index] ^ bit]) + valid[index + 1 :]
    if how == "truncate":
        return valid[: draw(st.integers(0, max(0, len(valid) - 1)))]
    if how == "extend":
        return valid + draw(st.binary(min_size=1, max_size=12))
    if how == "splice" and valid:
        index = draw(st.integers(0, len(valid)))
        return valid[:index] + draw(st.binary(min_size=1, max_size=6)) + valid[index:]
    # A well-formed field the contract does not define (number 100-2000, varint).
    number = draw(st.integers(100, 2000))
    return valid + varint(number << 3) + varint(draw(st.integers(0, 1000)))


def other_messages(game: Game) -> list[bytes]:
    """Well-formed messages of the wrong type, and another game's answers."""
    other = [codec_for(g) for name, g in GAMES.items() if name != game.type.name]
    return [
        bot_service_pb2.GetInfoResponse(name="bot", version="1").SerializeToString(),
        bot_service_pb2.StartMatchRequest(match_id="m", seat=1).SerializeToString(),
        bot_service_pb2.EndMatchResponse().SerializeToString(),
        b"",
        *(codec.canonical_answer(_first_action(codec.game)) for codec in other),
    ]


def _first_action(game: Game) -> int:
    return game.new_state(1).legal_actions()[0]


@st.composite
def answers(draw: st.DrawFn, game: Game, legal: list[int]) -> bytes | None:
    """Anything a bot could answer at a decision whose legal actions are ``legal``."""
    codec = codec_for(game)
    valid = codec.canonical_answer(draw(st.sampled_from(legal)))
    answer: bytes | None = draw(
        st.one_of(
            st.binary(max_size=64),
            mutated(valid),
            st.sampled_from(other_messages(game)),
            messages(bot_service_pb2.ChooseActionResponse.DESCRIPTOR),
            messages(game_pb2.Action.DESCRIPTOR).map(as_answer),
            st.none(),
        )
    )
    return answer


def match_at(game: Game, seed: int, steps: int) -> Match:
    """A match ``steps`` random legal moves in (fewer if it ends first)."""
    match = Match(game, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        legal = match.legal_actions()
        if match.is_over or len(legal) == 0:
            break
        match.play(legal[rng.randrange(len(legal))], 0)
        if match.is_over:
            break
    return match


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 50), steps=st.integers(0, 120))
def test_any_answer_is_a_legal_move_or_a_typed_fault(
    name: str, data: st.DataObject, seed: int, steps: int
) -> None:
    game = GAMES[name]
    match = match_at(game, seed, steps)
    if match.is_over:
        match = match_at(game, seed, 0)
    codec = codec_for(game)
    legal = list(match.legal_actions())
    moves_before = len(match.moves)
    raw = data.draw(answers(game, legal))
    log = record_answer(match, codec, CallResult(raw, None, 1000))
    assert len(match.moves) == moves_before + 1
    if log.fault is None:
        assert log.action in legal
        assert codec.decode_answer(raw) == log.action
        assert codec.cached_answer(raw) in (None, log.action)
    else:
        assert log.fault.kind in ANSWER_FAULTS, log.fault
        assert log.action in legal, "a fault plays a legal default"
        assert len(log.fault.detail) <= MAX_DETAIL_CHARS and log.fault.detail.isprintable()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_legal_action_copied_back_is_that_action_twice(name: str) -> None:
    game = GAMES[name]
    codec = codec_for(game)
    for steps in range(0, 60, 7):
        match = match_at(game, 3, steps)
        if match.is_over:
            break
        for action in match.legal_actions():
            raw = codec.canonical_answer(action)
            assert raw == as_answer(codec.encode_action(action).SerializeToString())
            assert codec.decode_answer(raw) == action
            codec.remember_answer(raw, action)
            assert codec.cached_answer(raw) == action, "the remembered answer agrees"


@pytest.mark.parametrize(
    "message_type",
    [
        bot_service_pb2.GetInfoResponse,
        bot_service_pb2.StartMatchResponse,
        bot_service_pb2.EndMatchResponse,
        bot_service_pb2.ChooseActionResponse,
    ],
)
@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(st.binary(max_size=200), st.none()))
def test_parsing_any_bytes_returns_the_message_or_says_why(
    message_type: type[Message], raw: bytes | None
) -> None:
    try:
        parsed = parse_strictly(raw, message_type)
    except MalformedResponseError as error:
        assert len(str(error)) <= 2 * MAX_DETAIL_CHARS and str(error).isprintable()
    else:
        assert raw is not None and isinstance(parsed, message_type)


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(st.binary(max_size=200), messages(bot_service_pb2.GetInfoResponse.DESCRIPTOR)))
def test_get_info_answers_are_parsed_and_bounded(raw: bytes) -> None:
    try:
        info = read_info(raw)
    except MalformedResponseError:
        return
    assert len(info.name) <= 128 and len(info.version) <= 128


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        # A valid Oh Hell card play with an unknown field after it, at three depths.
        (b"\x0a\x08\x0a\x06\x12\x04\x08\x01\x10\x07" + b"\xa0\x06\x01", "ChooseActionResponse"),
        (b"\x0a\x0b\x0a\x06\x12\x04\x08\x01\x10\x07\xa0\x06\x01", "action"),
        (b"\x0a\x0b\x0a\x09\x12\x07\x08\x01\x10\x07\xa0\x06\x01", "action.oh_hell.play"),
    ],
)
def test_a_field_the_contract_does_not_define_is_malformed_at_any_depth(
    raw: bytes, where: str
) -> None:
    codec = codec_for(GAMES["oh-hell"])
    with pytest.raises(MalformedResponseError, match="does not define") as caught:
        codec.decode_answer(raw)
    assert f"({where}: field 100)" in str(caught.value)


def test_only_legal_answers_are_remembered() -> None:
    """Answers a bot can vary without end (any bid) never grow the shared cache."""
    game = make_game("oh-hell", 3)
    codec = codec_for(game)
    match = Match(game, 5)
    for bid in range(1000, 1100):
        raw = as_answer(
            game_pb2.Action(oh_hell=oh_hell_pb2.OhHellAction(bid=bid)).SerializeToString()
        )
        log = record_answer(match, codec, CallResult(raw, None, 1000))
        assert log.fault is not None and log.fault.kind is FaultKind.ILLEGAL_ACTION
        assert codec.cached_answer(raw) is None


@given(st.text(max_size=2_000), st.integers(min_value=3, max_value=300))
def test_a_bounded_detail_keeps_its_start_and_its_end(text: str, limit: int) -> None:
    shown = bounded(text, limit)
    assert len(shown) <= limit and shown.isprintable()
    if len(text) <= limit and text.isprintable():
        assert shown == text
    cause = "CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate"
    assert bounded("failed to connect; " * 40 + cause).endswith(cause), "the cause survives"
