"""Public answers say little, owners see the detail (issue 18): the public view of bots and
match records (``arena.public``), on its own and through a real ``arena serve``."""

from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path

import pytest

from arena.client import ArenaClient
from arena.public import STRANGER, Viewer, public_state_detail, record_view
from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2
from tests.helpers import random_bots
from tests.listeners import KINDS, not_bots
from tests.test_ladder_e2e import ADMIN, arena_service, bot_state, quick_ladder, wait_for
from tests.test_limits_e2e import cli

LEAKS = ("refused", "http", "nginx", "ipv4", "127.0.0.1", "unavailable", "deadline", "socket")
"""Words of a transport error or an address that no public answer may contain."""


@pytest.mark.parametrize(
    ("state", "stored", "public"),
    [
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123456789ab failed: 3 fault(s); first: unreachable: "
            "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9: "
            "Failed to connect to remote host: Connection refused",
            "failed validation: unreachable or too slow",
        ),
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123456789ab failed: 1 fault(s); first: transport_error: "
            "UNAVAILABLE: Trying to connect an http1.x server (HTTP status 400)",
            "failed validation: unreachable or too slow",
        ),
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123456789ab failed: 3 fault(s); first: timeout: no answer",
            "failed validation: unreachable or too slow",
        ),
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123456789ab failed: unreachable at the start: seat 0 "
            "(ipv4:127.0.0.1:5432): PostgreSQL",
            "failed validation: unreachable or too slow",
        ),
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123456789ab failed: 2 fault(s); first: illegal_action: play QS",
            "failed validation: 2 fault(s) (ILLEGAL_ACTION)",
        ),
        (
            pb.BOT_STATE_REJECTED,
            "validation match 0123 failed: 2 fault(s); first: <b>made-up</b>: x",
            "failed validation",
        ),
        (pb.BOT_STATE_REJECTED, "anything else, HTTP/1.1 200", "failed validation"),
        (pb.BOT_STATE_UNHEALTHY, "no answer to 3 health probes in a row", None),
        (pb.BOT_STATE_PAUSED, "paused by the operator: spamming", "held by the operator"),
        (pb.BOT_STATE_PAUSED, "owner banned by the operator: colluding", "held by the operator"),
        (pb.BOT_STATE_PAUSED, "", ""),
        (pb.BOT_STATE_RETIRED, "retired by the operator: cheating", "retired by the operator"),
        (pb.BOT_STATE_ACTIVE, "passed validation", "passed validation"),
        (pb.BOT_STATE_ACTIVE, "connection refused", ""),
        (pb.BOT_STATE_VALIDATING, "resumed by the operator: ok", "validating"),
    ],
)
def test_the_public_state_detail_is_built_not_copied(
    state: int, stored: str, public: str | None
) -> None:
    shown = public_state_detail(state, stored)
    if public is not None:
        assert shown == public
    assert not any(word in shown.lower() for word in LEAKS), shown
    if "operator: " in stored:  # the operator's reason is the owner's to read
        assert stored.split("operator: ", 1)[1] not in shown


def _record() -> record_pb2.MatchRecord:
    record = record_pb2.MatchRecord(
        match_id="m1",
        status=record_pb2.MATCH_STATUS_FORFEITED,
        forfeited_seat=1,
        status_detail="seat 1 reached 3 faults (last: UNAVAILABLE: ipv4:127.0.0.1:80 HTTP/1.1)",
    )
    for seat in range(3):
        record.seats.add(seat=seat, bot_name=f"b{seat}", endpoint=f"ipv4:127.0.0.1:{9000 + seat}")
    record.moves.add(index=0, seat=1, fault=record_pb2.FAULT_KIND_TRANSPORT_ERROR,
                     fault_detail="UNAVAILABLE: Trying to connect an http1.x server")  # fmt: skip
    record.moves.add(index=1, seat=2, fault=record_pb2.FAULT_KIND_ILLEGAL_ACTION,
                     fault_detail="play QS is not legal now")  # fmt: skip
    record.moves.add(index=2, seat=0, fault=record_pb2.FAULT_KIND_TIMEOUT, fault_detail="late")
    return record


def test_a_record_shows_each_viewer_only_its_own_seats_in_full() -> None:
    record, owners = _record(), ("ann", "bob", "")
    public = record_view(record, owners, STRANGER)
    assert [seat.endpoint for seat in public.seats] == ["", "", ""]
    assert [move.fault for move in public.moves] == [move.fault for move in record.moves]
    assert [move.fault_detail for move in public.moves] == [
        "the call failed",
        "play QS is not legal now",  # the referee's words about an answer: kept
        "no answer before the deadline",
    ]
    assert public.status_detail == "seat 1 forfeited: too many faults"
    assert record.seats[0].endpoint == "ipv4:127.0.0.1:9000", "the stored record is unchanged"

    ann = record_view(record, owners, Viewer(owner="ann"))
    assert [seat.endpoint for seat in ann.seats] == ["ipv4:127.0.0.1:9000", "", ""]
    assert [move.fault_detail for move in ann.moves][::2] == ["the call failed", "late"]
    assert ann.status_detail == public.status_detail, "it names bob's seat"
    alone = record_view(record, ("ann", "", ""), Viewer(owner="ann"))
    assert alone.status_detail == record.status_detail, "a validation match: all the owner's"
    assert record_view(record, owners, Viewer(admin=True)) is record


def _stored_detail(client: ArenaClient, bot_id: str, token: str | None) -> pb.Bot:
    request = pb.GetBotProfileRequest(bot_id=bot_id)
    return client.call("GetBotProfile", request, token=token).bot  # type: ignore[no-any-return]


def is_rejected(client: ArenaClient, bot_id: str) -> bool:
    return bot_state(client, bot_id) == pb.BOT_STATE_REJECTED


def test_closed_http_and_silent_endpoints_look_alike_to_strangers_not_to_owners(
    tmp_path: Path,
) -> None:
    with contextlib.ExitStack() as stack:
        service = stack.enter_context(arena_service(tmp_path, "--limit-peer-new-owners", "100/h"))
        bots = stack.enter_context(random_bots(3, seed=11))
        targets = {kind: stack.enter_context(not_bots(kind))[0] for kind in KINDS}
        client = service.client()
        ids, tokens = {}, {}
        for kind, endpoint in targets.items():
            response = client.call(
                "RegisterBot",
                pb.RegisterBotRequest(owner=kind, name="x", game="oh-hell", endpoint=endpoint),
            )
            ids[kind], tokens[kind] = response.bot.bot_id, response.owner_token
        for index, bot in enumerate(bots):
            request = pb.RegisterBotRequest(
                owner=f"ann{index}", name=f"r{index}", game="oh-hell", endpoint=bot.address
            )
            response = client.call("RegisterBot", request)
            ids[f"ann{index}"], tokens[f"ann{index}"] = response.bot.bot_id, response.owner_token
        for kind in KINDS:
            wait_for(partial(is_rejected, client, ids[kind]), timeout_s=120, what=kind)

        public = {kind: _stored_detail(client, ids[kind], None) for kind in KINDS}
        assert {bot.state_detail for bot in public.values()} == {
            "failed validation: unreachable or too slow"
        }
        assert all(bot.endpoint == "" for bot in public.values())
        stranger = _stored_detail(client, ids["closed"], tokens["http"])  # another owner's token
        assert (stranger.endpoint, stranger.state_detail) == ("", public["closed"].state_detail)

        owned = {kind: _stored_detail(client, ids[kind], tokens[kind]) for kind in KINDS}
        assert all(owned[kind].endpoint == targets[kind] for kind in KINDS)
        assert len({bot.state_detail for bot in owned.values()}) == 3, owned
        admin = {kind: _stored_detail(client, ids[kind], ADMIN) for kind in KINDS}
        assert {k: b.state_detail for k, b in admin.items()} == {
            k: b.state_detail for k, b in owned.items()
        }

        # `arena bot` prints what the server showed: the endpoint only to the owner.
        code, out = cli(service.address, "bot", ids["http"])
        assert code == 0 and "failed validation: unreachable or too slow" in out, out
        assert "endpoint" not in out and "HTTP" not in out, out
        code, out = cli(service.address, "bot", ids["http"], token=tokens["http"])
        assert code == 0 and f"endpoint: {targets['http']}" in out and "http1" in out, out

        # The validation records: no endpoint and no transport text for strangers.
        profile = client.call("GetBotProfile", pb.GetBotProfileRequest(bot_id=ids["http"]))
        match_id = profile.recent_matches[0].match_id
        asked = pb.GetMatchRecordRequest(match_id=match_id)
        shown = client.call("GetMatchRecord", asked).record
        text = str(shown).lower()
        assert all(seat.endpoint == "" for seat in shown.seats)
        assert not any(word in text for word in LEAKS), text
        mine = client.call("GetMatchRecord", asked, token=tokens["http"]).record
        assert targets["http"].split(":")[1] in str(mine), mine
        (watched,) = list(client.watch(match_id))
        assert watched.finished == shown

        # Standings: strangers see no endpoint; an owner sees its own bot's and no other's.
        client.call("CreateLadder", quick_ladder("open"), token=ADMIN)
        standings = wait_for(
            lambda: (
                len(
                    got := client.call(
                        "GetStandings", pb.GetStandingsRequest(ladder="open")
                    ).standings
                )
                == 3
                and got
            ),
            timeout_s=120,
            what="3 entrants",
        )
        assert all(line.bot.endpoint == "" for line in standings)
        as_ann0 = client.call(
            "GetStandings", pb.GetStandingsRequest(ladder="open"), token=tokens["ann0"]
        ).standings
        shown_endpoints = {line.bot.owner: line.bot.endpoint for line in as_ann0}
        assert shown_endpoints == {"ann0": bots[0].address, "ann1": "", "ann2": ""}
