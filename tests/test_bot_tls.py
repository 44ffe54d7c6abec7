"""TLS on bot channels: ``tls://`` endpoints dialled with verified TLS, a bot whose certificate
is not trusted a typed fault, and mutual TLS where the bot sees the arena's certificate."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.local_bots import BotProcess, start_server, stop_bot
from botkit import Bot, ServerTls, caller_identities
from botkit.server import start_server as start_bot_server
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2, record_pb2
from netkit.tls import ClientTls, TlsConfigError
from referee import aio_bridge
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool
from referee.games.registry import make_game
from referee.match import FaultPolicy
from referee.runner import MatchSpec, play_match
from tests.certs import CLIENT_NAME, Certs, make_certs

GAME = make_game("oh-hell", 3, {"deal_style": "short_low"})
PLAY_THROUGH = FaultPolicy(void_if_unreachable_at_start=False, max_faults=2)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def tls_bot(certs: Certs) -> Iterator[BotProcess]:
    """``arena-bot random`` serving TLS with the test CA's certificate for 127.0.0.1."""
    command = [sys.executable, "-m", "sample_bots", "random", "--listen", "127.0.0.1:0"]
    command += ["--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key)]
    bot = start_server("tls-random", command)
    try:
        yield bot
    finally:
        stop_bot(bot.process)


def play_with(pool_tls: ClientTls | None, spec: MatchSpec) -> record_pb2.MatchRecord:
    async def main() -> record_pb2.MatchRecord:
        pool = BotPool(tls=pool_tls)
        try:
            return await play_match(spec, pool)
        finally:
            await pool.close()

    return aio_bridge.run(main)


def test_the_referee_plays_a_tls_bot_verified_against_the_ca_file(
    tls_bot: BotProcess, certs: Certs
) -> None:
    spec = MatchSpec(GAME, [f"tls://{tls_bot.address}"] * 3, seed=3)
    record = play_with(ClientTls(certs.ca), spec)
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED, record.status_detail
    assert record.moves and not any(move.fault for move in record.moves)
    assert record.seats[0].bot_name, "GetInfo answered over TLS"


def test_a_guarded_tls_target_dials_the_checked_address_and_verifies_the_name(
    tls_bot: BotProcess, certs: Certs
) -> None:
    """The endpoint guard hands over ``tls://NAME@ipv4:ADDRESS``: the address it checked is
    dialled (no DNS), the certificate is checked against NAME."""
    host, port = tls_bot.address.rsplit(":", 1)
    address = f"ipv4:{host}:{port}"
    spec = MatchSpec(GAME, [f"tls://{host}@{address}"] * 3, seed=3)
    record = play_with(ClientTls(certs.ca), spec)
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED, record.status_detail
    wrong = MatchSpec(GAME, [f"tls://bot.example.com@{address}"] * 3, seed=3)
    voided = play_with(ClientTls(certs.ca), wrong)
    assert voided.status == record_pb2.MATCH_STATUS_VOIDED, "the name is checked, not the address"


@pytest.mark.parametrize(
    ("pool_tls", "scheme", "expected"),
    [
        # Verified against a CA that did not sign it, or gRPC's default roots.
        (ClientTls, "tls://", "CERTIFICATE_VERIFY_FAILED"),
        (None, "tls://", "CERTIFICATE_VERIFY_FAILED"),
        # Plaintext to a TLS server: the handshake never happens.
        (ClientTls, "", ""),
    ],
    ids=["other-ca", "default-roots", "plaintext"],
)
def test_a_bot_whose_certificate_is_not_trusted_is_a_typed_fault(
    tls_bot: BotProcess, certs: Certs, pool_tls: type[ClientTls] | None, scheme: str, expected: str
) -> None:
    tls = None if pool_tls is None else pool_tls(certs.other_ca)
    endpoint = f"{scheme}{tls_bot.address}"
    voided = play_with(tls, MatchSpec(GAME, [endpoint] * 3, seed=3))
    assert voided.status == record_pb2.MATCH_STATUS_VOIDED
    assert expected in voided.status_detail and endpoint in voided.status_detail
    played = play_with(tls, MatchSpec(GAME, [endpoint] * 3, seed=3, policy=PLAY_THROUGH))
    faults = [move for move in played.moves if move.fault]
    assert faults and all(m.fault == record_pb2.FAULT_KIND_UNREACHABLE for m in faults)
    assert all(expected in m.fault_detail for m in faults), faults[0].fault_detail


def test_the_host_name_in_the_endpoint_is_verified(tls_bot: BotProcess, certs: Certs) -> None:
    # The certificate names 127.0.0.1 and ::1, not localhost.
    port = tls_bot.address.rsplit(":", 1)[1]
    spec = MatchSpec(GAME, [f"tls://localhost:{port}"] * 3, seed=3)
    record = play_with(ClientTls(certs.ca), spec)
    assert record.status == record_pb2.MATCH_STATUS_VOIDED
    assert "localhost" in record.status_detail


def test_mutual_tls_the_bot_sees_the_arenas_certificate_and_refuses_a_caller_without(
    certs: Certs,
) -> None:
    seen: list[tuple[str, ...]] = []

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        seen.append(caller_identities())
        return request.legal_actions[0]

    bot = Bot(choose=choose, name="mtls")
    tls = ServerTls(certs.server_cert, certs.server_key, client_ca_file=certs.ca)
    with_cert = ClientTls(certs.ca, certs.client_cert, certs.client_key)

    async def main() -> tuple[record_pb2.MatchRecord, record_pb2.MatchRecord]:
        server, address = await await_aio(lambda: start_bot_server(bot, "127.0.0.1:0", tls))
        spec = MatchSpec(GAME, [f"tls://{address}"] * 3, seed=4, policy=PLAY_THROUGH)
        records = []
        try:
            for pool_tls in (with_cert, ClientTls(certs.ca)):
                pool = BotPool(tls=pool_tls)
                try:
                    records.append(await play_match(spec, pool))
                finally:
                    await pool.close()
        finally:
            await await_aio(lambda: server.stop(0))
        return records[0], records[1]

    shown, anonymous = aio_bridge.run(main)
    assert shown.status == record_pb2.MATCH_STATUS_COMPLETED
    assert not any(move.fault for move in shown.moves)
    assert seen and all(names == (CLIENT_NAME,) for names in seen), seen[:3]
    faults = [move.fault for move in anonymous.moves if move.fault]
    assert faults and set(faults) <= {
        record_pb2.FAULT_KIND_UNREACHABLE,
        record_pb2.FAULT_KIND_TRANSPORT_ERROR,
    }
    assert len(seen) == len(shown.moves), "the caller without a certificate got no move asked"
    assert caller_identities() == (), "outside a call there is no caller"


@pytest.mark.parametrize("broken", ["ca", "cert", "key", "half"])
def test_bad_tls_files_are_a_clear_error_before_anything_is_dialled(
    certs: Certs, tmp_path: Path, broken: str
) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    files = {"ca": certs.ca, "cert": certs.client_cert, "key": certs.client_key}
    if broken == "half":
        tls = ClientTls(certs.ca, certs.client_cert, None)
    else:
        files[broken] = garbage
        tls = ClientTls(files["ca"], files["cert"], files["key"])
    with pytest.raises(TlsConfigError) as error:
        BotPool(tls=tls)
    assert "\n" not in str(error.value)
    if broken != "half":
        assert str(garbage) in str(error.value)
