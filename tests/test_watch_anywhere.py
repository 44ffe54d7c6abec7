"""Many processes, one arena, for spectators: two real ``arena serve`` processes on one
PostgreSQL database, and whichever a spectator reaches, it sees the same. WatchMatch on one
process for a match the other plays relays that process's moves, then the end from its own
store; ListMatches on either lists every process's matches; hidden information stays hidden
through either process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import psycopg
import pytest

from arena.client import ArenaClient
from arena.local_bots import BotProcess, arena_serve_command, start_server, stop_bot
from arena.store.coordination import Coordination
from arena.store.db import Database, open_database
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2
from netkit.tls import ClientTls
from tests.certs import make_certs
from tests.helpers import POLLING_LIMITS, ROOT, misbehaving_bot, registered_address
from tests.listeners import not_bots
from tests.stores import postgres_available, postgres_url
from tests.test_ladder_e2e import ADMIN, quick_ladder, register_all, wait_active, wait_for

pytestmark = pytest.mark.skipif(
    not postgres_available() and not os.environ.get("CI"), reason="no PostgreSQL server"
)

WORKERS = ("alpha", "beta")


@contextmanager
def arena_process(url: str, name: str, workdir: Path, *extra: str) -> Iterator[BotProcess]:
    token_file = workdir / "admin"
    token_file.write_text(ADMIN)
    command = arena_serve_command(
        token_file, ["--database-url", url], 3, "--worker-id", name, *POLLING_LIMITS, *extra
    )
    with (workdir / f"{name}.log").open("a") as log:
        process = start_server(name, command, cwd=str(ROOT), stderr=log.fileno())
        try:
            yield process
        finally:
            stop_bot(process.process, grace_s=15)


@dataclass
class Arena:
    url: str
    processes: dict[str, BotProcess]
    bots: list[str]

    def client(
        self, worker_id: str, token: str | None = None, tls: ClientTls | None = None
    ) -> ArenaClient:
        return ArenaClient(self.processes[worker_id].address, token, timeout_s=10, tls=tls)

    def other(self, worker_id: str) -> str:
        return next(name for name in WORKERS if name != worker_id)

    def rows(self, ladder: str) -> list[tuple[str, str, str, str, int]]:
        """(match id, status, claimed by, set id, seed) of a ladder's matches."""
        with psycopg.connect(self.url) as connection:
            return connection.execute(
                "SELECT m.match_id, m.status, COALESCE(m.claimed_by, ''), m.set_id, m.seed "
                "FROM matches m JOIN ladders l ON l.ladder_id = m.ladder_id WHERE l.name = %s",
                (ladder,),
            ).fetchall()

    def others_unfinished(self, match_id: str) -> bool:
        """Whether another rotation of the match's deal is unfinished now (read after a call:
        rotations only ever finish, so it was unfinished during the call too)."""
        with psycopg.connect(self.url) as connection:
            row = connection.execute(
                "SELECT COUNT(*) FROM matches o JOIN matches m ON o.set_id = m.set_id AND "
                "o.seed = m.seed WHERE m.match_id = %s AND o.match_id <> m.match_id "
                "AND o.status <> 'finished'",
                (match_id,),
            ).fetchone()
        return bool(row and row[0])


@contextmanager
def two_processes(
    workdir: Path, ladders: list[pb.CreateLadderRequest], *extra: str, tls: ClientTls | None = None
) -> Iterator[Arena]:
    """Two processes on one database (``extra``: more ``arena serve`` options), three bots
    that think 30 ms a move (matches last long enough to be caught live), and ``ladders``."""
    with ExitStack() as stack:
        url = stack.enter_context(postgres_url())
        bots = [stack.enter_context(misbehaving_bot("sleep", "--sleep-ms", "30")) for _ in range(3)]
        processes = {
            name: stack.enter_context(arena_process(url, name, workdir, *extra)) for name in WORKERS
        }
        for name, process in processes.items():  # where the other one will relay from
            assert registered_address(url, name) == process.address
        shared = Arena(url, processes, [])
        admin = shared.client("alpha", ADMIN, tls=tls)
        shared.bots = register_all(admin, bots)
        wait_active(admin, shared.bots)
        for ladder in ladders:
            admin.call("CreateLadder", ladder)
        yield shared


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """Two processes, a plain ladder and a duplicate one."""
    ladders = [quick_ladder("plain"), quick_ladder("dup", duplicate=True)]
    with two_processes(tmp_path_factory.mktemp("watch-anywhere"), ladders) as shared:
        yield shared


def watched(client: ArenaClient, match_id: str) -> list[pb.WatchMatchResponse] | grpc.RpcError:
    try:
        return list(client.watch(match_id))
    except grpc.RpcError as error:
        return error


def moves_of(events: list[pb.WatchMatchResponse] | grpc.RpcError) -> list[pb.MoveEvent]:
    if isinstance(events, grpc.RpcError):
        return []
    return [e.move for e in events if e.HasField("move")]


def watched_alike(
    arena: Arena, tls: ClientTls | None = None
) -> tuple[str, list[pb.WatchMatchResponse], list[pb.WatchMatchResponse]]:
    """A match of the plain ladder caught live, and what a stranger watching it through the
    process that plays it and through the other got."""
    for _ in range(20):
        match_id, holder = wait_for(
            lambda: next(((m, w) for m, s, w, _, _ in arena.rows("plain") if s == "playing"), None),
            what="a live match",
        )
        here, there = arena.client(holder, tls=tls), arena.client(arena.other(holder), tls=tls)
        with ThreadPoolExecutor(2) as pool:
            local = pool.submit(watched, here, match_id)
            relayed = pool.submit(watched, there, match_id)
            local_events, relayed_events = local.result(), relayed.result()
        if moves_of(local_events) and moves_of(relayed_events):
            assert isinstance(relayed_events, list) and isinstance(local_events, list)
            return match_id, local_events, relayed_events
    raise AssertionError("never caught a match live through both processes")


def test_a_match_played_by_one_process_is_watched_alike_through_the_other(arena: Arena) -> None:
    """A stranger watching through the process that does not play the match gets what a
    stranger watching through the one that plays it gets: every move event, then the same
    finished record."""
    match_id, local_events, relayed_events = watched_alike(arena)
    moves = moves_of(relayed_events)
    assert [m.index for m in moves] == list(range(len(moves))), "every move event, in order"
    assert relayed_events[-1].HasField("finished")
    assert relayed_events[-1].finished.match_id == match_id
    assert relayed_events == local_events, "the same events through either process"
    assert not relayed_events[-1].finished.seats[0].endpoint, "a stranger's view of the record"

    # Listed through either process, with the id to watch and the result of the record.
    record = relayed_events[-1].finished
    for worker_id in WORKERS:
        request = pb.ListMatchesRequest(ladder="plain", phase=pb.MATCH_PHASE_FINISHED)
        (listed,) = [
            m for m in all_pages(arena.client(worker_id), request) if m.match_id == match_id
        ]
        assert [s.rank for s in listed.seats] == list(record.outcome.ranks)
        assert [s.score for s in listed.seats] == list(record.outcome.scores)
        assert listed.phase == pb.MATCH_PHASE_FINISHED and listed.started_at_us > 0


def all_pages(client: ArenaClient, request: pb.ListMatchesRequest) -> list[pb.ListedMatch]:
    shown: list[pb.ListedMatch] = []
    request.page_size = 100
    while True:
        response = client.call("ListMatches", request)
        shown.extend(response.matches)
        if not response.next_page_token:
            return shown
        request.page_token = response.next_page_token


def test_either_process_lists_every_processs_matches(arena: Arena) -> None:
    """A match being played is listed live by both processes, whichever plays it; every
    finished match is listed by both; the CLI prints the ids ``arena watch`` takes."""
    wait_for(lambda: any(s == "finished" for _, s, _, _, _ in arena.rows("plain")))
    caught: set[str] = set()
    for _ in range(100):
        playing = {m for m, s, _, _, _ in arena.rows("plain") if s == "playing"}
        listed = {name: listed_ids(arena, name, pb.MATCH_PHASE_PLAYING) for name in WORKERS}
        caught = playing & {m for m, s, _, _, _ in arena.rows("plain") if s == "playing"}
        if caught:  # playing before and after both calls: both must have listed it
            for name in WORKERS:
                assert caught <= listed[name], f"{name} lists every process's live matches"
            break
        time.sleep(0.05)
    assert caught, "never caught a match being played"
    finished = {m for m, s, _, _, _ in arena.rows("plain") if s == "finished"}
    for name in WORKERS:
        assert finished <= listed_ids(arena, name, pb.MATCH_PHASE_FINISHED), name
    done = run_cli("matches", "plain", "--finished", "--limit", "5", server=arena, on="beta")
    assert any(match_id in done for match_id in finished), done
    live = run_cli("live", server=arena, on="alpha")
    assert "matches being played" in live


def listed_ids(arena: Arena, worker_id: str, phase: pb.MatchPhase.ValueType) -> set[str]:
    request = pb.ListMatchesRequest(ladder="plain", phase=phase)
    return {m.match_id for m in all_pages(arena.client(worker_id), request)}


def run_cli(*args: str, server: Arena, on: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "arena", *args, "--server", server.processes[on].address],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, "COLUMNS": "250"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_duplicate_rotations_stay_hidden_through_either_process(arena: Arena) -> None:
    """While another rotation of its deal is unfinished, a rotation being played cannot be
    watched (FAILED_PRECONDITION) through either process, and a finished one is listed by
    both without ranks or scores."""
    checked: set[str] = set()
    deadline = time.monotonic() + 180
    while checked != {"watch-live", "listed-withheld"}:
        assert time.monotonic() < deadline, f"only saw {checked} while rotations ran"
        for match_id, status, holder, _, _ in arena.rows("dup"):
            if status == "playing" and holder:
                for name in WORKERS:
                    outcome = watched(arena.client(name), match_id)
                    if arena.others_unfinished(match_id):
                        assert isinstance(outcome, grpc.RpcError), f"live moves leaked via {name}"
                        assert outcome.code() == grpc.StatusCode.FAILED_PRECONDITION
                        assert "withheld" in (outcome.details() or "")
                        checked.add("watch-live")
            elif status == "finished":
                for name in WORKERS:
                    request = pb.ListMatchesRequest(ladder="dup", phase=pb.MATCH_PHASE_FINISHED)
                    shown = [
                        m for m in all_pages(arena.client(name), request) if m.match_id == match_id
                    ]
                    if arena.others_unfinished(match_id):
                        (listed,) = shown
                        assert listed.withheld, f"ranks listed via {name}"
                        assert all((s.rank, s.score) == (0, 0) for s in listed.seats)
                        checked.add("listed-withheld")
        time.sleep(0.05)


@contextmanager
def ghost_match(arena: Arena, address: str) -> Iterator[tuple[str, Database]]:
    """A match "being played" by a live process ``ghost`` whose API is at ``address`` (its
    seats are no bots: nothing else in the arena waits on it)."""
    match_id = f"ghost-{uuid.uuid4().hex[:8]}"
    database = open_database(arena.url)
    coordination = Coordination(database)
    incarnation = coordination.register("ghost", ("all",), address, lease_s=3600)
    with database.transaction() as tx:
        tx.execute(
            "INSERT INTO matches (match_id, ladder_id, set_id, kind, seed, seats, status, "
            "claimed_by, lease_until_us, created_at_us, started_at_us) VALUES "
            f"(?, NULL, ?, 'ladder', 1, 'g1,g2,g3', 'playing', 'ghost', {tx.clock} + "
            f"3600000000, {tx.clock}, {tx.clock})",
            (match_id, match_id),
        )
    try:
        yield match_id, database
    finally:
        with database.transaction() as tx:
            tx.execute("DELETE FROM records WHERE match_id = ?", (match_id,))
            tx.execute("DELETE FROM matches WHERE match_id = ?", (match_id,))
        coordination.retire("ghost", incarnation)
        database.close()


def finish(database: Database, match_id: str) -> None:
    record = record_pb2.MatchRecord(match_id=match_id, status=record_pb2.MATCH_STATUS_VOIDED)
    with database.transaction() as tx:
        tx.execute(
            "UPDATE matches SET status = 'finished', result_status = 3, finished_at_us = 1 "
            "WHERE match_id = ?",
            (match_id,),
        )
        tx.execute(
            "INSERT INTO records (match_id, record) VALUES (?, ?)",
            (match_id, record.SerializeToString()),
        )


def test_a_relay_that_cannot_reach_the_playing_process_answers_from_the_store(
    arena: Arena,
) -> None:
    """The process playing a match does not answer (it accepts connections and never says a
    word): the watch ends with UNAVAILABLE and a reason; had the match finished meanwhile,
    with its record."""
    with not_bots("silent") as (address,), ghost_match(arena, address) as (match_id, database):
        outcome = watched(arena.client("alpha"), match_id)
        assert isinstance(outcome, grpc.RpcError)
        assert outcome.code() == grpc.StatusCode.UNAVAILABLE
        assert "cannot reach" in (outcome.details() or "")
        with ThreadPoolExecutor(1) as pool:
            later = pool.submit(watched, arena.client("beta"), match_id)
            time.sleep(1.0)  # its relay waits for the silent process meanwhile
            finish(database, match_id)
            events = later.result()
        assert not isinstance(events, grpc.RpcError), events
        assert [e.WhichOneof("event") for e in events] == ["finished"]
        assert events[0].finished.match_id == match_id


def test_list_matches_refuses_what_it_cannot_list(arena: Arena) -> None:
    client = arena.client("beta")
    token = client.call("ListMatches", pb.ListMatchesRequest(page_size=1)).next_page_token
    assert token
    refusals = [
        (pb.ListMatchesRequest(page_size=101), grpc.StatusCode.INVALID_ARGUMENT, "page_size"),
        (pb.ListMatchesRequest(page_token="x" * 300), grpc.StatusCode.INVALID_ARGUMENT, "page"),
        (pb.ListMatchesRequest(page_token="bogus"), grpc.StatusCode.INVALID_ARGUMENT, "page"),
        (
            pb.ListMatchesRequest(ladder="dup", page_token=token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "other filters",
        ),
        (pb.ListMatchesRequest(phase=7), grpc.StatusCode.INVALID_ARGUMENT, "phase"),  # type: ignore[arg-type]
        (pb.ListMatchesRequest(ladder="l" * 65), grpc.StatusCode.INVALID_ARGUMENT, "ladder"),
        (pb.ListMatchesRequest(bot_id="\u202e"), grpc.StatusCode.INVALID_ARGUMENT, "bot_id"),
        (pb.ListMatchesRequest(ladder="nope"), grpc.StatusCode.NOT_FOUND, "no ladder"),
        (pb.ListMatchesRequest(bot_id="nobody"), grpc.StatusCode.NOT_FOUND, "no bot"),
    ]
    for request, code, words in refusals:
        with pytest.raises(grpc.RpcError) as refused:
            client.call("ListMatches", request)
        assert refused.value.code() == code, request
        assert words in (refused.value.details() or ""), refused.value.details()


def test_processes_that_serve_mutual_tls_relay_to_each_other_with_it(tmp_path: Path) -> None:
    """Both APIs require a client certificate: each process dials the other with its CA
    and client certificate (--peer-ca-file, --peer-client-cert/key), and a watch through
    either process gets the same events."""
    certs = make_certs(tmp_path / "certs")
    tls = (
        *("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key)),
        *("--tls-client-ca", str(certs.ca), "--peer-ca-file", str(certs.ca)),
        *("--peer-client-cert", str(certs.client_cert), "--peer-client-key", str(certs.client_key)),
    )
    client_tls = ClientTls(certs.ca, certs.client_cert, certs.client_key)
    with two_processes(tmp_path, [quick_ladder("plain")], *tls, tls=client_tls) as pair:
        _, local_events, relayed_events = watched_alike(pair, client_tls)
        assert relayed_events == local_events and relayed_events[-1].HasField("finished")
