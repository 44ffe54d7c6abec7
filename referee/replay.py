"""Re-simulate a match record through the engine and report any divergence."""

from __future__ import annotations

from cardarena.game.v1 import record_pb2
from referee.codec import MalformedActionError
from referee.codec.summaries import summaries_from_moves
from referee.games.api import RulesError
from referee.games.registry import codec_for, game_from_settings


def resimulate(record: record_pb2.MatchRecord) -> list[str]:
    """Replay every recorded action from the recorded seed; return divergences (none = [])."""
    try:
        game = game_from_settings(record.settings)
    except (RulesError, ValueError) as error:
        return [f"settings: {error}"]
    codec = codec_for(game)
    state = game.new_state(record.seed)
    problems: list[str] = []
    for move in record.moves:
        if state.is_terminal():
            problems.append(f"move {move.index}: the game was already over")
            return problems
        if state.current_seat() != move.seat:
            problems.append(
                f"move {move.index}: recorded seat {move.seat}, engine expects "
                f"seat {state.current_seat()}"
            )
            return problems
        try:
            action = codec.decode_action(move.action)
            state.apply(action)
        except (MalformedActionError, RulesError) as error:
            problems.append(f"move {move.index}: {error}")
            return problems
    if record.seat_summaries:  # the store trusts them: they must say what the moves say
        expected = summaries_from_moves(record, record.settings.num_seats)
        if list(record.seat_summaries) != expected:
            problems.append("seat summaries: they do not match the recorded moves")
    if record.status == record_pb2.MATCH_STATUS_COMPLETED:
        if not state.is_terminal():
            problems.append("recorded as completed, but the engine's game is not over")
        else:
            outcome = state.outcome()
            if list(outcome.scores) != list(record.outcome.scores):
                problems.append(
                    f"scores: recorded {list(record.outcome.scores)}, engine {list(outcome.scores)}"
                )
            if list(outcome.ranks) != list(record.outcome.ranks):
                problems.append(
                    f"ranks: recorded {list(record.outcome.ranks)}, engine {list(outcome.ranks)}"
                )
    return problems
