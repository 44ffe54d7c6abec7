"""The Node.js sample bot (``sample_bots/node/``) plays every registered game through the referee.

It is a bot in another language built only from the project's .proto files (loaded at run time by
@grpc/proto-loader), so this checks that the wire contract alone is enough to write a bot. The
test installs the bot's locked dependencies with ``npm ci`` in a temporary copy, starts it as its
own process and plays one real match per game against Python sample bots over gRPC.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, start_server, stop_bot
from cardarena.game.v1 import record_pb2
from referee.games.registry import ENTRIES, STATE_CLASSES, make_game
from referee.match import TimeControl
from referee.replay import resimulate
from referee.runner import MatchSpec
from tests.helpers import ROOT, play, random_bots

NODE_BOT = ROOT / "sample_bots" / "node"
NODE_SEAT = 1  # every game seats at least two; seat 1 also checks that the bot reads its seat
TIME = TimeControl(move_time_ms=5000, time_bank_ms=10_000)  # generous: CI machines vary


def _node_command(bot_dir: Path, seed: int) -> list[str]:
    return [
        "node",
        str(bot_dir / "bot.js"),
        "--listen",
        "127.0.0.1:0",
        "--seed",
        str(seed),
        "--proto-root",
        str(ROOT / "proto"),
    ]


@pytest.fixture(scope="module")
def node_bot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bot with its locked dependencies installed by ``npm ci``."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node/npm not found on PATH: the Node.js sample bot cannot be installed")
    bot_dir = tmp_path_factory.mktemp("node-bot")
    for name in ("bot.js", "package.json", "package-lock.json"):
        shutil.copy2(NODE_BOT / name, bot_dir / name)
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=bot_dir,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert installed.returncode == 0, f"npm ci failed:\n{installed.stdout}\n{installed.stderr}"
    return bot_dir


@pytest.fixture(scope="module")
def node_bot(node_bot_dir: Path) -> Iterator[BotProcess]:
    bot = start_server("node", _node_command(node_bot_dir, seed=1))
    try:
        yield bot
    finally:
        stop_bot(bot.process)


@pytest.fixture(scope="module")
def python_bots() -> Iterator[list[BotProcess]]:
    most_seats = max(cls.game_type.min_seats for cls in STATE_CLASSES.values())
    with random_bots(most_seats - 1, seed=300) as bots:
        yield bots


@pytest.mark.parametrize("name", sorted(STATE_CLASSES))
def test_node_bot_plays_a_whole_match_without_a_fault(
    name: str, node_bot: BotProcess, python_bots: list[BotProcess]
) -> None:
    game_type = STATE_CLASSES[name].game_type
    game = make_game(name, game_type.min_seats, ENTRIES[name].short_options)
    endpoints = [bot.address for bot in python_bots[: game_type.min_seats - 1]]
    endpoints.insert(NODE_SEAT, node_bot.address)
    # A game can end before a given seat acts (a random opponent may end it at once); try a few
    # seeds until the Node bot has answered at least one ChooseAction.
    node_moves = 0
    for seed in range(1, 6):
        record = play(MatchSpec(game, endpoints, seed=seed, time_control=TIME))
        assert record.status == record_pb2.MATCH_STATUS_COMPLETED, record.status
        assert record.seats[NODE_SEAT].bot_name == "node-random"
        faults = [m for m in record.moves if m.seat == NODE_SEAT and m.fault]
        assert not faults, [(m.index, m.fault, m.fault_detail) for m in faults[:5]]
        assert not any(move.fault for move in record.moves)
        assert resimulate(record) == []
        node_moves = sum(1 for m in record.moves if m.seat == NODE_SEAT)
        if node_moves:
            break
    assert node_moves > 0, f"{name}: the Node bot never had to act in five seeds"


def test_node_bot_stops_cleanly_on_sigterm(node_bot_dir: Path) -> None:
    bot = start_server("node", _node_command(node_bot_dir, seed=2))
    assert bot.address.startswith("127.0.0.1:") and not bot.address.endswith(":0")
    bot.process.terminate()
    assert bot.process.wait(timeout=5) == 0
    stop_bot(bot.process)


def test_node_bot_plays_over_its_play_stream(
    node_bot: BotProcess, python_bots: list[BotProcess]
) -> None:
    game = make_game("oh-hell", 3, ENTRIES["oh-hell"].short_options)
    endpoints = [f"stream://{node_bot.address}", *(b.address for b in python_bots[:2])]
    record = play(MatchSpec(game, endpoints, seed=4, time_control=TIME))
    assert record.status == record_pb2.MATCH_STATUS_COMPLETED
    assert record.seats[0].bot_name == "node-random"
    assert any(m.seat == 0 for m in record.moves) and not any(m.fault for m in record.moves)


def test_node_bot_dials_out_over_tls_with_its_key_and_plays_its_validation_matches(
    node_bot_dir: Path, tmp_path: Path
) -> None:
    from cardarena.arena.v1 import arena_service_pb2 as pb
    from netkit.tls import ClientTls
    from tests.certs import make_certs
    from tests.test_ladder_e2e import arena_service, wait_active

    certs = make_certs(tmp_path / "certs")
    tls = ("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key))
    with arena_service(tmp_path, *tls) as service:
        client = ArenaClient(service.address, timeout_s=10, tls=ClientTls(ca_file=certs.ca))
        registered = client.call(
            "RegisterBot",
            pb.RegisterBotRequest(
                owner="nodeowner", name="n", game="oh-hell", transport=pb.BOT_TRANSPORT_OUTBOUND
            ),
        )
        bot_id = registered.bot.bot_id
        key = client.call(
            "CreateBotKey", pb.CreateBotKeyRequest(bot_id=bot_id), token=registered.owner_token
        ).bot_key
        command = [*_node_command(node_bot_dir, seed=3)[:2], "--connect", service.address]
        command += ["--bot-id", bot_id, "--token", "-", "--proto-root", str(ROOT / "proto")]
        command += ["--tls", "--ca-file", str(certs.ca)]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(key + "\n")
            process.stdin.close()
            assert process.stdout.readline().startswith("CONNECTING ")
            wait_active(client, [bot_id])  # its validation matches, played over its own stream
            profile = client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=bot_id))
            assert profile.bot.state == pb.BOT_STATE_ACTIVE
        finally:
            stop_bot(process)
