"""The web UI keeps the rules of the gRPC API, through a real ``arena serve``: the per-address
limit counts its requests, and the duplicate-deal secrecy holds:
while any rotation of a deal is unfinished, no other rotation's record, replay frames, live
events or live table can be read over HTTP, its page says why, and listings show no rank or
score; once the whole set has finished, its replay can be read."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.helpers import random_bots
from tests.test_duplicate_secrecy import deals, others_unfinished
from tests.test_ladder_e2e import ADMIN, arena_service, quick_ladder, register_all, wait_active

WITHHELD_PATHS = ("", "/frames", "/events", "/live")
"""The API paths of one match that must refuse (409) while its deal is unfinished."""


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return int(answer.status), answer.read(200_000).decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def test_no_rotation_is_shown_on_the_web_until_its_whole_deal_has_finished(
    tmp_path: Path,
) -> None:
    with (
        arena_service(tmp_path, "--web-listen", "127.0.0.1:0") as service,
        random_bots(3, seed=43) as bots,
    ):
        assert service.process.process.stdout is not None
        web = service.process.process.stdout.readline().split()[1].rstrip("/")
        client = service.client()
        ids = register_all(client, bots)
        wait_active(client, ids)
        client.call("CreateLadder", quick_ladder("dup", duplicate=True), token=ADMIN)
        checked: set[str] = set()
        deadline = time.monotonic() + 180
        while not {"finished", "playing", "page", "listing"} <= checked:
            assert time.monotonic() < deadline, f"only saw {checked} while rotations ran"
            for rotations in deals(service.db).values():
                for match_id, status in rotations.items():
                    if status not in ("finished", "playing"):
                        continue
                    for path in WITHHELD_PATHS if status == "finished" else WITHHELD_PATHS[2:]:
                        code, body = get(f"{web}/api/v1/matches/{match_id}{path}")
                        if others_unfinished(service.db, match_id):
                            assert code == 409, (path, code, body[:300])
                            assert "withheld" in json.loads(body)["error"]
                            checked.add(status)
                    if status == "finished":
                        code, page = get(f"{web}/matches/{match_id}")
                        if others_unfinished(service.db, match_id):
                            assert code == 200 and "withheld" in page
                            assert 'id="table"' not in page, "no viewer for a withheld record"
                            checked.add("page")
                        _, body = get(f"{web}/api/v1/ladders/dup/matches?phase=finished")
                        listed = [
                            m for m in json.loads(body)["matches"] if m["match_id"] == match_id
                        ]
                        if listed and others_unfinished(service.db, match_id):
                            assert listed[0]["withheld"]
                            assert all(s["rank"] == s["score"] == 0 for s in listed[0]["seats"])
                            checked.add("listing")
            time.sleep(0.05)
        while True:
            complete = [
                m
                for d in deals(service.db).values()
                if len(d) == 3 and all(s == "finished" for s in d.values())
                for m in d
            ]
            if complete:
                break
            assert time.monotonic() < deadline, "no duplicate set finished"
            time.sleep(0.2)
        code, body = get(f"{web}/api/v1/matches/{complete[0]}")
        assert code == 200 and json.loads(body)["record"]["match_id"] == complete[0]
        code, page = get(f"{web}/matches/{complete[0]}")
        assert code == 200 and 'id="table"' in page


def test_web_requests_count_against_the_api_limit_of_their_address(tmp_path: Path) -> None:
    with arena_service(
        tmp_path, "--web-listen", "127.0.0.1:0", "--limit-peer-requests", "5/min"
    ) as service:
        assert service.process.process.stdout is not None
        web = service.process.process.stdout.readline().split()[1].rstrip("/")
        answers = [get(f"{web}/api/v1/ladders")[0] for _ in range(8)]
        assert answers[0] == 200 and 429 in answers, answers
        code, body = get(f"{web}/api/v1/games")
        assert code == 429 and "too many calls from your address" in json.loads(body)["error"]
        assert get(f"{web}/static/style.css")[0] == 200, "static files are not counted"
