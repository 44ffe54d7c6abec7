"""Golden playthroughs: whole matches recorded as text, replayed by ``tests/test_golden.py``.

Seed → deal → match is part of the replay contract: a stored match record names only its
seed, options and actions, so a change to how a seed shuffles, or to what a seat is sent,
silently breaks every record and every bot that learnt from them. Same-code determinism tests
cannot see such a change; files recorded from earlier code can (OpenSpiel's
``integration_tests/playthroughs``, python-chess's perft files).

Each file under ``tests/golden/`` holds the playthroughs of one game and seat count: for each
seed, the options, every deal as the rules arranged it (the seed → deal mapping), every move
(seat, action, its description, the SHA-256 of the request bytes the referee sends the seat to
act, and of every seat's observation bytes) and the outcome. A request opens with the match id
and the settings, whose option map protobuf writes in hash order (it differs between
processes, not between requests of one process): the digest covers the request after that
opening, which must equal the settings message written here, and the settings' deterministic
bytes are recorded once per playthrough. The seat's answers come from a
seeded policy that also answers late now and then and sends a malformed answer now and then,
so clocks, banks and default actions show in the requests too.

Record again (only when a change of the contract is intended, and say so in the commit):
``python -m tests.playthroughs [GAME ...]`` replays the recorded seeds and options with today's
code (a new option then changes only the settings lines); ``--fresh`` chooses them again.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cardarena.bot.v1 import bot_service_pb2
from referee.codec.common import game_settings
from referee.codec.requests import RequestEncoder, choose_action_request
from referee.games.api import Game, GameType, OptionValue, State
from referee.games.registry import STATE_CLASSES, codec_for
from referee.match import Fault, FaultKind, FaultPolicy, Match

GOLDEN_DIR = Path(__file__).parent / "golden"
MATCH_ID = "golden"
SEEDS = (1, 2, 3)
DIGEST_CHARS = 16
"""Hex digits kept of each SHA-256 (64 bits: a changed byte shows; the files stay small)."""
SHORT_MATCHES: dict[str, OptionValue] = {"target": 200, "target_score": 150}
"""Match-length options set low for the seeds after the first (files stay small)."""


@dataclass(frozen=True)
class Setup:
    """One recorded playthrough's game, seats, options and seed."""

    game: str
    seats: int
    options: dict[str, OptionValue]
    seed: int


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def seat_counts(game_type: GameType) -> range:
    return range(game_type.min_seats, game_type.max_seats + 1)


def setups(game_type: GameType, seats: int) -> list[Setup]:
    """The first seed at default options; the others with short targets and one option changed
    each (cycling through the options' other values)."""
    names = {spec.name for spec in game_type.options}
    short = {name: value for name, value in SHORT_MATCHES.items() if name in names}
    variants: list[dict[str, OptionValue]] = []
    for spec in game_type.options:
        if isinstance(spec.default, bool):
            variants.append({spec.name: not spec.default})
        elif isinstance(spec.default, str):
            variants.extend({spec.name: c} for c in spec.choices if c != spec.default)
    result = [Setup(game_type.name, seats, {}, SEEDS[0])]
    for index, seed in enumerate(SEEDS[1:]):
        options = dict(short)
        if variants:
            options.update(variants[(seats + index) % len(variants)])
        result.append(Setup(game_type.name, seats, options, seed))
    return result


def golden_path(game: str, seats: int) -> Path:
    return GOLDEN_DIR / f"{game}-{seats}.txt"


def all_files() -> Iterator[tuple[str, int]]:
    """(game, seats) of every golden file: every registered game at every seat count."""
    for state_class in STATE_CLASSES.values():
        game_type = state_class.game_type
        for seats in seat_counts(game_type):
            yield game_type.name, seats


def _recording_class(state_class: type[State], deals: list[list[int]]) -> type[State]:
    """``state_class`` noting every deal as the rules arrange it (``State.arrange_deal``)."""

    class Recording(state_class):  # type: ignore[valid-type,misc]
        def arrange_deal(self, cards: list[int]) -> list[int]:
            deals.append(list(cards))
            return cards

    return Recording


def _flush_deals(deals: list[list[int]], lines: list[str]) -> None:
    for cards in deals:
        lines.append("deal " + " ".join(map(str, cards)))
    deals.clear()


def play(setup: Setup) -> list[str]:
    """The lines of one playthrough, recomputed from today's code.

    Both paths to the bytes (message and direct) must agree at every step; a mismatch raises.
    """
    deals: list[list[int]] = []
    game = Game(_recording_class(STATE_CLASSES[setup.game], deals), setup.seats, setup.options)
    match = Match(game, setup.seed, policy=FaultPolicy(max_faults=0))
    codec = codec_for(game)
    settings = game_settings(game)
    encoder = RequestEncoder(codec, settings, MATCH_ID)
    policy = random.Random(f"golden:{setup.seed}")
    prefix = bot_service_pb2.ChooseActionRequest(
        match_id=MATCH_ID, settings=settings
    ).SerializeToString()
    lines = [
        f"playthrough {setup.game} seats {setup.seats} seed {setup.seed}",
        "options " + json.dumps(setup.options, sort_keys=True),
        f"settings {digest(settings.SerializeToString(deterministic=True))}",
    ]
    state = match.state
    while not match.is_over:
        _flush_deals(deals, lines)
        seat = match.to_act()
        request = encoder.encode(match)
        message = choose_action_request(match, codec, settings, MATCH_ID).SerializeToString()
        if request != message:
            raise AssertionError(f"move {len(match.moves)}: request bytes differ from message")
        if not request.startswith(prefix):
            raise AssertionError(f"move {len(match.moves)}: request does not open with settings")
        views = []
        for viewer in range(setup.seats):
            observation = state.observe(viewer)
            direct = codec.observation_bytes(observation)
            if direct != codec.observation(observation).SerializeToString():
                raise AssertionError(f"move {len(match.moves)}: seat {viewer}'s bytes differ")
            views.append(digest(direct))
        legal = match.legal_actions()
        roll = policy.random()
        elapsed_us = 1_300_000 if roll < 0.03 else policy.randrange(50_000)
        if roll > 0.99:
            log = match.fault(Fault(FaultKind.MALFORMED_RESPONSE, "golden"), elapsed_us)
        else:
            log = match.play(legal[policy.randrange(len(legal))], elapsed_us)
        fault = log.fault.kind.name if log.fault else "-"
        lines.append(
            f"move {log.index} seat {seat} action {log.action} "
            f"{json.dumps(state.describe_action(log.action))} elapsed {elapsed_us} "
            f"fault {fault} request {digest(request[len(prefix) :])} views {' '.join(views)}"
        )
    _flush_deals(deals, lines)
    outcome = match.outcome()
    assert outcome is not None
    lines.append(
        f"end {match.status.name} scores {' '.join(map(str, outcome.scores))} "
        f"ranks {' '.join(map(str, outcome.ranks))}"
    )
    return lines


def recorded_setups(game: str, seats: int) -> list[Setup] | None:
    """The setups (seed and options) a golden file recorded, None if there is no file: a
    replay plays what was recorded, so a game that gains an option keeps its playthroughs
    (only their settings line, which lists every option's value, changes)."""
    path = golden_path(game, seats)
    if not path.exists():
        return None
    found = []
    for block in path.read_text().split("\nplaythrough ")[1:]:
        head, options = block.splitlines()[:2]
        seed = int(head.split()[-1])
        found.append(Setup(game, seats, json.loads(options.removeprefix("options ")), seed))
    return found


def render(game: str, seats: int, *, fresh: bool = False) -> str:
    """The whole golden file of one game and seat count: the recorded setups replayed (or,
    ``fresh``, those ``setups`` chooses today)."""
    state_class = STATE_CLASSES[game]
    header = [
        f"# Golden playthroughs of {state_class.game_type.title} with {seats} seats.",
        "# Recorded by tests/playthroughs.py; replayed by tests/test_golden.py. Do not edit.",
    ]
    chosen = None if fresh else recorded_setups(game, seats)
    body: list[str] = []
    for setup in chosen if chosen is not None else setups(state_class.game_type, seats):
        body.extend(play(setup))
        body.append("")
    return "\n".join([*header, "", *body])


def main() -> None:
    """Record every golden file again (or only the games named on the command line), with
    the recorded seeds and options; ``--fresh`` chooses them again."""
    fresh = "--fresh" in sys.argv[1:]
    wanted = set(sys.argv[1:]) - {"--fresh"}
    for game, seats in all_files():
        if not wanted or game in wanted:
            path = golden_path(game, seats)
            path.write_text(render(game, seats, fresh=fresh))
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
