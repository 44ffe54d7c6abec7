"""A real Prometheus scrapes a running ``arena serve`` during a short ladder, and PromQL over
the scraped data agrees with the match counts the arena itself reports."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from arena.local_bots import free_port
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import random_bots
from tests.test_deploy import ALERTS, require_tool, running_prometheus
from tests.test_ladder_e2e import (
    ADMIN,
    arena_service,
    quick_ladder,
    register_all,
    wait_active,
    wait_for,
)


def queue_empty(db: Path) -> bool:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row = connection.execute(
            "SELECT COUNT(*) FROM matches WHERE status IN ('waiting', 'playing')"
        ).fetchone()
    return bool(row[0] == 0)


def test_prometheus_counts_the_matches_the_arena_reports(tmp_path: Path) -> None:
    require_tool("prometheus")
    metrics_port = free_port()
    with (
        arena_service(tmp_path, "--metrics-listen", f"127.0.0.1:{metrics_port}") as service,
        random_bots(3, seed=21) as bots,
    ):
        client = service.client(ADMIN)
        owner = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(
                owner="carol", name="r0", game="oh-hell", endpoint=bots[0].address
            ),
        )
        ids = [owner.bot.bot_id, *register_all(client, bots[1:], owner="dave")]
        wait_active(client, ids)
        client.call("CreateLadder", quick_ladder("scraped"))
        with running_prometheus(
            [f"127.0.0.1:{metrics_port}"], tmp_path, rule_files=[ALERTS]
        ) as prometheus:
            wait_for(
                lambda: (
                    client.call(
                        "GetStandings", pb.GetStandingsRequest(ladder="scraped")
                    ).ladder.matches_finished
                    >= 4
                ),
                timeout_s=120,
            )
            # Stop matchmaking (pause a bot: no ladder can be filled), let the queue drain.
            client.call(
                "SetBotState",
                pb.SetBotStateRequest(bot_id=ids[0], state=pb.BOT_STATE_PAUSED),
                token=owner.owner_token,
            )
            wait_for(lambda: queue_empty(service.db), timeout_s=120, what="queue drained")
            ladder = client.call("GetStandings", pb.GetStandingsRequest(ladder="scraped")).ladder
            validation = 2 * len(ids)
            prometheus.wait_for_value('up{job="cardarena"}', 1)
            prometheus.wait_for_value(
                'sum(cardarena_rating_updates_total{game="oh-hell"})', ladder.matches_finished
            )
            prometheus.wait_for_value(
                "sum(cardarena_matches_finished_total)", ladder.matches_finished + validation
            )
            prometheus.wait_for_value(
                'sum(cardarena_validations_total{result="passed"})', validation
            )
            prometheus.wait_for_value("sum(cardarena_matches_in_flight)", 0)
            assert prometheus.query("sum(cardarena_decisions_total) > 0")
