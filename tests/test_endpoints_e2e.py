"""The endpoint guard and one-owner-per-match through a real ``arena serve`` process: what
RegisterBot and UpdateBot refuse, and ladders whose matches never seat an owner twice unless
they allow self-play."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message

from arena.client import ArenaClient
from arena.endpoint_guard import NOT_ALLOWED, SYNTAX
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.helpers import random_bots
from tests.test_ladder_e2e import (
    ADMIN,
    arena_service,
    finished,
    quick_ladder,
    wait_active,
    wait_for,
)


def refused(
    client: ArenaClient, method: str, request: Message, token: str | None = None
) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as error:
        client.call(method, request, token=token)
    return error.value


def test_register_and_update_refuse_guarded_and_shared_endpoints(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service, random_bots(2, seed=3) as bots:
        client = service.client()

        def register(owner: str, endpoint: str, token: str | None = None) -> pb.RegisterBotResponse:
            request = pb.RegisterBotRequest(
                owner=owner, name="b", game="oh-hell", endpoint=endpoint
            )
            return client.call("RegisterBot", request, token=token)  # type: ignore[no-any-return]

        targets = [
            "10.0.0.1:22",
            "169.254.169.254:80",
            "192.168.1.1:80",
            "[fd00::1]:80",
            "100.64.0.1:80",
            "[::ffff:10.0.0.1]:80",
            "[64:ff9b::a9fe:a9fe]:80",
            "0.0.0.0:5432",
            "224.0.0.1:80",
            "nowhere.invalid:443",  # does not resolve: the same words as a private address
            service.address,  # the arena's own API (loopback is allowed in a local arena)
        ]
        for endpoint in targets:
            error = refused(
                client,
                "RegisterBot",
                pb.RegisterBotRequest(owner="eve", name="b", game="oh-hell", endpoint=endpoint),
            )
            assert (error.code(), error.details()) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                NOT_ALLOWED,
            )
        for endpoint in ("unix-abstract:grpc", "unix:/var/run/docker.sock", "vsock:2:50051"):
            error = refused(
                client,
                "RegisterBot",
                pb.RegisterBotRequest(owner="eve", name="b", game="oh-hell", endpoint=endpoint),
            )
            assert (error.code(), error.details()) == (grpc.StatusCode.INVALID_ARGUMENT, SYNTAX)

        register("bob", bots[0].address)
        error = refused(
            client,
            "RegisterBot",
            pb.RegisterBotRequest(
                owner="mallory", name="b", game="oh-hell", endpoint=bots[0].address
            ),
        )
        assert error.code() == grpc.StatusCode.ALREADY_EXISTS, error.details()
        if socket.getaddrinfo("localhost", 1, type=socket.SOCK_STREAM)[0][4][0] == "127.0.0.1":
            port = bots[0].address.rsplit(":", 1)[1]
            error = refused(
                client,
                "RegisterBot",
                pb.RegisterBotRequest(
                    owner="mallory", name="b", game="oh-hell", endpoint=f"localhost:{port}"
                ),
            )
            assert error.code() == grpc.StatusCode.ALREADY_EXISTS, "resolved, the same address"
        mallory = register("mallory", bots[1].address)
        token = mallory.owner_token
        bot_id = mallory.bot.bot_id
        for endpoint, code in (
            (bots[0].address, grpc.StatusCode.ALREADY_EXISTS),
            ("10.0.0.1:22", grpc.StatusCode.INVALID_ARGUMENT),
            ("unix-abstract:x", grpc.StatusCode.INVALID_ARGUMENT),
        ):
            error = refused(
                client, "UpdateBot", pb.UpdateBotRequest(bot_id=bot_id, endpoint=endpoint), token
            )
            assert error.code() == code, (endpoint, error.details())
        wait_active(client, [bot_id])
        moved = client.call(
            "UpdateBot",
            pb.UpdateBotRequest(
                bot_id=bot_id, endpoint=f"localhost:{bots[1].address.rsplit(':', 1)[1]}"
            ),
            token=token,
        ).bot
        assert moved.state == pb.BOT_STATE_VALIDATING, "a new endpoint is validated again"
        wait_active(client, [bot_id])


def owners_per_match(db: Path, ladder: str) -> list[list[str]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT m.seats FROM matches m JOIN ladders l ON l.ladder_id = m.ladder_id "
            "WHERE l.name = ? AND m.status = 'finished'",
            (ladder,),
        ).fetchall()
        owner_of = dict(
            connection.execute(
                "SELECT b.bot_id, o.name FROM bots b JOIN owners o ON o.owner_id = b.owner_id"
            ).fetchall()
        )
    return [[owner_of[bot] for bot in seats.split(",")] for (seats,) in rows]


def test_a_ladder_seats_each_owner_once_unless_it_allows_self_play(tmp_path: Path) -> None:
    """ann has two bots, bob and cat one each. In a 3-seat ladder every match has exactly one
    of ann's; a 4-seat ladder that allows self-play seats both of hers every time (one that
    does not could not fill a match at all)."""
    with arena_service(tmp_path) as service, random_bots(4, seed=11) as bots:
        client = service.client(ADMIN)
        ann = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(owner="ann", name="a0", game="oh-hell", endpoint=bots[0].address),
        )
        ids = [ann.bot.bot_id]
        ids.append(
            client.call(
                "RegisterBot",
                pb.RegisterBotRequest(
                    owner="ann", name="a1", game="oh-hell", endpoint=bots[1].address
                ),
                token=ann.owner_token,
            ).bot.bot_id
        )
        for owner, bot in (("bob", bots[2]), ("cat", bots[3])):
            ids.append(
                client.call(
                    "RegisterBot",
                    pb.RegisterBotRequest(
                        owner=owner, name="b", game="oh-hell", endpoint=bot.address
                    ),
                ).bot.bot_id
            )
        wait_active(client, ids)
        client.call("CreateLadder", quick_ladder("distinct"))
        self_play = quick_ladder("self-play")
        self_play.config.settings.num_seats = 4
        self_play.config.allow_self_play = True
        client.call("CreateLadder", self_play)
        closed = quick_ladder("closed")
        closed.config.settings.num_seats = 4
        client.call("CreateLadder", closed)
        wait_for(lambda: finished(client, "distinct") >= 6, timeout_s=120, what="6 matches")
        wait_for(lambda: finished(client, "self-play") >= 3, timeout_s=120, what="3 matches")
        distinct = owners_per_match(service.db, "distinct")
        assert distinct and all(sorted(o) == sorted(set(o)) for o in distinct), distinct
        assert all(owners.count("ann") == 1 for owners in distinct)
        assert all(owners.count("ann") == 2 for owners in owners_per_match(service.db, "self-play"))
        assert finished(client, "closed") == 0
