"""Exposing the arena, with real processes: one process per port, one arena per SQLite file,
malformed requests answered INVALID_ARGUMENT with a bounded log, and TLS for the API."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, start_bot, start_server, stop_bot
from arena.rpc_errors import LOG_INTERVAL_S, RateLimitedLog, RequestGuard
from cardarena.arena.v1 import arena_service_pb2 as pb
from netkit.listen import SERVER_OPTIONS, add_port
from netkit.tls import ClientTls
from tests.certs import Certs, make_certs
from tests.helpers import POLLING_LIMITS, ROOT

ADMIN = "admin-secret"
ARENA_SERVICE = pb.DESCRIPTOR.services_by_name["ArenaService"]
MALFORMED = (
    b"\xff",  # a truncated varint tag
    b"\x0a\x05ab",  # a length-delimited field longer than the message
    b"\x08" + b"\xff" * 11,  # a varint of more than 10 bytes
    b"\x0f",  # wire type 7 does not exist
    b"\x00",  # field number 0 does not exist
)
"""Bytes that are no message of any type."""


def malformed_for(message: Any) -> list[bytes]:
    """``MALFORMED``, and for each string field of ``message`` (a descriptor) a value that is
    not UTF-8 (proto3 strings must be)."""
    bad_strings = [
        bytes([field.number << 3 | 2, 2]) + b"\xff\xfe"
        for field in message.fields
        if field.type == field.TYPE_STRING and field.number < 16
    ]
    return [*MALFORMED, *bad_strings]


@contextlib.contextmanager
def arena(tmp_path: Path, *extra: str, db: Path | None = None) -> Iterator[BotProcess]:
    """``arena serve`` on a free port, its log in ``tmp_path/serve.log``."""
    token_file = tmp_path / "admin"
    token_file.write_text(ADMIN)
    store = ["--db", str(db or tmp_path / "a.db")]
    command = arena_serve_command(token_file, store, 2, *POLLING_LIMITS, *extra)
    with (tmp_path / "serve.log").open("a") as log:
        process = start_server("arena", command, cwd=str(ROOT), stderr=log.fileno())
        try:
            yield process
        finally:
            stop_bot(process.process, grace_s=15)


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a command that should stop by itself; its output."""
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def serve_command(tmp_path: Path, listen: str, db: Path) -> list[str]:
    token_file = tmp_path / "admin"
    token_file.write_text(ADMIN)
    command = arena_serve_command(token_file, ["--db", str(db)], 1)
    command[command.index("--listen") + 1] = listen
    return command


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# One process per port.


def test_a_second_server_on_a_port_in_use_fails_with_one_line_and_the_first_keeps_it(
    tmp_path: Path,
) -> None:
    first = start_bot("random")
    try:
        port = first.address.rsplit(":", 1)[1]
        where = f"127.0.0.1:{port}"
        seconds = {
            "arena-bot": [sys.executable, "-m", "sample_bots", "random", "--listen", where],
            "arena serve": serve_command(tmp_path, where, tmp_path / "second.db"),
            "test bot": [sys.executable, "-m", "tests.bots.misbehaving", "ok", "--listen", where],
        }
        for name, command in seconds.items():
            result = run(command)
            if name == "test bot":  # no one-line error of its own, but no second server either
                assert result.returncode != 0 and "LISTENING" not in result.stdout, name
                continue
            assert_one_line_error(result, f"cannot listen on {where}", "in use")
        # grpc's default (SO_REUSEPORT on) cannot share the port either: the first has it off.
        assert not _grpc_default_server_binds(where)
        assert first.process.poll() is None
        assert _bot_answers(first.address)
    finally:
        stop_bot(first.process)


def _grpc_default_server_binds(where: str) -> bool:
    async def main() -> bool:
        server = grpc.aio.server()  # the default options, SO_REUSEPORT on
        try:
            return server.add_insecure_port(where) != 0
        except RuntimeError:
            return False
        finally:
            await server.stop(0)

    return asyncio.run(main())


def _bot_answers(address: str) -> bool:
    from cardarena.bot.v1 import bot_service_pb2, bot_service_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub: Any = bot_service_pb2_grpc.BotServiceStub(channel)
        return bool(stub.GetInfo(bot_service_pb2.GetInfoRequest(), timeout=10).name)


# One arena per database file.


def test_a_second_arena_on_one_sqlite_file_refuses_until_the_first_is_killed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    with arena(tmp_path, db=db) as first:
        result = run(serve_command(tmp_path, "127.0.0.1:0", db))
        assert_one_line_error(
            result, f"database {db} is in use", f"pid {first.process.pid}", "lock"
        )
        client = ArenaClient(first.address, timeout_s=10)
        assert client.call("ListGames", pb.ListGamesRequest()).games, "the first still serves"
        client.close()
        first.process.send_signal(signal.SIGKILL)  # no clean-up: the kernel drops the lock
        first.process.wait()
        second = start_server("arena", serve_command(tmp_path, "127.0.0.1:0", db), cwd=str(ROOT))
        try:
            client = ArenaClient(second.address, timeout_s=10)
            assert client.call("ListGames", pb.ListGamesRequest()).games
            client.close()
        finally:
            stop_bot(second.process, grace_s=15)


# Malformed requests.


def _raw_call(
    channel: grpc.Channel,
    method: Any,
    service: Any,
    payload: bytes,
    metadata: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """Call ``method`` of ``service`` with ``payload`` as its request bytes (a stream read to
    its end): the answer's bytes (a stream's last message, if any); raises ``grpc.RpcError``
    for a status other than OK."""
    path = f"/{service.full_name}/{method.name}"
    if method.server_streaming:
        stream: grpc.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
            path, request_serializer=None, response_deserializer=None
        )
        answers = list(stream(payload, timeout=10, metadata=metadata))
        return answers[-1] if answers else b""
    unary: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        path, request_serializer=None, response_deserializer=None
    )
    return unary(payload, timeout=10, metadata=metadata)


STREAM_REFUSALS = {
    grpc.StatusCode.INVALID_ARGUMENT,  # ConnectBot: the first message is no hello
    grpc.StatusCode.PERMISSION_DENIED,  # RelayBot: for arena peers only, checked first
    grpc.StatusCode.UNAUTHENTICATED,
}
"""How a bot-stream method may refuse bytes that are no message (never UNKNOWN or INTERNAL)."""


def test_malformed_bytes_get_invalid_argument_on_every_method_and_a_bounded_log(
    tmp_path: Path,
) -> None:
    methods = [m for m in ARENA_SERVICE.methods if not m.client_streaming]
    assert len(methods) >= 10
    streams = [m for m in ARENA_SERVICE.methods if m.client_streaming]
    health = health_pb2.DESCRIPTOR.services_by_name["Health"]
    targets = [(ARENA_SERVICE, m) for m in methods] + [(health, health.methods_by_name["Check"])]
    rounds = 3
    with arena(tmp_path) as service:
        started = time.monotonic()
        with grpc.insecure_channel(service.address) as channel:
            for _ in range(rounds):
                for svc, method in targets:
                    for payload in malformed_for(method.input_type):
                        with pytest.raises(grpc.RpcError) as error:
                            _raw_call(channel, method, svc, payload)
                        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, method.name
                        detail = error.value.details() or ""
                        assert detail.startswith("malformed request") and len(detail) < 100
                for method in streams:  # a bot's stream (ConnectBot, RelayBot): its own reader
                    for payload in malformed_for(method.input_type):
                        with pytest.raises(grpc.RpcError) as error:
                            _raw_call(channel, method, ARENA_SERVICE, payload)
                        code = error.value.code()
                        assert code in STREAM_REFUSALS, (method.name, code)
                        assert len(error.value.details() or "") < 200, method.name
        elapsed = time.monotonic() - started
        client = ArenaClient(service.address, timeout_s=10)
        assert client.call("ListGames", pb.ListGamesRequest()).games, "still serving"
        client.close()
    log = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in log
    windows = 1 + int(elapsed // LOG_INTERVAL_S)  # the log allows one line per window
    for svc, method in targets:
        lines = [
            line
            for line in log.splitlines()
            if f"malformed request /{svc.full_name}/{method.name}:" in line
        ]
        assert 1 <= len(lines) <= windows, (method.name, lines)


def test_the_log_is_one_line_per_kind_per_interval_with_a_count() -> None:
    now = [0.0]
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("test.rate_limited")
    logger.addHandler(Collect())
    logger.propagate = False
    limited = RateLimitedLog(logger, interval_s=10, clock=lambda: now[0])
    logged = [limited.report("a", f"event {i}") for i in range(5)]
    assert logged == [True, False, False, False, False]
    assert limited.report("b", "other kind")
    now[0] = 9.9
    assert not limited.report("a", "still in the window")
    now[0] = 12.0
    assert limited.report("a", "next window")
    assert not limited.report("a", "counted")
    assert records == ["a: event 0", "b: other kind", "a: next window (5 more in the 12 s before)"]


def test_a_handler_bug_is_internal_without_its_text_and_logged_once() -> None:
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("test.handler_bug")
    logger.addHandler(Collect())
    logger.propagate = False

    async def broken(request: pb.ListGamesRequest, context: Any) -> pb.ListGamesResponse:
        raise KeyError("secret detail")

    async def broken_stream(request: pb.WatchMatchRequest, context: Any) -> Any:
        yield pb.WatchMatchResponse()
        raise ValueError("secret detail")

    async def main() -> list[grpc.StatusCode]:
        server = grpc.aio.server(
            options=SERVER_OPTIONS, interceptors=[RequestGuard(RateLimitedLog(logger))]
        )
        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
            "ListGames": grpc.unary_unary_rpc_method_handler(
                broken,
                request_deserializer=pb.ListGamesRequest.FromString,
                response_serializer=pb.ListGamesResponse.SerializeToString,
            ),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(
                broken_stream,
                request_deserializer=pb.WatchMatchRequest.FromString,
                response_serializer=pb.WatchMatchResponse.SerializeToString,
            ),
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(ARENA_SERVICE.full_name, handlers),)
        )
        port = add_port(server, "127.0.0.1:0")
        await server.start()
        codes = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                for method in ("ListGames", "WatchMatch") * 3:
                    path = f"/{ARENA_SERVICE.full_name}/{method}"
                    try:
                        if method == "ListGames":
                            unary: Any = channel.unary_unary(path)
                            await unary(b"", timeout=10)
                        else:
                            stream: Any = channel.unary_stream(path)
                            async for _ in stream(b"", timeout=10):
                                pass
                    except grpc.aio.AioRpcError as error:
                        assert "secret" not in (error.details() or "")
                        codes.append(error.code())
        finally:
            await server.stop(0)
        return codes

    assert asyncio.run(main()) == [grpc.StatusCode.INTERNAL] * 6
    assert len(records) == 2, [r.getMessage() for r in records]  # one per kind
    assert {r.getMessage().split(":")[0] for r in records} == {
        f"handler error /{ARENA_SERVICE.full_name}/ListGames KeyError",
        f"handler error /{ARENA_SERVICE.full_name}/WatchMatch ValueError",
    }


# TLS for the API.


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "arena", *args])


def _lists_games(address: str, tls: ClientTls | None) -> bool | grpc.StatusCode:
    client = ArenaClient(address, timeout_s=10, tls=tls)
    try:
        return bool(client.call("ListGames", pb.ListGamesRequest()).games)
    except grpc.RpcError as error:
        return error.code()
    finally:
        client.close()


def test_the_api_over_tls_for_the_client_and_the_command_line(tmp_path: Path, certs: Certs) -> None:
    tls = ("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key))
    with arena(tmp_path, *tls) as service:
        address = service.address
        assert _lists_games(address, ClientTls(certs.ca)) is True
        unavailable = grpc.StatusCode.UNAVAILABLE
        assert _lists_games(address, None) == unavailable, "plaintext is refused"
        assert _lists_games(address, ClientTls(certs.other_ca)) == unavailable, "untrusted"
        assert _lists_games(address, ClientTls()) == unavailable, "not in the default roots"
        ok = _cli("ladders", "--server", address, "--ca-file", str(certs.ca))
        assert ok.returncode == 0, ok.stderr
        health = _cli("health", address, "--ca-file", str(certs.ca))
        assert (health.returncode, health.stdout.strip()) == (0, "SERVING")
        refused = _cli("ladders", "--server", address, "--tls", "--ca-file", str(certs.other_ca))
        assert refused.returncode == 2 and "UNAVAILABLE" in refused.stdout
        bad = _cli("ladders", "--server", address, "--ca-file", str(certs.server_key))
        assert_one_line_error(bad, f"CA file {certs.server_key}")


def test_mutual_tls_for_the_api_refuses_a_client_without_a_certificate(
    tmp_path: Path, certs: Certs
) -> None:
    tls = ("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key))
    with arena(tmp_path, *tls, "--tls-client-ca", str(certs.ca)) as service:
        address = service.address
        shown = ClientTls(certs.ca, certs.client_cert, certs.client_key)
        assert _lists_games(address, shown) is True
        assert _lists_games(address, ClientTls(certs.ca)) == grpc.StatusCode.UNAVAILABLE
        mine = ("--client-cert", str(certs.client_cert), "--client-key", str(certs.client_key))
        ok = _cli("ladders", "--server", address, "--ca-file", str(certs.ca), *mine)
        assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "flags",
    [
        ("--tls-cert", "CERT"),
        ("--tls-cert", "CERT", "--tls-key", "CERT"),
        ("--tls-cert", "CERT", "--tls-key", "KEY", "--tls-client-ca", "KEY"),
        ("--bot-ca-file", "KEY"),
        ("--bot-client-cert", "CERT"),
    ],
    ids=["cert-without-key", "cert-as-key", "key-as-client-ca", "key-as-bot-ca", "half-pair"],
)
def test_bad_tls_options_stop_arena_serve_with_one_line(
    tmp_path: Path, certs: Certs, flags: tuple[str, ...]
) -> None:
    files = {"CERT": str(certs.server_cert), "KEY": str(certs.server_key)}
    command = serve_command(tmp_path, "127.0.0.1:0", tmp_path / "a.db")
    result = run([*command, *(files.get(flag, flag) for flag in flags)])
    assert_one_line_error(result)
