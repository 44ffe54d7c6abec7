"""The interface each game's codec implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import cards_pb2, game_pb2
from referee.codec.untrusted import MalformedResponseError, parse_strictly
from referee.codec.wire import BoundedCache, length_delimited, tag, varint
from referee.games.api import Game

__all__ = ["GameCodec", "MalformedActionError", "legal_action_field", "length_delimited", "varint"]

_LEGAL_ACTIONS_TAG = tag(bot_service_pb2.ChooseActionRequest, "legal_actions")
_RESPONSE_ACTION_TAG = tag(bot_service_pb2.ChooseActionResponse, "action")


def legal_action_field(action: game_pb2.Action) -> bytes:
    """``action`` as one serialized ``ChooseActionRequest.legal_actions`` entry."""
    return length_delimited(_LEGAL_ACTIONS_TAG, action.SerializeToString())


_SHARED_ACTION_CACHES: dict[
    tuple[object, ...],
    tuple[
        dict[int, game_pb2.Action],
        dict[int, bytes],
        BoundedCache[tuple[int, ...], bytes],
        dict[bytes | None, int],
    ],
] = {}
"""Encoded actions, action lists and decoded answers per (codec class, game, seats, options);
see ``GameCodec``."""


class MalformedActionError(MalformedResponseError):
    """An Action message that is not a well-formed action of this game (not merely illegal)."""


class GameCodec(ABC):
    """Converts one game's observations and actions between engine and wire form.

    Encoded actions are cached per action id: a game has few distinct actions, and the same
    message is copied into many requests. The caches are shared by every codec of the same game
    with the same seats and options: each match makes its own codec, and a private cache of
    protobuf messages (every one in its own upb arena) cost about 100 KB per Oh Hell match,
    more than the rest of a match in flight (benchmarks/concurrency.py).
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        key = (type(self), game.type.name, game.num_seats, tuple(sorted(game.options.items())))
        caches = _SHARED_ACTION_CACHES.get(key)
        if caches is None:
            caches = _SHARED_ACTION_CACHES[key] = ({}, {}, BoundedCache(), {})
        self._action_cache, self._action_field_cache, self._action_list_cache = caches[:3]
        self._answer_cache = caches[3]
        self.cached_answer = self._answer_cache.get
        """The action of answer bytes played before as a legal action (else None): one C call."""
        self.cached_action_fields = self._action_list_cache.get
        """``encoded_action_fields(actions)`` for a tuple seen before (else None): one C call."""

    @abstractmethod
    def card(self, card: int) -> cards_pb2.Card:
        """The wire form of one of this game's card ids."""

    @abstractmethod
    def observation(self, observation: Any) -> game_pb2.Observation:
        """The wire form of an engine observation (``State.observe``)."""

    def observation_bytes(self, observation: Any) -> bytes:
        """``observation(observation).SerializeToString()``, byte for byte, for the runner.

        Games override this with a fast path that writes the bytes directly from cached parts
        (see ``referee.codec.wire``); ``observation`` stays the reference (tests compare the
        two over whole playouts) and the form in-process bots and tests use.
        """
        return self.observation(observation).SerializeToString()

    @abstractmethod
    def _encode_action(self, action: int) -> game_pb2.Action:
        """The wire form of an engine action id."""

    @abstractmethod
    def decode_action(self, message: game_pb2.Action) -> int:
        """The engine action id of a wire action; ``MalformedActionError`` if it is not one."""

    def decode_answer(self, raw: bytes | None) -> int:
        """The engine action id of a ``ChooseActionResponse`` as the bot sent it (its bytes, or
        None when the stream ended without a whole message).

        ``MalformedResponseError`` unless the bytes parse strictly (no field the contract does
        not define, at any depth: ``untrusted.parse_strictly``) and hold an action of this
        game; whether it is legal now is the match's question. The runner first tries
        ``cached_answer``: see ``remember_answer``.
        """
        response = parse_strictly(raw, bot_service_pb2.ChooseActionResponse)
        if not response.HasField("action"):
            raise MalformedResponseError("the answer has no action")
        return self.decode_action(response.action)

    def remember_answer(self, raw: bytes | None, action: int) -> None:
        """``raw`` was just played as ``action``, a legal action: if it is the referee's own
        encoding of it (a bot that copies a legal action sends exactly that), ``cached_answer``
        knows it from now on, one dict lookup instead of parsing.

        Only legal actions' canonical bytes are kept, so the cache cannot grow with what bots
        send: at most one entry per action the engine ever offers.
        """
        if raw == self.canonical_answer(action):
            self._answer_cache[raw] = action

    def canonical_answer(self, action: int) -> bytes:
        """The bytes of ``ChooseActionResponse(action=encode_action(action))``."""
        return length_delimited(
            _RESPONSE_ACTION_TAG, self.encode_action(action).SerializeToString()
        )

    def encode_action(self, action: int) -> game_pb2.Action:
        """The wire form of an engine action id (cached; treat the result as read-only)."""
        cached = self._action_cache.get(action)
        if cached is None:
            cached = self._action_cache[action] = self._encode_action(action)
        return cached

    def encode_actions(self, actions: Sequence[int]) -> list[game_pb2.Action]:
        """Wire forms of several actions, in order."""
        return [self.encode_action(action) for action in actions]

    def encoded_action_fields(self, actions: Sequence[int]) -> bytes:
        """Several actions as serialized ``ChooseActionRequest.legal_actions`` entries, in order.

        Cached per tuple of actions: engines hand out the same few legal-action tuples again
        and again (many straight from tables), and hashing a tuple of ints is cheaper than
        joining its entries.
        """
        if type(actions) is tuple:
            encoded = self._action_list_cache.get(actions)
            if encoded is None:
                encoded = self._action_list_cache.put(actions, self._join_action_fields(actions))
            return encoded
        return self._join_action_fields(actions)

    def legal_action_fields(self, observation: Any, actions: Sequence[int]) -> bytes:
        """``encoded_action_fields(actions)`` for ``actions``, the legal actions of the seat
        that sees ``observation`` (``State.observe``): the runner's path (a tuple seen before
        is one C call, ``cached_action_fields``).

        A game whose legal actions are mostly a hand's cards overrides it to write them from a
        card mask its view carries (Pinochle): each hand's tuple is new, so looking it up would
        miss, and caching it would not pay. Like every codec method it reads the view only.
        """
        return (type(actions) is tuple and self.cached_action_fields(actions)) or (
            self.encoded_action_fields(actions)
        )

    def _join_action_fields(self, actions: Sequence[int]) -> bytes:
        cache = self._action_field_cache
        try:
            return b"".join([cache[action] for action in actions])
        except KeyError:
            return b"".join([self.encoded_action_field(action) for action in actions])

    def encoded_action_field(self, action: int) -> bytes:
        """The action as one serialized ``ChooseActionRequest.legal_actions`` entry (cached)."""
        cached = self._action_field_cache.get(action)
        if cached is None:
            cached = self._action_field_cache[action] = legal_action_field(
                self.encode_action(action)
            )
        return cached
