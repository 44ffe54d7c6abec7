"""Metrics: conventions, pre-initialised labels, and the runner's counts over real gRPC."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from arena.metrics import Metrics
from referee.games.registry import game_types, make_game
from referee.runner import MatchSpec, play_match
from tests.helpers import misbehaving_bot, random_bots, run_on_bridge


def test_names_follow_prometheus_conventions_and_labels_start_at_zero() -> None:
    registry = CollectorRegistry()
    Metrics([g.name for g in game_types()], registry)
    text = generate_latest(registry).decode()
    for family in registry.collect():
        assert family.name.startswith("cardarena_")
        if family.type == "counter":
            assert any(s.name.endswith("_total") for s in family.samples)
        for sample in family.samples:
            assert not {"bot", "owner", "match", "match_id", "bot_id"} & set(sample.labels)
    for game in game_types():
        assert (
            f'cardarena_matches_finished_total{{game="{game.name}",outcome="forfeited"}} 0.0'
            in text
        )
    assert 'cardarena_bot_faults_total{game="oh-hell",kind="timeout"} 0.0' in text


def test_runner_counts_matches_decisions_and_faults() -> None:
    registry = CollectorRegistry()
    metrics = Metrics(["oh-hell"], registry)
    game = make_game("oh-hell", 3, {"deal_style": "short_low"})
    with misbehaving_bot("illegal", "--after", "2", "--times", "2") as bad, random_bots(2) as good:
        spec = MatchSpec(game, [bad.address, *(b.address for b in good)], seed=4)
        record = run_on_bridge(lambda pool: play_match(spec, pool, metrics=metrics))

    def value(name: str, **labels: str) -> float:
        found = registry.get_sample_value(name, labels)
        assert found is not None, name
        return found

    assert value("cardarena_matches_started_total", game="oh-hell") == 1
    assert value("cardarena_matches_finished_total", game="oh-hell", outcome="completed") == 1
    assert value("cardarena_matches_in_flight", game="oh-hell") == 0
    assert value("cardarena_decisions_total", game="oh-hell") == len(record.moves)
    assert value("cardarena_bot_faults_total", game="oh-hell", kind="illegal_action") == 2
    assert (
        value("cardarena_bot_call_duration_seconds_count", game="oh-hell", result="ok")
        == len(record.moves) - 2
    )
    assert value("cardarena_match_duration_seconds_count", game="oh-hell") == 1
