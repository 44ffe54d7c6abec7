"""What a read shows to whom: the public view of bots and match records.

Strangers see a bot's name, owner, game, version, state and figures, never its endpoint, and a
state detail from a short fixed vocabulary ("failed validation: unreachable or too slow"),
never the stored text, which can hold raw network errors ("connection refused", an HTTP
status line, a database's greeting) that say what listens at an address. A match record shown
to them has no seat endpoints, and the details of faults and of the match's end that can carry
transport text are replaced by a neutral phrase (the fault kind stays). A bot's owner (with its
token) sees its own bots and its own seats in full; the admin sees everything.

The service decides the ``Viewer`` once per call and passes every answer through the function
for its message kind here; nothing else decides what is public.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.game.v1 import record_pb2


@dataclass(frozen=True)
class Viewer:
    """Who is asking: the admin, an owner (by name, from its token), or a stranger."""

    admin: bool = False
    owner: str | None = None

    def sees(self, owner: str) -> bool:
        """Whether this viewer sees the full detail of ``owner``'s bots and seats."""
        return self.admin or (bool(owner) and owner == self.owner)


STRANGER = Viewer()
"""No token, or one that is not an owner's nor the admin's."""

NETWORK_FAULTS = frozenset(
    {
        record_pb2.FAULT_KIND_TIMEOUT,
        record_pb2.FAULT_KIND_TIME_BANK_EXHAUSTED,
        record_pb2.FAULT_KIND_UNREACHABLE,
        record_pb2.FAULT_KIND_TRANSPORT_ERROR,
    }
)
"""Faults that anything at an address can cause (nothing there, something silent, something
that is not a bot): publicly, one "unreachable or too slow", whatever the kind."""

NEUTRAL_FAULT_DETAILS = {
    record_pb2.FAULT_KIND_TIMEOUT: "no answer before the deadline",
    record_pb2.FAULT_KIND_TIME_BANK_EXHAUSTED: "the time bank ran out",
    record_pb2.FAULT_KIND_UNREACHABLE: "the bot could not be reached",
    record_pb2.FAULT_KIND_TRANSPORT_ERROR: "the call failed",
    record_pb2.FAULT_KIND_RESPONSE_TOO_LARGE: "the answer was too large",
}
"""A fault's public detail, for the kinds whose stored detail is transport text (a gRPC status
and its message, a resolver's or socket's error). The other kinds' details are the referee's
own words about the answer (which action, why it is not legal) and stay."""

UNREACHABLE = "unreachable or too slow"

_VALIDATION_FAULTS = re.compile(r"validation match \S+ failed: (\d+) fault\(s\); first: ([a-z_]+):")
"""The stored detail of a bot that failed validation with faults (``Store._apply_validation``):
the count and the first fault's kind, which the public detail may repeat."""


def _fault_kind(name: str) -> int:
    """``FAULT_KIND_TIMEOUT`` for "timeout"; 0 for a name that is not a kind."""
    try:
        return int(record_pb2.FaultKind.Value(f"FAULT_KIND_{name.upper()}"))
    except ValueError:
        return 0


def public_state_detail(state: int, detail: str) -> str:
    """A bot's state detail as strangers see it: built from the state and the shape of the
    stored detail, never a copy of it (only a fault count and a fault kind name pass)."""
    if state == pb.BOT_STATE_REJECTED:
        found = _VALIDATION_FAULTS.match(detail)
        if found is None:
            voided = "unreachable at the start" in detail
            return f"failed validation: {UNREACHABLE}" if voided else "failed validation"
        count, kind = int(found[1]), _fault_kind(found[2])
        if not kind or kind in NETWORK_FAULTS:
            return f"failed validation: {UNREACHABLE}"
        return f"failed validation: {count} fault(s) ({found[2].upper()})"
    if state == pb.BOT_STATE_UNHEALTHY:
        return f"pulled from matchmaking: {UNREACHABLE}"
    operator = detail.startswith(("paused by the operator", "owner banned by the operator"))
    if state == pb.BOT_STATE_PAUSED:
        return "held by the operator" if operator else ("paused" if detail else "")
    if state == pb.BOT_STATE_RETIRED:
        return "retired by the operator" if detail.startswith("retired by the") else ""
    if state == pb.BOT_STATE_ACTIVE:
        return detail if detail in ("passed validation", "answering again") else ""
    if state == pb.BOT_STATE_VALIDATING:
        return "validating"
    return ""


def bot_view(bot: pb.Bot, viewer: Viewer) -> pb.Bot:
    """``bot`` as ``viewer`` may see it (changed in place, and returned)."""
    if not viewer.sees(bot.owner):
        bot.endpoint = ""
        bot.state_detail = public_state_detail(bot.state, bot.state_detail)
    return bot


def standings_view(response: pb.GetStandingsResponse, viewer: Viewer) -> pb.GetStandingsResponse:
    """Standings with each bot as ``viewer`` may see it (in place, and returned)."""
    for standing in response.standings:
        bot_view(standing.bot, viewer)
    return response


def profile_view(response: pb.GetBotProfileResponse, viewer: Viewer) -> pb.GetBotProfileResponse:
    """A bot's profile as ``viewer`` may see it (in place, and returned): its figures are
    public, its endpoint and state detail are its owner's."""
    bot_view(response.bot, viewer)
    return response


def public_status_detail(record: record_pb2.MatchRecord) -> str:
    """Why a match ended, without the seats' addresses and errors the stored text names."""
    status = record.status
    if status == record_pb2.MATCH_STATUS_COMPLETED:
        return "played to the end"
    if status == record_pb2.MATCH_STATUS_FORFEITED:
        if record.HasField("forfeited_seat"):
            return f"seat {record.forfeited_seat} forfeited: too many faults"
        return "forfeited: too many faults"
    if status == record_pb2.MATCH_STATUS_VOIDED:
        if record.status_detail.startswith("unreachable at the start"):
            return f"not played: a seat was {UNREACHABLE} at the start"
        if record.status_detail.startswith("voided by an operator"):
            return "voided by the operator"
        return "voided"
    if status == record_pb2.MATCH_STATUS_ABORTED:
        return "stopped before the end"
    return ""


def record_view(
    record: record_pb2.MatchRecord, seat_owners: Sequence[str], viewer: Viewer
) -> record_pb2.MatchRecord:
    """A match record as ``viewer`` may see it: ``record`` itself for the admin, else a copy
    where the seats that are not the viewer's (``seat_owners``: the owner of each seat's bot,
    '' for the house bot) have no endpoint and neutral fault details. The status detail, which
    names every seat, is shown in full only to a viewer who sees every seat."""
    if viewer.admin:
        return record
    visible = {seat for seat, owner in enumerate(seat_owners) if viewer.sees(owner)}
    shown = record_pb2.MatchRecord()
    shown.CopyFrom(record)
    for seat in shown.seats:
        if seat.seat not in visible:
            seat.endpoint = ""
    for move in shown.moves:
        if move.seat not in visible and move.fault in NEUTRAL_FAULT_DETAILS:
            move.fault_detail = NEUTRAL_FAULT_DETAILS[move.fault]
    players = {seat for seat, owner in enumerate(seat_owners) if owner}
    if not players or not players <= visible:
        shown.status_detail = public_status_detail(record)
    return shown
