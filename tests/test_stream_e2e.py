"""Bots over streams in the arena service (issue 20), all real processes: a bot that serves
Play, a bot that dials out with ConnectBot, and a unary one register, validate and play a
ladder together; standings say whether the outbound bot is connected; ConnectBot refuses a
wrong token, a dialled bot and a second stream for one bot."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import grpc
import psycopg
import pytest

from arena.client import ArenaClient
from arena.local_bots import stop_bot
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.arena.v1 import arena_service_pb2_grpc
from cardarena.bot.v1 import bot_service_pb2
from tests.helpers import ROOT, random_bots
from tests.stores import postgres_available, postgres_url
from tests.test_ladder_e2e import (
    ADMIN,
    arena_service,
    bot_state,
    finished,
    quick_ladder,
    wait_active,
    wait_for,
)
from tests.test_scale_out import worker


@contextmanager
def outbound_bot(arena: str, bot_id: str, token: str) -> Iterator[subprocess.Popen[str]]:
    """A sample random bot dialling ``arena`` as ``bot_id`` (``--connect``)."""
    command = [sys.executable, "-m", "sample_bots", "random", "--seed", "3", "--connect", arena]
    command += ["--bot-id", bot_id, "--token", token]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        yield process
    finally:
        stop_bot(process)


def register(client: ArenaClient, owner: str, **fields: object) -> tuple[str, str]:
    request = pb.RegisterBotRequest(owner=owner, name="b", game="oh-hell", version="1", **fields)  # type: ignore[arg-type]
    response = client.call("RegisterBot", request)
    return response.bot.bot_id, response.owner_token


def standing_of(client: ArenaClient, ladder: str, bot_id: str) -> pb.Standing:
    response: pb.GetStandingsResponse = client.call(
        "GetStandings", pb.GetStandingsRequest(ladder=ladder)
    )
    return next(s for s in response.standings if s.bot.bot_id == bot_id)


def connect_status(arena: str, bot_id: str, token: str) -> grpc.StatusCode:
    """Open a ConnectBot stream, say hello, and return how the arena ends it (OK: it kept it
    open until we hung up)."""
    with grpc.insecure_channel(arena) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
        hello = pb.ConnectBotRequest(
            messages=[bot_service_pb2.BotMessage(hello=bot_service_pb2.Hello(bot_id=bot_id))]
        )
        call = stub.ConnectBot(
            iter([hello]), metadata=(("authorization", f"Bearer {token}"),), timeout=3
        )
        try:
            for _ in call:
                pass
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def test_stream_and_outbound_bots_validate_and_play_a_ladder(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service, random_bots(2, seed=9) as bots:
        client = service.client()
        unary_id, _ = register(client, "una", endpoint=bots[0].address)
        stream_id, stream_token = register(
            client, "stre", endpoint=bots[1].address, transport=pb.BOT_TRANSPORT_STREAM
        )
        out_id, token = register(client, "outb", transport=pb.BOT_TRANSPORT_OUTBOUND)
        profile = client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=out_id))
        assert profile.bot.transport == pb.BOT_TRANSPORT_OUTBOUND and profile.bot.endpoint == ""
        with outbound_bot(service.address, out_id, token) as dialling:
            wait_active(client, [unary_id, stream_id, out_id])
            admin = service.client(ADMIN)
            admin.call("CreateLadder", quick_ladder("mixed"))
            wait_for(lambda: finished(client, "mixed") >= 2, what="two ladder matches")
            line = standing_of(client, "mixed", out_id)
            assert line.bot.connected and line.matches >= 1
            assert standing_of(client, "mixed", stream_id).bot.transport == pb.BOT_TRANSPORT_STREAM
            # one stream per bot; only the owner's token; only outbound bots connect
            status = partial(connect_status, service.address)
            assert status(out_id, token) == grpc.StatusCode.ALREADY_EXISTS
            assert status(out_id, "cao_wrong") == grpc.StatusCode.PERMISSION_DENIED
            assert status(stream_id, stream_token) == grpc.StatusCode.FAILED_PRECONDITION
            assert dialling.poll() is None  # the first stream is unaffected
        wait_for(
            lambda: not standing_of(client, "mixed", out_id).bot.connected,
            what="the outbound bot shown disconnected",
        )


def test_an_outbound_registration_with_an_endpoint_is_refused(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service:
        with pytest.raises(grpc.RpcError) as refused:
            register(
                service.client(), "x", endpoint="127.0.0.1:1", transport=pb.BOT_TRANSPORT_OUTBOUND
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "no endpoint" in str(refused.value.details())


@pytest.mark.skipif(not postgres_available(), reason="no PostgreSQL server")
def test_an_outbound_bot_connected_to_one_process_plays_matches_another_referees(
    tmp_path: Path,
) -> None:
    """Process A only serves the API (the bot dials it); process B referees every match, so
    each decision of the outbound bot goes B → RelayBot → A → the bot's stream → back."""
    with (
        postgres_url() as url,
        random_bots(2, seed=21) as bots,
        worker(url, "alpha", tmp_path, "--role", "api") as alpha,
        worker(url, "beta", tmp_path) as beta,
    ):
        client = ArenaClient(alpha.address, timeout_s=10)
        ids = [register(client, f"u{i}", endpoint=bot.address)[0] for i, bot in enumerate(bots)]
        out_id, token = register(client, "outb", transport=pb.BOT_TRANSPORT_OUTBOUND)
        with outbound_bot(alpha.address, out_id, token):
            wait_active(client, [*ids, out_id])  # validated by beta, through alpha
            ArenaClient(beta.address, ADMIN, timeout_s=10).call(
                "CreateLadder", quick_ladder("relayed")
            )
            wait_for(lambda: finished(client, "relayed") >= 2, timeout_s=120, what="matches")
            seen_from_beta = ArenaClient(beta.address, timeout_s=10)
            line = standing_of(seen_from_beta, "relayed", out_id)
            assert line.bot.connected  # the store says where it is: every process sees it
            assert line.matches >= 1 and line.fault_rate == 0
        with psycopg.connect(url) as connection:
            referees = connection.execute(
                "SELECT DISTINCT claimed_by FROM matches WHERE status = 'finished'"
            ).fetchall()
        assert referees == [("beta",)]


def test_the_health_sweep_pulls_a_disconnected_outbound_bot_and_restores_it(
    tmp_path: Path,
) -> None:
    """Healthy while its stream is open and it answers on it; pulled when it goes away;
    back once it dials in again."""
    with arena_service(tmp_path, "--health-interval-s", "0.5") as service:
        client = service.client()
        out_id, token = register(client, "hl", transport=pb.BOT_TRANSPORT_OUTBOUND)
        state = partial(bot_state, client, out_id)
        with outbound_bot(service.address, out_id, token):
            wait_for(lambda: state() == pb.BOT_STATE_ACTIVE, what="validated over its stream")
        wait_for(lambda: state() == pb.BOT_STATE_UNHEALTHY, timeout_s=90, what="pulled")
        with outbound_bot(service.address, out_id, token):
            wait_for(lambda: state() == pb.BOT_STATE_ACTIVE, timeout_s=90, what="restored")
