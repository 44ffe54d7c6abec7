"""Limits, identity and the operator's controls against a real ``arena serve`` process over
loopback gRPC: a registration flood is refused with retry-after, bounded fields, closed
registration, token rotation, and a banned owner whose bots stop being scheduled."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.client import ArenaClient
from arena.limits import retry_after
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import ROOT, random_bots
from tests.test_ladder_e2e import (
    ADMIN,
    arena_service,
    finished,
    quick_ladder,
    wait_active,
    wait_for,
)


def cli(service_address: str, *args: str, token: str | None = None) -> tuple[int, str]:
    """Run an ``arena`` client command; its exit code and output (one line per message)."""
    command = [sys.executable, "-m", "arena", *args, "--server", service_address]
    if token:
        command += ["--token", token]
    done = subprocess.run(
        command,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    return done.returncode, done.stdout + done.stderr


def refusal(client: ArenaClient, method: str, request: Any, token: str | None = None) -> Any:
    with pytest.raises(grpc.RpcError) as error:
        client.call(method, request, token=token)
    return error.value


_PORTS = itertools.count(20_000)
"""Nothing listens there: each registration its own, since an address has one owner."""


def register(owner: str, name: str = "b", version: str = "1") -> pb.RegisterBotRequest:
    endpoint = f"127.0.0.1:{next(_PORTS)}"
    return pb.RegisterBotRequest(
        owner=owner, name=name, game="oh-hell", endpoint=endpoint, version=version
    )


def owners_in(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM owners").fetchone()[0])


def test_a_registration_flood_is_refused_with_retry_after(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service:  # the default limits: 5 new owners an hour
        anonymous = service.client()
        for index in range(5):
            assert anonymous.call("RegisterBot", register(f"flood{index}")).owner_token
        refused = refusal(anonymous, "RegisterBot", register("flood5"))
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "new owners from your address" in refused.details()
        wait = retry_after(refused.trailing_metadata())
        assert wait is not None and 1 <= wait <= 720, "5/h: one more every 12 minutes"
        assert owners_in(service.db) == 5, "a refused registration leaves nothing"

        code, out = cli(service.address, "register", "--owner", "flood6", "--name", "b",
                        "--game", "oh-hell", "--endpoint", "127.0.0.1:19")  # fmt: skip
        assert code == 2 and "RESOURCE_EXHAUSTED" in out, out
        assert re.search(r"retry after \d+ s", out), out

        # The admin is not limited, and an existing owner still adds bots with its token.
        admin = service.client(ADMIN)
        admin.call("CreateOwner", pb.CreateOwnerRequest(owner="house"))
        token = admin.call("RotateToken", pb.RotateTokenRequest(owner="flood0")).owner_token
        anonymous.call("RegisterBot", register("flood0", "second"), token=token)


def test_a_flood_of_reads_from_one_address_is_refused_but_not_the_admins(tmp_path: Path) -> None:
    with arena_service(tmp_path, "--limit-peer-requests", "5/min") as service:
        anonymous, admin = service.client(), service.client(ADMIN)
        for _ in range(5):
            anonymous.call("ListLadders", pb.ListLaddersRequest())
        refused = refusal(anonymous, "GetStandings", pb.GetStandingsRequest(ladder="x"))
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert retry_after(refused.trailing_metadata()) == 12, "5/min: one more every 12 s"
        with pytest.raises(grpc.RpcError) as watch:
            list(anonymous.watch("m"))
        assert watch.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, "streams count too"
        for _ in range(10):
            admin.call("ListLadders", pb.ListLaddersRequest())
        assert admin.serving(), "the health service is not limited"


def test_every_field_is_bounded_and_errors_quote_a_short_prefix(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service:
        anonymous, admin = service.client(), service.client(ADMIN)
        huge = "v" * 3_000_000
        cases: list[tuple[str, Any, str]] = [
            ("RegisterBot", register("ann", version=huge), "version"),
            ("RegisterBot", register("ann\u202egnp.exe"), "owner"),
            ("RegisterBot", register("ann", name="zero\u200bwidth"), "name"),
            ("RegisterBot", register("ann", name="[bold]x"), "name"),
            ("RegisterBot", register("ann\n"), "owner"),
            ("RegisterBot", register("ann", version="1\x1b[2J"), "version"),
            (
                "RegisterBot",
                pb.RegisterBotRequest(owner="ann", name="b", game="g" * 100_000, endpoint="h:1"),
                "unknown game",
            ),
            (
                "RegisterBot",
                pb.RegisterBotRequest(owner="ann", name="b", game="oh-hell", endpoint="h" * 9999),
                "endpoint",
            ),
            ("UpdateBot", pb.UpdateBotRequest(bot_id="x" * 100_000), "bot_id"),
            ("GetBotProfile", pb.GetBotProfileRequest(bot_id="x" * 100_000), "bot_id"),
            ("GetStandings", pb.GetStandingsRequest(ladder="x" * 100_000), "ladder"),
            ("GetMatchRecord", pb.GetMatchRecordRequest(match_id="x" * 65), "match_id"),
        ]
        for field, value in (("time_bank_ms", 4_294_967_295), ("concurrency", 0)):
            ladder = quick_ladder(f"bad-{field}")
            setattr(ladder.config, field, value)
            cases.append(("CreateLadder", ladder, field))
        option = quick_ladder("bad-option")
        option.config.settings.options["x" * 10_000].string_value = "y"
        cases.append(("CreateLadder", option, "option name"))
        for method, request, words in cases:
            error = refusal(admin if method == "CreateLadder" else anonymous, method, request)
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, error)
            assert words in error.details(), (method, error.details())
            assert len(error.details()) < 250, (method, len(error.details()))
            assert not re.search(r"[\x00-\x1f\u200b\u202e]", error.details()), error.details()
        assert owners_in(service.db) == 0
        assert list(admin.call("ListLadders", pb.ListLaddersRequest()).ladders) == []


def test_closed_registration_and_rotated_or_revoked_tokens(tmp_path: Path) -> None:
    with arena_service(tmp_path, "--registration", "closed") as service:
        anonymous = service.client()
        closed = refusal(anonymous, "RegisterBot", register("ann"))
        assert closed.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "registration is closed" in closed.details()
        refused = refusal(anonymous, "CreateOwner", pb.CreateOwnerRequest(owner="ann"), "nope")
        assert refused.code() == grpc.StatusCode.PERMISSION_DENIED

        code, out = cli(service.address, "create-owner", "ann", token=ADMIN)
        assert code == 0, out
        first = re.search(r"owner token .*: (\S+)", out)
        assert first, out
        token = first[1]
        bot_id = anonymous.call("RegisterBot", register("ann"), token=token).bot.bot_id

        code, out = cli(service.address, "rotate-token", "ann", token=token)
        assert code == 0, out
        rotated = out.strip().splitlines()[-1].strip()
        update = pb.UpdateBotRequest(bot_id=bot_id, version="2")
        stale = refusal(anonymous, "UpdateBot", update, token)
        assert stale.code() == grpc.StatusCode.PERMISSION_DENIED, "the old token stops working"
        anonymous.call("UpdateBot", update, token=rotated)

        admin = service.client(ADMIN)
        admin.call("RevokeToken", pb.RevokeTokenRequest(owner="ann"))
        for dead in (token, rotated):
            error = refusal(anonymous, "RotateToken", pb.RotateTokenRequest(owner="ann"), dead)
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        given = admin.call("RotateToken", pb.RotateTokenRequest(owner="ann")).owner_token
        anonymous.call("UpdateBot", pb.UpdateBotRequest(bot_id=bot_id, version="3"), token=given)


def matches_since(db: Path, since_us: int) -> list[set[str]]:
    """The seats of every ladder match queued after ``since_us``."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT seats FROM matches WHERE kind = 'ladder' AND created_at_us > ?", (since_us,)
        ).fetchall()
    return [set(seats.split(",")) for (seats,) in rows]


def test_a_banned_owners_bots_stop_being_scheduled_and_its_token_is_refused(
    tmp_path: Path,
) -> None:
    with arena_service(tmp_path) as service, random_bots(7, seed=41) as bots:
        anonymous, admin = service.client(), service.client(ADMIN)
        tokens: dict[str, str] = {}
        ids: dict[str, list[str]] = {"ann": [], "bob": []}
        for index, bot in enumerate(bots):
            owner = "ann" if index < 3 else "bob"
            request = pb.RegisterBotRequest(
                owner=owner, name=f"r{index}", game="oh-hell", endpoint=bot.address, version="1"
            )
            response = anonymous.call("RegisterBot", request, token=tokens.get(owner))
            tokens.setdefault(owner, response.owner_token)
            ids[owner].append(response.bot.bot_id)
        wait_active(anonymous, ids["ann"] + ids["bob"])
        ladder = quick_ladder("open")
        ladder.config.allow_self_play = True  # two owners, three seats: each owner's bots meet
        admin.call("CreateLadder", ladder)
        wait_for(lambda: finished(anonymous, "open") >= 3, timeout_s=120, what="3 matches")

        assert any(seats & set(ids["ann"]) for seats in matches_since(service.db, 0))
        held = ids["bob"][3]
        code, out = cli(service.address, "admin", "pause", held, "--reason", "too slow",
                        token=ADMIN)  # fmt: skip
        assert code == 0 and "paused" in out, out
        resume = pb.SetBotStateRequest(bot_id=held, state=pb.BOT_STATE_ACTIVE)
        error = refusal(anonymous, "SetBotState", resume, tokens["bob"])
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION and "too slow" in error.details()

        code, out = cli(service.address, "admin", "ban", "ann", "--reason", "colluding",
                        token=ADMIN)  # fmt: skip
        assert code == 0 and "3 bot(s)" in out, out
        banned_at = time.time_ns() // 1000

        attempts: list[tuple[str, Any]] = [
            ("UpdateBot", pb.UpdateBotRequest(bot_id=ids["ann"][0], version="2")),
            ("SetBotState", pb.SetBotStateRequest(bot_id=ids["ann"][0], state=pb.BOT_STATE_ACTIVE)),
            ("RegisterBot", register("ann", "another")),
            ("RotateToken", pb.RotateTokenRequest(owner="ann")),
        ]
        for method, request in attempts:
            error = refusal(anonymous, method, request, tokens["ann"])
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, (method, error)
            assert "banned by the operator: colluding" in error.details(), error.details()
        for bot_id in ids["ann"]:
            asked = pb.GetBotProfileRequest(bot_id=bot_id)
            bot = anonymous.call("GetBotProfile", asked, token=tokens["ann"]).bot
            assert bot.state == pb.BOT_STATE_PAUSED and "colluding" in bot.state_detail
            public = anonymous.call("GetBotProfile", asked).bot  # the reason is the owner's
            assert (public.state, public.state_detail) == (
                pb.BOT_STATE_PAUSED,
                "held by the operator",
            )

        # The ladder goes on with bob's three free bots, and never again seats the others.
        wait_for(lambda: len(matches_since(service.db, banned_at)) >= 4, timeout_s=120)
        kept_out = {*ids["ann"], held}
        assert all(not seats & kept_out for seats in matches_since(service.db, banned_at))

        code, out = cli(service.address, "admin", "unban", "ann", token=ADMIN)
        assert code == 0 and "3 bot(s)" in out, out
        anonymous.call(
            "SetBotState",
            pb.SetBotStateRequest(bot_id=ids["ann"][0], state=pb.BOT_STATE_ACTIVE),
            token=tokens["ann"],
        )
