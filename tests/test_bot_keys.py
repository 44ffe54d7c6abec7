"""Bot keys and changing a bot's transport (issue 20).

A bot key opens its one bot's ConnectBot stream and nothing else; an owner turns a served bot
into one that dials out (and back) with UpdateBot. The store on both backends, the endpoint
rule as a pure function, and the whole path with a real arena and real bot processes.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import grpc
import pytest

from arena.bot_transport import OUTBOUND, OUTBOUND_UNNAMED, STREAM, updated_endpoint
from arena.client import ArenaClient
from arena.local_bots import stop_bot
from arena.store.bot_keys import BOT_KEY_PREFIX
from arena.store.repository import Store, StoreError
from cardarena.arena.v1 import arena_service_pb2 as pb
from netkit.tls import ClientTls
from tests.certs import make_certs
from tests.helpers import ROOT, random_bots
from tests.test_ladder_e2e import arena_service, wait_active
from tests.test_stream_e2e import connect_status, outbound_bot, register

UNARY, STREAMED, DIALS_OUT = (
    pb.BOT_TRANSPORT_UNARY,
    pb.BOT_TRANSPORT_STREAM,
    pb.BOT_TRANSPORT_OUTBOUND,
)
KEEP = pb.BOT_TRANSPORT_UNSPECIFIED


@pytest.mark.parametrize(
    ("current", "transport", "endpoint", "stored"),
    [
        ("h:1", KEEP, "", None),  # nothing asked
        ("h:1", KEEP, "h:2", "h:2"),  # a unary bot stays unary
        (STREAM + "h:1", KEEP, "h:2", STREAM + "h:2"),  # a stream bot stays a stream bot
        ("h:1", STREAMED, "", STREAM + "h:1"),  # same address, now over a stream
        (STREAM + "tls://h:1", UNARY, "", "tls://h:1"),
        ("h:1", DIALS_OUT, "", OUTBOUND_UNNAMED),
        (OUTBOUND + "b1", UNARY, "h:3", "h:3"),
        (OUTBOUND + "b1", DIALS_OUT, "", OUTBOUND_UNNAMED),
    ],
)
def test_an_update_keeps_what_it_does_not_name(
    current: str, transport: int, endpoint: str, stored: str | None
) -> None:
    assert updated_endpoint(current, transport, endpoint) == stored


@pytest.mark.parametrize(
    ("current", "transport", "endpoint", "says"),
    [
        (OUTBOUND + "b1", UNARY, "", "no address"),  # an outbound bot has no address to keep
        (OUTBOUND + "b1", KEEP, "h:1", "no endpoint"),  # which transport serves it?
        ("h:1", DIALS_OUT, "h:1", "no endpoint"),
        ("h:1", KEEP, OUTBOUND + "x", "BOT_TRANSPORT_OUTBOUND"),
    ],
)
def test_an_update_that_contradicts_itself_is_refused(
    current: str, transport: int, endpoint: str, says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        updated_endpoint(current, transport, endpoint)


def test_a_key_opens_only_its_bot_and_is_replaced_and_revoked(store: Store) -> None:
    bot, token = store.register_bot("ann", None, "out", "oh-hell", OUTBOUND_UNNAMED, "1")
    other, _ = store.register_bot("ann", token, "out2", "oh-hell", OUTBOUND_UNNAMED, "1")
    assert token is not None
    first = store.create_bot_key(bot.bot_id, token)
    assert first.startswith(BOT_KEY_PREFIX) and first != token
    assert store.may_connect(bot.bot_id, first) and store.may_connect(bot.bot_id, token)
    assert not store.may_connect(other.bot_id, first)  # one bot's key only
    second = store.create_bot_key(bot.bot_id, token)
    assert not store.may_connect(bot.bot_id, first) and store.may_connect(bot.bot_id, second)
    with pytest.raises(StoreError) as denied:  # a key is no owner's token
        store.create_bot_key(bot.bot_id, second)
    assert denied.value.code == "PERMISSION_DENIED"
    store.revoke_bot_key(bot.bot_id, token)
    assert not store.may_connect(bot.bot_id, second) and store.may_connect(bot.bot_id, token)
    third = store.create_bot_key(bot.bot_id, token)
    store.revoke_token("ann")  # the operator revokes the owner: its bots' keys go too
    assert not store.may_connect(bot.bot_id, third) and not store.may_connect(bot.bot_id, token)


def test_a_banned_owners_key_is_refused_with_the_reason(store: Store) -> None:
    bot, token = store.register_bot("bob", None, "out", "oh-hell", OUTBOUND_UNNAMED, "1")
    assert token is not None
    key = store.create_bot_key(bot.bot_id, token)
    store.ban_owner("bob", "cheating")
    with pytest.raises(StoreError, match="cheating"):
        store.may_connect(bot.bot_id, key)
    assert not store.may_connect(bot.bot_id, "cab_guess")  # a wrong key says nothing


def test_only_an_outbound_bot_gets_a_key(store: Store) -> None:
    bot, token = store.register_bot("cy", None, "served", "oh-hell", "127.0.0.1:1", "1")
    with pytest.raises(StoreError) as refused:
        store.create_bot_key(bot.bot_id, token)
    assert refused.value.code == "FAILED_PRECONDITION" and "outbound" in str(refused.value)


def test_an_owner_turns_a_served_bot_into_one_that_dials_out_and_back(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service, random_bots(1, seed=4) as served:
        client = service.client()
        bot_id, token = register(client, "mover", endpoint=served[0].address)
        owner = service.client(token)
        wait_active(client, [bot_id])

        def update(**fields: object) -> pb.Bot:
            request = pb.UpdateBotRequest(bot_id=bot_id, **fields)  # type: ignore[arg-type]
            bot: pb.Bot = owner.call("UpdateBot", request).bot
            return bot

        with pytest.raises(grpc.RpcError) as early:  # a served bot dials nothing: no key
            owner.call("CreateBotKey", pb.CreateBotKeyRequest(bot_id=bot_id))
        assert early.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        moved = update(transport=DIALS_OUT)
        assert moved.transport == DIALS_OUT and moved.endpoint == ""
        assert moved.state == pb.BOT_STATE_VALIDATING
        key = owner.call("CreateBotKey", pb.CreateBotKeyRequest(bot_id=bot_id)).bot_key
        with outbound_bot(service.address, bot_id, key) as dialling:
            wait_active(client, [bot_id])  # validated over the stream the key opened
            status = partial(connect_status, service.address, bot_id)
            assert status(key) == grpc.StatusCode.ALREADY_EXISTS  # the key works, one stream
            with pytest.raises(grpc.RpcError) as not_owner:  # and does nothing else
                service.client(key).call(
                    "UpdateBot", pb.UpdateBotRequest(bot_id=bot_id, version="2")
                )
            assert not_owner.value.code() == grpc.StatusCode.PERMISSION_DENIED
            owner.call("RevokeBotKey", pb.RevokeBotKeyRequest(bot_id=bot_id))
            assert dialling.poll() is None  # the open stream stays until it ends
        assert status(key) == grpc.StatusCode.PERMISSION_DENIED  # revoked: no new stream
        with pytest.raises(grpc.RpcError) as no_address:
            update(transport=UNARY)  # it has no address of its own any more
        assert no_address.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        back = update(transport=STREAMED, endpoint=served[0].address)
        assert back.transport == STREAMED and back.endpoint == STREAM + served[0].address
        wait_active(client, [bot_id])  # validated again, now dialled over a stream
        assert status(token) == grpc.StatusCode.FAILED_PRECONDITION  # no longer dials out


def test_connect_bot_says_which_credentials_it_takes(tmp_path: Path) -> None:
    with arena_service(tmp_path) as service:
        bot_id, _ = register(service.client(), "anon", transport=DIALS_OUT)
        assert connect_status(service.address, bot_id, "") == grpc.StatusCode.UNAUTHENTICATED
        assert connect_status(service.address, bot_id, "cab_x") == grpc.StatusCode.PERMISSION_DENIED


def test_an_outbound_bot_dials_an_arena_over_tls_with_its_key(tmp_path: Path) -> None:
    """What an arena on the internet looks like to a bot behind NAT: TLS, a key, no port."""
    certs = make_certs(tmp_path / "certs")
    tls = ("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key))
    with arena_service(tmp_path, *tls) as service:
        client = ArenaClient(service.address, timeout_s=10, tls=ClientTls(ca_file=certs.ca))
        request = pb.RegisterBotRequest(
            owner="far", name="b", game="oh-hell", version="1", transport=DIALS_OUT
        )
        registered = client.call("RegisterBot", request)
        bot_id = registered.bot.bot_id
        owner = ArenaClient(
            service.address, registered.owner_token, timeout_s=10, tls=ClientTls(ca_file=certs.ca)
        )
        key = owner.call("CreateBotKey", pb.CreateBotKeyRequest(bot_id=bot_id)).bot_key
        command = [sys.executable, "-m", "sample_bots", "random", "--connect", service.address]
        command += ["--bot-id", bot_id, "--token", key, "--tls", "--ca-file", str(certs.ca)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, text=True, cwd=ROOT)
        try:
            wait_active(client, [bot_id])  # validated over the TLS stream its key opened
        finally:
            stop_bot(process)
