"""Referee CPU per decision without the network: engine, observation, codec and protobuf bytes.

For every registered game (at its largest seat count up to 4; Pinochle also without declaring
out, as in benchmarks/engine.py, since random players declare out within a few moves and
default games are mostly deals) this plays random playouts
in-process and, at every decision, does what the referee does before a bot is called, then
``apply``. CPU µs per decision, stages cumulative:

- ``engine``: ``legal_actions`` + ``apply`` (as benchmarks/engine.py);
- ``+observe``: plus the engine's ``observe(seat)``;
- ``message``: plus ``choose_action_request`` (codec observation, actions, clock) and
  ``SerializeToString``: how bots in-process and tests build a request;
- ``runner``: plus ``RequestEncoder.encode`` instead: the bytes the runner really sends.

The request stages make a codec and an encoder per match, as the runner does, so those and
``Match`` itself (seeding the generator, the first deal) are in them. ``setup`` is that per-match
work alone (µs per match) and ``per dec`` is ``runner`` without it: ``runner`` minus ``setup``
over the mean decisions per match (``dec/m``). The two differ only where random games are short:
random Pinochle players declare out after ~7 decisions, so set-up is a third of that row.

``per dec`` is compared with the issue's 10 µs target and, as a ratio, with a baseline measured
in the same run (serializing one fixed, pre-built request of the same game; the machine is
shared and noisy, so compare ratios across runs, not raw µs).

    python benchmarks/decision_cost.py                  # every game
    python benchmarks/decision_cost.py --game king --seconds 3
    python benchmarks/decision_cost.py --quick          # a smoke run for CI
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.engine import CHOICES, WHOLE_GAME_OPTIONS, measure
from referee.codec.common import game_settings
from referee.codec.requests import RequestEncoder, choose_action_request
from referee.games.api import Game
from referee.games.registry import codec_for, game_types, make_game
from referee.match import Match

TARGET_US = 10.0

Stage = Callable[[int], int]
"""Plays one seeded match, doing some stages per decision; returns its number of decisions."""


def stage_engine(game: Game) -> Stage:
    """legal_actions + apply only (what benchmarks/engine.py measures)."""

    def play(seed: int) -> int:
        match = Match(game, seed)
        state = match.state
        index = start = seed * 7919
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply(legal[CHOICES[index & 0xFFFF] % len(legal)])
            index += 1
        return index - start

    return play


def stage_observe(game: Game) -> Stage:
    """Engine + ``observe(seat)`` (the engine's own observation object)."""

    def play(seed: int) -> int:
        match = Match(game, seed)
        state = match.state
        index = start = seed * 7919
        while not state.is_terminal():
            state.observe(state.current_seat())
            legal = state.legal_actions()
            state.apply(legal[CHOICES[index & 0xFFFF] % len(legal)])
            index += 1
        return index - start

    return play


MATCH_ID = "0123456789abcdef" * 2


def stage_setup(game: Game) -> Stage:
    """What the runner makes per match before the first request: match, codec, encoder."""
    settings = game_settings(game)

    def start(seed: int) -> int:
        Match(game, seed)
        RequestEncoder(codec_for(game), settings, MATCH_ID)
        return 1

    return start


def decisions_per_match(game: Game, matches: int) -> float:
    """Mean decisions of the seeded random games the stages play (seeds from 0)."""
    play = stage_engine(game)
    return sum(play(seed) for seed in range(matches)) / matches


def stage_request(game: Game, runner: bool) -> Stage:
    """Engine + the serialized ``ChooseActionRequest``: as a message, or as the runner does."""
    settings = game_settings(game)
    match_id = MATCH_ID

    def play(seed: int) -> int:
        match = Match(game, seed)
        state = match.state
        codec = codec_for(game)
        encoder = RequestEncoder(codec, settings, match_id)
        index = start = seed * 7919
        size = 0
        while not state.is_terminal():
            if runner:
                size += len(encoder.encode(match))
            else:
                size += len(
                    choose_action_request(match, codec, settings, match_id).SerializeToString()
                )
            legal = state.legal_actions()
            state.apply(legal[CHOICES[index & 0xFFFF] % len(legal)])
            index += 1
        return index - start

    return play


def typical_request_bytes(game: Game) -> bytes:
    """The serialized request of the middle decision of one seeded match."""
    codec, settings = codec_for(game), game_settings(game)
    match = Match(game, 1)
    requests, index = [], 0
    while not match.state.is_terminal() and index < 100_000:
        requests.append(choose_action_request(match, codec, settings, "0" * 32))
        legal = match.state.legal_actions()
        match.state.apply(legal[CHOICES[index] % len(legal)])
        index += 1
    return requests[len(requests) // 2].SerializeToString()


def baseline(game: Game) -> Stage:
    """Serialize one fixed, already built request per 'decision' (protobuf's floor)."""
    codec, settings = codec_for(game), game_settings(game)
    match = Match(game, 1)
    request = choose_action_request(match, codec, settings, "0" * 32)
    request.ParseFromString(typical_request_bytes(game))

    def play(seed: int) -> int:
        for _ in range(100):
            request.SerializeToString()
        return 100

    return play


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="game name (repeatable); default all")
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per figure")
    parser.add_argument("--quick", action="store_true", help="short smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    seconds = 0.15 if args.quick else args.seconds
    header = (
        f"{'game':34} {'engine':>7} {'+observe':>9} {'message':>8} {'runner':>7} "
        f"{'setup':>6} {'dec/m':>6} {'per dec':>8} {'req B':>6} {'vs 10µs':>8} {'× base':>7}"
    )
    print(
        "CPU µs per decision (cumulative stages; setup: µs per match); "
        "base = serialize one built request"
    )
    print(header)
    rows = []
    configs = [
        (game_type.name, min(4, game_type.max_seats), options)
        for game_type in game_types()
        if not args.game or game_type.name in args.game
        for options in [{}, *WHOLE_GAME_OPTIONS.get(game_type.name, ())]
    ]
    for name, seats, options in configs:
        game = make_game(name, seats, options)
        engine = measure(stage_engine(game), seconds)
        observe = measure(stage_observe(game), seconds)
        request = measure(stage_request(game, runner=False), seconds)
        total = measure(stage_request(game, runner=True), seconds)
        setup = measure(stage_setup(game), seconds)
        per_match = decisions_per_match(game, 20 if args.quick else 200)
        per_decision = total - setup / per_match
        base = measure(baseline(game), seconds)
        size = len(typical_request_bytes(game))
        label = " ".join(f"{key}={value}" for key, value in options.items())
        row = {
            "game": f"{name} {game.num_seats}p {label}".strip(),
            "engine_us": engine,
            "observe_us": observe,
            "message_us": request,
            "runner_us": total,
            "setup_us_per_match": setup,
            "decisions_per_match": per_match,
            "per_decision_us": per_decision,
            "request_bytes": size,
            "vs_target": per_decision / TARGET_US,
            "baseline_us": base,
            "ratio_to_baseline": per_decision / base,
        }
        rows.append(row)
        print(
            f"{row['game']:34} {engine:7.2f} {observe:9.2f} {request:8.2f} {total:7.2f} "
            f"{setup:6.1f} {per_match:6.0f} {per_decision:8.2f} {size:6d} "
            f"{per_decision / TARGET_US:8.2f} {per_decision / base:7.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
