"""Matches needed to rank two bots of close strength, plain deals vs duplicate deals.

For each game, a *strong* bot (the game's heuristic sample bot) and a *weak* one, tuned per
game so the strong bot finishes ahead of the weak one in 55-70 % of plain matches, play
in-process through the wire codec (the bots see exactly the protobuf requests a real match
sends them, as in ``benchmarks/winrate.py``). The weak bot is, where the game has one
(``RESTYLED``: Pinochle, Mau-Mau), the heuristic with one deterministic choice made worse, and
the other seats of a 4-seat game hold two more strong bots: the deal is then the only chance in
a match, and duplicate deals take it out. Elsewhere (or with ``--weak noisy``) it is the
heuristic playing a uniformly random legal action with probability ``ε`` (``NOISE``), with two
``ε / 2`` bots in the other seats of a 4-seat game; those random moves fall differently in
every rotation, which no deal controls. Results are rated with ``arena.ratings`` exactly as the
ladder rates them (openskill Plackett-Luce; every seat its own bot), or with ``--tau X`` by the
same model with its additive dynamics ``tau`` set to X (the ladder's is openskill's default,
25/300, which keeps sigma from shrinking for good, so a close pair's confidence hovers instead
of settling): ``--tau 0`` measures the evidence the matches give, by a rating that does not
forget, rather than what the ladder's own rating shows:

- **plain**: every match is a fresh seeded deal with shuffled seats, rated on its own;
- **duplicate**: one seeded deal is replayed once per seat rotation (the ladder's ``plan_set``
  order) and the set is rated from its seat comparisons (``arena.duplicate_scoring``: per
  seat, the bots that held those cards ranked by rank, then score margin; one event a seat);
- **summed** (``--modes``; the ladder's scoring before issue 23): the same sets, rated as one
  event from each bot's summed ranks.

Confidence that the strong bot is better than the weak one is the normal CDF of
``(mu_s - mu_w) / sqrt(sigma_s^2 + sigma_w^2)``. A run's figure is the first match count after
which that confidence is >= 0.95 and stays so to the end of the run. A run ends at
``--max-matches`` or once the confidence has held for as many matches again as it took to
reach (at least ``--hold`` matches), whichever comes first; a run that never settles counts as
``--max-matches`` (shown with a ``>``). Matches are counted as games played, so a duplicate set
of n rotations costs n matches. ``head_to_head`` is the share of plain matches in which the
strong bot finished ahead of the weak one (ties count half).

The rows ``vs random`` keep the older question: the heuristic bot against random bots in every
other seat (confidence: the weakest of its pairwise figures).

    python benchmarks/fairness.py --json fairness.json   # every game, close bots and vs random
    python benchmarks/fairness.py --game king --runs 21
    python benchmarks/fairness.py --quick             # a smoke run for CI
    python benchmarks/fairness.py --game king --no-random --tau 0   # rated without forgetting
    python benchmarks/fairness.py --game mau-mau --seats 2 --mau-mau-weights jack_keep=0
                                  # another weak Mau-Mau bot, two seats
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openskill.models import PlackettLuce

from arena.duplicate_scoring import Rotation, less_luck
from arena.ratings import MODEL, Rating, rate, rate_duplicate, set_ranks
from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2
from referee.codec import MalformedActionError
from referee.codec.common import game_settings
from referee.codec.requests import choose_action_request
from referee.games.api import Game, ranks_from_keys
from referee.games.registry import ENTRIES, codec_for, make_game
from referee.games.registry import GAMES as REGISTERED
from referee.match import Fault, FaultKind, FaultPolicy, Match
from sample_bots.mau_mau_heuristic import Weights as MauMauWeights
from sample_bots.mau_mau_heuristic import make_mau_mau_heuristic_bot
from sample_bots.pinochle_heuristic import Style as PinochleStyle
from sample_bots.pinochle_heuristic import make_pinochle_heuristic_bot
from sample_bots.serve import BOTS

GAMES: dict[str, int] = {entry.name: entry.demo_seats for entry in REGISTERED}
"""Games benchmarked and their seat counts."""

Maker = Callable[[int], Bot]
"""How to make one entrant from a seed."""

Field = dict[str, Maker]
"""The entrants of a benchmark: each bot's name and how to make it."""

NOISE: dict[str, float] = {
    "oh-hell": 0.15,
    "king": 0.15,
    "mau-mau": 0.4,
    "pinochle": 0.02,
    "klaberjass": 0.15,
}
"""The noisy weak bot's ``ε`` per game: how often it plays a random legal action instead of
the heuristic's (measured head-to-head rates in benchmarks/RESULTS.md)."""

RESTYLED: dict[str, Maker] = {
    "pinochle": lambda seed: make_pinochle_heuristic_bot(
        seed, PinochleStyle(best_meld=False, exchange_dix=False)
    ),
    "mau-mau": lambda seed: make_mau_mau_heuristic_bot(seed, MauMauWeights(jack_keep=-200)),
}
"""The strategic weak bot per game: the heuristic with one deterministic choice made worse
(Pinochle: declares its least valuable meld and never takes the dix exchange; Mau-Mau: plays a
Jack at the first turn it may, where the tuned bot keeps it for a turn with nothing else to
play). Its mistakes fall on the same cards in every rotation of a duplicate deal, where a
random move falls anywhere; games not listed use the noisy bot.

Mau-Mau's was ``jack_keep=0`` (Jacks spent as freely as any card) until 2026-12-03. Of the
one-field variants in the 55-70 % band (benchmarks/RESULTS.md, "other Mau-Mau weak bots"),
``jack_keep=-200`` keeps the benchmark's weakness (the wild card) in its most natural form, a
beginner's: it differs from the tuned bot in few choices (about 4 a match), so that the
rotations of a set stay alike and the choices' cost shows; the variants that differ on many
small choices (which card to shed, 11-20 a match) send every rotation's draws apart."""

WEAK_KINDS = ("restyled", "noisy")
"""``--weak``: the restyled bot where a game has one (else the noisy one), or the noisy one."""

CONFIDENCE = 0.95
MODES = (
    "plain",
    "plain-luck",
    "duplicate",
    "duplicate-luck",
    "duplicate-luck-margin",
    "duplicate-margin",
    "duplicate-unsigned",
    "summed",
)
"""``-luck``: scores less each seat's luck (``Played.luck``); ``plain-luck`` ranks a match by
them, ``duplicate-luck`` compares a seat's bots by rank then adjusted margin,
``duplicate-luck-margin`` by adjusted margin alone (``duplicate-margin``: by the margin
alone, no luck taken off); ``duplicate-unsigned``: the ladder's
scoring before the margin followed ``lower_score_wins`` (Mau-Mau's margins counted upside
down)."""
STRONG, WEAK = "strong", "weak"


def noisy(bot: Bot, epsilon: float, seed: int) -> Bot:
    """``bot`` playing a uniformly random legal action with probability ``epsilon``."""
    rng = random.Random(seed)

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        if epsilon and rng.random() < epsilon:
            return rng.choice(request.legal_actions)
        return bot.choose(request)

    return Bot(choose=choose, name=f"{bot.name}-eps{epsilon:g}", version=bot.version)


def noisy_maker(game: str, epsilon: float) -> Maker:
    """Makes the game's heuristic bot playing a random legal action with probability
    ``epsilon`` (its own generator seeded from the bot's seed)."""
    heuristic = BOTS[f"{game}-heuristic"]
    return lambda seed: noisy(heuristic(seed), epsilon, seed + 7)


def weak_kind(game: str, kind: str) -> str:
    """The kind of weak bot ``game`` gets for ``--weak kind``: restyled only where one exists."""
    return "restyled" if kind == "restyled" and game in RESTYLED else "noisy"


def close_field(game: str, seats: int, kind: str = "restyled") -> Field:
    """The close-strength entrants: strong, weak and (4 seats) two in between: the noisy bot
    with ``ε / 2``, or beside a restyled weak bot two more strong ones (deterministic, so
    that the deal stays the only chance in a match)."""
    field: Field = {STRONG: BOTS[f"{game}-heuristic"]}
    if weak_kind(game, kind) == "restyled":
        field[WEAK], middle = RESTYLED[game], field[STRONG]
    else:
        field[WEAK], middle = noisy_maker(game, NOISE[game]), noisy_maker(game, NOISE[game] / 2)
    for i in range(2, seats):
        field[f"middle{i}"] = middle
    return field


def random_field(game: str, seats: int) -> Field:
    """The heuristic bot (as ``strong``) against random bots in every other seat."""
    field: Field = {STRONG: BOTS[f"{game}-heuristic"]}
    for i in range(1, seats):
        field[WEAK if i == 1 else f"random{i}"] = BOTS["random"]
    return field


@dataclass(frozen=True)
class Played:
    """One match played: its rotation (as the ladder rates it), its moves and each seat's luck
    (the game's ``luck`` hook, zeros where a game has none)."""

    rotation: Rotation
    actions: tuple[int, ...]
    luck: tuple[float, ...]


CACHE: dict[str, tuple[list[int], list[float], list[int]]] = {}
"""Matches already played, by deal, seats and bot seed (``--cache``): every mode and a later
run reuse them, so the modes differ only in scoring."""
CACHE_TAG = ["restyled"]
"""Part of every cache key: the ``--weak`` kind and ``--mau-mau-weights`` (its bots have the
same names), or ``vs-random``."""


def play(game: Game, seed: int, seats: Sequence[str], field: Field, bot_seed: int) -> Played:
    """One match in-process through the codec: each seat's bot, rank and score, the moves and
    each seat's luck."""
    key = f"{game.type.name}:{CACHE_TAG[0]}:{seed}:{','.join(seats)}:{bot_seed}"
    if key not in CACHE:
        CACHE[key] = _play(game, seed, seats, field, bot_seed)
    ranks, scores, actions = CACHE[key]
    entry = ENTRIES[game.type.name]
    luck = entry.luck(game, seed, actions) if entry.luck else (0.0,) * len(seats)
    lower = game.new_state(0).lower_score_wins()
    rotation = Rotation(tuple(seats), tuple(ranks), tuple(scores), lower_score_wins=lower)
    return Played(rotation, tuple(actions), luck)


def _play(
    game: Game, seed: int, seats: Sequence[str], field: Field, bot_seed: int
) -> tuple[list[int], list[float], list[int]]:
    codec = codec_for(game)
    settings = game_settings(game)
    players = [field[name](bot_seed + seat) for seat, name in enumerate(seats)]
    match = Match(game, seed, policy=FaultPolicy(max_faults=0))
    while not match.is_over:
        request = choose_action_request(match, codec, settings, "fairness")
        answer = players[match.to_act()].choose(request)
        try:
            match.play(codec.decode_action(answer), 0)
        except MalformedActionError as error:
            match.fault(Fault(FaultKind.MALFORMED_RESPONSE, str(error)), 0)
    outcome = match.outcome()
    if outcome is None:  # voided at the referee's move limit: the field can loop forever
        raise RuntimeError(f"{game.type.name} deal {seed}, seats {seats}: {match.status_detail}")
    actions = [move.action for move in match.moves]
    return list(outcome.ranks), [float(s) for s in outcome.scores], actions


def luck_adjusted(played: Played, margin_only: bool = False) -> Rotation:
    """The rotation with each seat's score less its luck (and, ``margin_only``, every rank
    equal, so that the adjusted margin alone orders the seat)."""
    rotation = less_luck(played.rotation, played.luck)
    return replace(rotation, ranks=(1,) * len(rotation.seats)) if margin_only else rotation


def adjusted_ranks(played: Played) -> dict[str, int]:
    """A plain match's bots ranked by their luck-adjusted scores."""
    rotation = luck_adjusted(played)
    sign = -1 if rotation.lower_score_wins else 1
    keys = [sign * score for score in rotation.scores]
    return dict(zip(rotation.seats, ranks_from_keys(keys), strict=True))


def confidence(ratings: dict[str, Rating], against: Sequence[str]) -> float:
    """P(strong better than each of ``against``), the weakest pairwise normal-CDF figure."""
    hero = ratings[STRONG]
    worst = 1.0
    for bot in against:
        other = ratings[bot]
        z = (hero.mu - other.mu) / math.sqrt(hero.sigma**2 + other.sigma**2)
        worst = min(worst, 0.5 * (1.0 + math.erf(z / math.sqrt(2.0))))
    return worst


def ahead(rotation: Rotation) -> float:
    """1 if the strong bot finished ahead of the weak one, 0.5 on a tie, else 0."""
    rank = dict(zip(rotation.seats, rotation.ranks, strict=True))
    return 1.0 if rank[STRONG] < rank[WEAK] else 0.5 if rank[STRONG] == rank[WEAK] else 0.0


def rate_mode(
    ratings: dict[str, Rating],
    results: Sequence[Played],
    mode: str,
    model: PlackettLuce = MODEL,
) -> dict[str, Rating]:
    """New ratings after one match (plain modes) or one duplicate set, scored as ``mode`` and
    rated by ``model`` (the ladder's unless ``--tau``)."""
    rotations = [result.rotation for result in results]
    dup = partial(rate_duplicate, model=model)
    if mode == "plain":
        first = rotations[0]
        return rate(ratings, dict(zip(first.seats, first.ranks, strict=True)), model=model)
    if mode == "plain-luck":
        return rate(ratings, adjusted_ranks(results[0]), model=model)
    if mode == "duplicate":
        return dup(ratings, rotations)
    if mode == "duplicate-unsigned":
        return dup(ratings, [replace(r, lower_score_wins=False) for r in rotations])
    if mode == "duplicate-luck":
        return dup(ratings, [luck_adjusted(r) for r in results])
    if mode == "duplicate-margin":
        return dup(ratings, [replace(r, ranks=(1,) * len(r.seats)) for r in rotations])
    if mode == "duplicate-luck-margin":
        return dup(ratings, [luck_adjusted(r, margin_only=True) for r in results])
    per_match = [dict(zip(r.seats, r.ranks, strict=True)) for r in rotations]
    return rate(ratings, set_ranks(per_match), model=model)


def matches_to_rank(
    game: Game,
    field: Field,
    against: Sequence[str],
    run_seed: int,
    mode: str,
    max_matches: int,
    hold: int,
    model: PlackettLuce = MODEL,
) -> tuple[int, bool, list[float]]:
    """Matches after which the strong bot stays ranked above ``against`` at 95 % (rated by
    ``model``); settled?; and the head-to-head result of every match played."""
    seats = game.num_seats
    bots = list(field)
    ratings = {bot: Rating() for bot in bots}
    rng = random.Random(run_seed)
    played = 0
    reached: int | None = None
    duels: list[float] = []
    while played < max_matches:
        order = list(bots)
        rng.shuffle(order)
        deal = rng.getrandbits(48)
        rotations = range(1) if mode.startswith("plain") else range(seats)
        results = [
            play(
                game,
                deal,
                [order[(i + shift) % seats] for i in range(seats)],
                field,
                deal + shift * 97,
            )
            for shift in rotations
        ]
        played += len(results)
        duels.extend(ahead(result.rotation) for result in results)
        ratings.update(rate_mode(ratings, results, mode, model))
        if confidence(ratings, against) >= CONFIDENCE:
            if reached is None:
                reached = played
            if played - reached >= max(hold, reached):
                return reached, True, duels
        else:
            reached = None
    settled = reached is not None
    return (reached if reached is not None else max_matches), settled, duels


def run(
    game_name: str,
    seats: int,
    field: Field,
    against: Sequence[str],
    modes: Sequence[str],
    runs: int,
    max_matches: int,
    hold: int,
    seed: int,
    model: PlackettLuce = MODEL,
) -> dict[str, Any]:
    """Median matches to rank, per mode, over ``runs`` seeds (rated by ``model``), and the
    head-to-head rate."""
    # Both modes play the options a duplicate ladder takes (Mau-Mau: deal-seeded reshuffles),
    # so the two differ only in how the deals are used.
    game = make_game(game_name, seats, ENTRIES[game_name].duplicate_options)
    row: dict[str, Any] = {"game": f"{game_name} {seats}p"}
    started = time.process_time()
    for mode in modes:
        results = [
            matches_to_rank(
                game, field, against, seed * 1_000_003 + r, mode, max_matches, hold, model
            )
            for r in range(runs)
        ]
        counts = [count for count, _, _ in results]
        print(f"  {game_name} {mode}: {counts}", file=sys.stderr, flush=True)
        row[mode] = statistics.median(counts)
        row[f"{mode}_runs"] = counts
        row[f"{mode}_unsettled"] = sum(1 for _, settled, _ in results if not settled)
        if mode == "plain":
            duels = [duel for _, _, played in results for duel in played]
            row["head_to_head"] = round(sum(duels) / len(duels), 3)
            row["head_to_head_matches"] = len(duels)
    if "plain" in modes:
        for mode in modes:
            if mode != "plain":
                row[f"{mode}_over_plain"] = round(row[mode] / row["plain"], 3)
    row["cpu_s"] = round(time.process_time() - started, 1)
    return row


def measure_head_to_head(
    game_name: str, seats: int, matches: int, seed: int, kind: str = "restyled"
) -> float:
    """The strong bot's head-to-head rate against the weak one over ``matches`` plain matches
    (for tuning ``NOISE`` and ``RESTYLED``)."""
    game = make_game(game_name, seats)
    field = close_field(game_name, seats, kind)
    rng = random.Random(seed)
    total = 0.0
    for _ in range(matches):
        order = list(field)
        rng.shuffle(order)
        deal = rng.getrandbits(48)
        total += ahead(play(game, deal, order, field, deal).rotation)
    return total / matches


def mau_mau_weights(spec: str) -> MauMauWeights:
    """``Weights`` from ``"jack_keep=0,cover=-100"`` (``--mau-mau-weights``)."""
    fields = dict(item.split("=", 1) for item in spec.split(",") if item)
    return replace(MauMauWeights(), **{name: float(value) for name, value in fields.items()})


def shown(row: dict[str, Any], mode: str, runs: int) -> str:
    """A mode's median, marked ``>`` when most runs never settled."""
    mark = ">" if row[f"{mode}_unsettled"] * 2 > runs else ""
    return f"{mark}{row[mode]:g}"


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="game name (repeatable); default all")
    parser.add_argument("--runs", type=int, default=21, help="independent seeds per figure")
    parser.add_argument("--max-matches", type=int, default=800)
    parser.add_argument("--hold", type=int, default=20, help="least matches the rank must hold")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--modes", default="plain,duplicate", help=f"comma-separated, of {', '.join(MODES)}"
    )
    parser.add_argument(
        "--weak",
        choices=WEAK_KINDS,
        default="restyled",
        help="the close weak bot: restyled (a worse deterministic choice, where the game has "
        "one; else noisy) or noisy (the heuristic playing a random action with probability ε)",
    )
    parser.add_argument(
        "--seats", type=int, help="play every game at this many seats (default: its demo seats)"
    )
    parser.add_argument(
        "--mau-mau-weights",
        metavar="FIELD=VALUE,...",
        help="the restyled Mau-Mau weak bot: the heuristic with these Weights fields instead",
    )
    parser.add_argument("--no-random", action="store_true", help="skip the vs-random rows")
    parser.add_argument("--no-close", action="store_true", help="skip the close-bot rows")
    parser.add_argument(
        "--calibrate", type=int, metavar="N", help="only measure head-to-head over N matches"
    )
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (CI)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--cache", type=Path, help="matches played, read first and written after each figure"
    )
    parser.add_argument(
        "--tau",
        type=float,
        help="rate with openskill's PlackettLuce(tau=X) instead of the ladder's rating (tau "
        f"{MODEL.tau:g}); 0: a rating that does not forget",
    )
    args = parser.parse_args()
    CACHE_TAG[0] = args.weak
    if args.mau_mau_weights:
        weights = mau_mau_weights(args.mau_mau_weights)
        RESTYLED["mau-mau"] = partial(make_mau_mau_heuristic_bot, weights=weights)
        CACHE_TAG[0] += f"/{args.mau_mau_weights}"
    if args.cache and args.cache.exists():
        CACHE.update(json.loads(args.cache.read_text()))
    modes = [mode for mode in args.modes.split(",") if mode]
    if set(modes) - set(MODES):
        parser.error(f"--modes: unknown {sorted(set(modes) - set(MODES))}")
    if args.quick:
        args.runs, args.max_matches, args.hold = 1, 8, 2
        args.game = args.game or ["king", "klaberjass"]
    games = {g: args.seats or n for g, n in GAMES.items() if not args.game or g in args.game}
    if args.calibrate:
        for game_name, seats in games.items():
            rate_ = measure_head_to_head(game_name, seats, args.calibrate, args.seed, args.weak)
            weak = weak_kind(game_name, args.weak)
            print(f"{game_name} {seats}p {weak}: head-to-head {rate_:.3f}")
        return
    model = MODEL if args.tau is None else PlackettLuce(tau=args.tau)
    rating = "ladder" if args.tau is None else f"PlackettLuce(tau={args.tau:g})"
    result: dict[str, Any] = {"rating": rating, "tau": model.tau, "games": {}, "vs_random": {}}
    print(
        f"{'game':22} {'h2h':>6} "
        + " ".join(f"{mode:>10}" for mode in modes)
        + " "
        + " ".join(f"{mode + '/plain':>15}" for mode in modes if mode != "plain")
    )
    sections: list[tuple[str, Callable[[str, int], Field], str]] = []
    if not args.no_close:
        sections.append(("games", partial(close_field, kind=args.weak), "close"))
    if not args.no_random:
        sections.append(("vs_random", random_field, "vs random"))
    close_tag = CACHE_TAG[0]
    for key, make_field, label in sections:
        # A 2-seat random field has the close field's bot names: its matches are cached apart.
        CACHE_TAG[0] = close_tag if key == "games" else "vs-random"
        for game_name, seats in games.items():
            field = make_field(game_name, seats)
            against = [WEAK] if key == "games" else [b for b in field if b != STRONG]
            row = run(
                game_name,
                seats,
                field,
                against,
                modes,
                args.runs,
                args.max_matches,
                args.hold,
                args.seed,
                model,
            )
            result[key][game_name] = {
                "plain": row.get("plain"),
                "duplicate": row.get("duplicate"),
                "duplicate_over_plain": row.get("duplicate_over_plain"),
                "head_to_head": row.get("head_to_head"),
                "weak": weak_kind(game_name, args.weak) if key == "games" else "random",
                "detail": row,
            }
            print(
                f"{row['game'] + ' ' + label:22} {row.get('head_to_head', 0):6.3f} "
                + " ".join(f"{shown(row, mode, args.runs):>10}" for mode in modes)
                + " "
                + " ".join(
                    f"{row[mode + '_over_plain']:15.2f}"
                    for mode in modes
                    if mode != "plain" and "plain" in modes
                )
                + f"  ({row['cpu_s']} cpu s)",
                flush=True,
            )
            if args.json:
                args.json.write_text(json.dumps(result, indent=2))
            if args.cache:
                args.cache.write_text(json.dumps(CACHE))
    print(
        f"median matches until P(strong > weak) >= {CONFIDENCE} for good, over {args.runs} "
        f"seeds; cap {args.max_matches}; rated by {rating} (tau {model.tau:g})"
    )


if __name__ == "__main__":
    main()
