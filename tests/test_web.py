"""The web UI over HTTP, as curl and API clients see it, against a real ``arena serve`` with
real sample bots playing: server-rendered pages, the JSON API against its OpenAPI document,
live events equal to WatchMatch's, refusals as statuses, a busy port as one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import ROOT
from tests.web_arena import LADDER, LINEUP, WebArena, wait_for, web_arena


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebArena]:
    with web_arena(tmp_path_factory.mktemp("web")) as running:
        yield running


def test_pages_hold_their_main_content_without_scripts(arena: WebArena) -> None:
    status, home = arena.get("/")
    assert status == 200 and f'href="/ladders/{LADDER}"' in home
    status, standings = arena.get(f"/ladders/{LADDER}")
    assert status == 200
    for name in arena.bot_ids:
        assert name in standings, f"{name} missing from the standings' HTML"
    for rank in range(1, len(LINEUP) + 1):
        assert f'<td class="num">{rank}</td>' in standings
    bot_id = arena.bot_ids["ann-oh-hell-heuristic"]
    status, bot = arena.get(f"/bots/{bot_id}")
    assert status == 200 and "ann-oh-hell-heuristic" in bot and "<svg" in bot
    assert "by ann" in bot and "passed validation" in bot
    status, matches = arena.get(f"/ladders/{LADDER}/matches")
    assert status == 200 and 'href="/matches/' in matches
    status, mine = arena.get(f"/ladders/{LADDER}/matches?bot={bot_id}")
    assert status == 200 and mine.count('href="/matches/') >= 1
    assert all(name in mine for name in ("ann-oh-hell-heuristic",))
    for path in ("/live", "/operator"):
        assert arena.get(path)[0] == 200, path
    assert "decisions per second" in arena.get("/operator")[1]


def test_standings_are_searched_and_paged_by_the_server(arena: WebArena) -> None:
    whole = arena.json(f"/api/v1/ladders/{LADDER}/standings")
    assert whole["total"] == whole["found"] == len(LINEUP)
    positions = {s["bot"]["name"]: s["position"] for s in whole["standings"]}
    found = arena.json(f"/api/v1/ladders/{LADDER}/standings?q=HEURISTIC")
    assert found["found"] == 1 and found["total"] == len(LINEUP)
    (line,) = found["standings"]
    assert line["position"] == positions["ann-oh-hell-heuristic"], "positions stay the ladder's"
    page = arena.json(f"/api/v1/ladders/{LADDER}/standings?limit=2&offset=1")
    assert [s["position"] for s in page["standings"]] == [2, 3]
    assert arena.json(f"/api/v1/ladders/{LADDER}/standings?q=%25")["found"] == 0, "% is literal"
    status, html = arena.get(f"/ladders/{LADDER}?q=bob")
    assert status == 200 and "bob-random" in html and "cy-random" not in html


def _validator(document: dict[str, Any], path: str) -> Draft202012Validator:
    schema = document["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
    return Draft202012Validator({**schema["schema"], "components": document["components"]})


def test_json_api_answers_match_the_openapi_document(arena: WebArena) -> None:
    document = arena.json("/api/v1/openapi.json")
    assert document["openapi"].startswith("3.1")
    for schema in document["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)
    bot_id = arena.bot_ids["bob-random"]
    listed = arena.json(f"/api/v1/ladders/{LADDER}/matches?phase=finished&page_size=5")
    match_id = listed["matches"][0]["match_id"]
    answers = {
        "/api/v1/games": "/api/v1/games",
        "/api/v1/ladders": "/api/v1/ladders",
        f"/api/v1/ladders/{LADDER}/standings?limit=3": "/api/v1/ladders/{ladder}/standings",
        f"/api/v1/ladders/{LADDER}/matches": "/api/v1/ladders/{ladder}/matches",
        "/api/v1/matches?phase=playing": "/api/v1/matches",
        f"/api/v1/matches/{match_id}": "/api/v1/matches/{match_id}",
        f"/api/v1/bots/{bot_id}": "/api/v1/bots/{bot}",
        "/api/v1/operator": "/api/v1/operator",
    }
    for url, path in answers.items():
        answer = arena.json(url)
        _validator(document, path).validate(answer)
    record = arena.json(f"/api/v1/matches/{match_id}")["record"]
    assert all(seat["endpoint"] == "" for seat in record["seats"]), "no endpoint is public"
    profile = arena.json(f"/api/v1/bots/{bot_id}")
    assert profile["bot"]["endpoint"] == "" and profile["bot"]["name"] == "bob-random"


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/api/v1/ladders/{LADDER}/standings?offset=-1", 400),
        (f"/api/v1/ladders/{LADDER}/standings?limit=abc", 400),
        (f"/api/v1/ladders/{LADDER}/standings?q={'x' * 65}", 400),
        ("/api/v1/matches?phase=sometimes", 400),
        ("/api/v1/ladders/no-such-ladder/standings", 404),
        ("/api/v1/bots/no-such-bot", 404),
        ("/api/v1/matches/no-such-match", 404),
        ("/api/v1/matches/no-such-match/events", 404),
        ("/api/v1/nothing-here", 404),
        ("/ladders/no-such-ladder", 404),
        ("/matches/no-such-match", 404),
    ],
)
def test_refusals_are_http_statuses_with_one_line(arena: WebArena, path: str, status: int) -> None:
    got, body = arena.get(path)
    assert got == status, (path, body[:300])
    if path.startswith("/api/"):
        error = json.loads(body)
        assert error["error"] and "\n" not in error["error"] and error["code"]
    else:
        assert "Traceback" not in body and "<main>" in body


def _sse(url: str) -> list[dict[str, Any]]:
    events = []
    with urllib.request.urlopen(url, timeout=120) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                events.append(json.loads(line.removeprefix("data: ")))
    return events


def test_live_events_are_what_watch_match_sends_a_stranger(arena: WebArena) -> None:
    match_id = wait_for(lambda: arena.live_match(), what="a live match")
    listed = arena.json(f"/api/v1/ladders/{LADDER}/matches?phase=playing&page_size=100")
    live_seats = next(m["seats"] for m in listed["matches"] if m["match_id"] == match_id)
    status, page = arena.get(f"/matches/{match_id}")
    assert status == 200
    if 'data-live="true"' not in page:  # it ended meanwhile: then it is a replay
        assert arena.get(f"/api/v1/matches/{match_id}")[0] == 200, page
    watched: list[pb.WatchMatchResponse] = []
    watcher = threading.Thread(target=lambda: watched.extend(arena.client.watch(match_id)))
    watcher.start()
    events = _sse(f"{arena.url}api/v1/matches/{match_id}/events")
    watcher.join(120)
    moves = [e.move for e in watched if e.HasField("move")]
    assert events[-1]["type"] == "finished" and watched[-1].HasField("finished")
    sent = [e for e in events if e["type"] == "move"]
    assert [(e["index"], e["seat"], e["description"], e["scores"]) for e in sent] == [
        (m.index, m.seat, m.description, list(m.scores)) for m in moves
    ]
    end = events[-1]
    assert set(end) == {"type", "match_id", "status", "status_detail", "outcome", "frames_url"}
    assert end["outcome"]["scores"] == list(watched[-1].finished.outcome.scores)
    status, page = arena.get(f"/matches/{match_id}")
    assert status == 200 and '<div id="table"' in page and "/static/replay/viewer.js" in page
    for seat in live_seats:
        assert f'<a href="/bots/{seat["bot_id"]}">{seat["bot_name"]}</a>' in page
    status, _ = arena.get(f"/api/v1/matches/{match_id}/frames")
    assert status in (200, 501), "frames come from arena.web.replay once it is there"


def test_a_busy_web_port_is_one_line_and_a_failed_start(tmp_path: Path) -> None:
    (tmp_path / "admin").write_text("secret")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--metrics-listen",
                "",
                "--db",
                str(tmp_path / "a.sqlite3"),
                "--admin-token-file",
                str(tmp_path / "admin"),
                "--web-listen",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot serve the web UI on 127.0.0.1:{port}"), done.stderr


def test_a_bot_page_shows_every_version_with_its_figures(arena: WebArena) -> None:
    """UpdateBot to a new version: the page and the JSON list both versions, the new one
    current, the old one replaced with the figures it had. (Last of the module's tests on the
    shared arena: cy is validated again and leaves matchmaking for a moment.)"""
    bot_id = arena.bot_ids["cy-random"]

    def played() -> Any:
        (versions,) = arena.json(f"/api/v1/bots/{bot_id}")["versions"]
        return versions if versions["matches"] > 0 else None

    before = wait_for(played, 180, "a rated match of cy's")
    assert before["version"] == "1.0" and before["current"] is True
    update = pb.UpdateBotRequest(bot_id=bot_id, version="2.0-rc<b>")
    arena.client.call("UpdateBot", update, arena.owner_tokens["cy"])
    profile = arena.json(f"/api/v1/bots/{bot_id}")
    document = arena.json("/api/v1/openapi.json")
    _validator(document, "/api/v1/bots/{bot}").validate(profile)
    new, old = profile["versions"]
    assert (new["version"], new["current"], new["replaced_at_us"]) == ("2.0-rc<b>", True, 0)
    assert (old["version"], old["current"]) == ("1.0", False) and old["replaced_at_us"] > 0
    assert old["ladder_id"] == new["ladder_id"] == before["ladder_id"]
    assert old["matches"] >= before["matches"] > 0
    status, page = arena.get(f"/bots/{bot_id}")
    assert status == 200 and "<h2>Versions</h2>" in page
    assert "2.0-rc<b>" not in page, "a version is user text: escaped"
    rows = page.split('<table class="versions">', 1)[1].split("</table>", 1)[0]
    assert rows.index("<td>2.0-rc&lt;b&gt;</td>") < rows.index("<td>1.0</td>")
    current, replaced = rows.split("<tr")[2:4]  # after the header row
    assert f'href="/ladders/{LADDER}"' in current and "<td>current</td>" in current
    assert f'<td class="num">{old["matches"]}</td>' in replaced
    assert f'<td class="num">{old["first_places"]}</td>' in replaced
    assert f'<td class="num strong">{old["rating"]:.2f}</td>' in replaced
    assert "replaced <time" in replaced
