"""What spectators of a live match are told of each move: the ``MoveEvent`` of a public move.

A move that declines an optional decision only some hands are offered (``State.is_public_action``
is False) is not told at all while the match is live: that the decision was asked would show
something of a hidden hand, and so would the events' numbering, which is why an event's
``index`` counts the events sent, not the moves made. The finished record has every move.

Each event carries the public table after its move (``State.public_table``: the turn-up, the
top of the pile, hand sizes), so a live table can be drawn from the events alone.
"""

from __future__ import annotations

from cardarena.arena.v1 import arena_service_pb2
from cardarena.game.v1 import cards_pb2
from referee.codec.base import GameCodec
from referee.games.registry import codec_for
from referee.match import Match, MoveLog


def public_move_event(
    match: Match, move: MoveLog, index: int
) -> arena_service_pb2.MoveEvent | None:
    """The event for ``move`` (just played in ``match``) as the ``index``-th move event sent to
    spectators, or None when spectators may not be told of it."""
    state = match.state
    if not state.is_public_action(move.action):
        return None
    return arena_service_pb2.MoveEvent(
        index=index,
        seat=move.seat,
        description=state.describe_public_action(move.action),
        defaulted=move.fault is not None,
        scores=state.scores_so_far(),
        table=public_table_message(match, codec_for(match.game)),
    )


def public_table_message(match: Match, codec: GameCodec) -> arena_service_pb2.PublicTable:
    """The public table of ``match`` now, in wire form (cards through ``codec``)."""
    table = match.state.public_table()
    message = arena_service_pb2.PublicTable(
        announced_suit=cards_pb2.Suit.ValueType(table.announced_suit),
        hand_sizes=table.hand_sizes,
    )
    if table.turn_up is not None:
        message.turn_up.CopyFrom(codec.card(table.turn_up))
    if table.pile_top is not None:
        message.pile_top.CopyFrom(codec.card(table.pile_top))
    return message
