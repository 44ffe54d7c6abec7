"""A tournament's rotations in the match queue, on real SQLite and real PostgreSQL: a bot's
limit of matches at once holds across its ladder and tournament matches (each side waits for
the other), tournament matches are listed while played with their tournament, withheld like a
ladder's duplicate rotations, never claimed or requeued by the ladder workers, and cleaned up
after a process that left them; a rotation waiting for a bot reserves its slot, so a busy
ladder cannot starve it, and reservations are served oldest first. And ConnectBot's
credentials are checked in one read."""

from __future__ import annotations

from contextlib import AbstractContextManager

import pytest

from arena.bot_transport import OUTBOUND_UNNAMED
from arena.matchmaking import PlannedMatch
from arena.store.db import Tx
from arena.store.listings import Listings, MatchQuery
from arena.store.repository import Store, StoreError
from arena.store.tournaments import Tournaments
from cardarena.arena.v1 import arena_service_pb2 as pb
from tests.test_store import active_bots, finished_record, ladder_config


def a_tournament(store: Store) -> tuple[Tournaments, str]:
    tournaments = Tournaments(store.db, store.clock)
    row = tournaments.create(pb.TournamentConfig(name="cup"))
    return tournaments, row.tournament_id


def queued_set(
    tournaments: Tournaments, tournament_id: str, seats: list[str], worker: str = "w"
) -> list[str]:
    """A two-rotation set of ``seats`` (the second seated the other way round), pending."""
    ids = [f"{tournament_id}-0.0.0.{index}-{worker}" for index in range(2)]
    rotations = [(ids[0], seats, 99), (ids[1], seats[::-1], 99)]
    tournaments.add_set(tournament_id, worker, rotations)
    return ids


def statuses(store: Store) -> dict[str, str]:
    with store.db.transaction() as tx:
        return dict(tx.all("SELECT match_id, status FROM matches"))


def test_a_bots_limit_holds_across_its_ladder_and_tournament_matches(store: Store) -> None:
    """A bot that announced one match at a time: while its ladder match plays, its tournament
    rotation waits; while the rotation plays, no worker claims its next ladder match."""
    (one, b, c), _ = active_bots(store, 3)
    store.set_announced_limits({one: 1, b: 0, c: 0})
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    store.enqueue(ladder_id, "ladder", [PlannedMatch(1, (one, b))])
    ladder_match = store.claim("w", 60)
    assert ladder_match is not None
    tournaments, tournament_id = a_tournament(store)
    first, _ = queued_set(tournaments, tournament_id, [one, c])
    assert tournaments.start_match(first, "w", 0) is False, "one is at its limit: wait"
    assert store.record_result(finished_record(ladder_match.match_id, [1, 2], [1, 0]), "w")
    assert tournaments.start_match(first, "w", 0) is True, "its slot is free again"
    store.enqueue(ladder_id, "ladder", [PlannedMatch(2, (one, b))])
    assert store.claim("w", 60) is None, "the ladder sees the tournament match in flight"
    tournaments.end_matches([first])
    assert store.claim("w", 60) is not None


def enqueue_each(store: Store, ladder_id: str, seatings: list[tuple[str, str]]) -> None:
    """One ladder set of one match per seating, in order (each recorded on its own)."""
    for seed, seats in enumerate(seatings):
        store.enqueue(ladder_id, "ladder", [PlannedMatch(seed, seats)])


def ticking_tournaments(store: Store) -> Tournaments:
    """Tournaments on a clock that moves on a microsecond at every read: reservations taken one
    after another are ordered by time, not by the tie-break on match ids."""
    ticks = iter(range(store.clock(), store.clock() + 10**9))
    return Tournaments(store.db, lambda: next(ticks))


def test_a_reservation_stops_a_busy_ladder_from_starving_a_rotation(store: Store) -> None:
    """A bot playing two ladder matches at once, its limit: its rotation reserves a slot, so
    when one ladder match ends the ladder (or validation) claims nothing more for it and the
    rotation starts; the reservation counts for claims only while it waits."""
    (one, b, c), _ = active_bots(store, 3)
    store.set_announced_limits({one: 2, b: 0, c: 0})
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    enqueue_each(store, ladder_id, [(one, b)] * 4)
    first, second = store.claim("w", 60), store.claim("w", 60)
    assert first is not None and second is not None and store.claim("w", 60) is None
    tournaments = ticking_tournaments(store)
    tournament_id = tournaments.create(pb.TournamentConfig(name="cup")).tournament_id
    rotation, later = queued_set(tournaments, tournament_id, [one, c])
    assert tournaments.start_match(rotation, "w", 0) is False, "one is at its limit: wait"
    assert statuses(store)[rotation] == "reserved" and statuses(store)[later] == "pending"
    assert store.record_result(finished_record(first.match_id, [1, 2], [1, 0]), "w")
    assert store.claim("w", 60) is None, "the reserved slot is the rotation's"
    assert store.claim("w", 60, ladder_only=True) is None
    assert tournaments.start_match(rotation, "w", 0) is True, "its own reservation is no bar"
    assert store.claim("w", 60) is None, "one plays its ladder match and the rotation"
    tournaments.end_matches([rotation])
    assert store.claim("w", 60) is not None, "the slot went back to the ladder"


def test_reservations_of_the_same_bots_are_served_oldest_first_without_deadlock(
    store: Store,
) -> None:
    """Two tournaments' rotations seat the same two bots (each one match at once), both
    busy in the ladder: the older reservation starts first whichever asks first, the younger
    once it ends; neither waits for the other in a circle. A gone process's reservation is
    dropped with its rows and frees the bots' slots."""
    (x, y, b, c), _ = active_bots(store, 4)
    store.set_announced_limits({x: 1, y: 1, b: 0, c: 0})
    ladder_id = store.create_ladder(ladder_config(seats=2))
    store.enter_active_bots(ladder_id, "oh-hell")
    enqueue_each(store, ladder_id, [(x, b), (y, c)])
    on_x, on_y = store.claim("w", 60), store.claim("w", 60)
    assert on_x is not None and on_y is not None
    tournaments = ticking_tournaments(store)
    cups = [tournaments.create(pb.TournamentConfig(name=n)).tournament_id for n in ("a", "z")]
    older = queued_set(tournaments, cups[1], [x, y])[0]  # the later tournament reserves first
    younger = queued_set(tournaments, cups[0], [y, x])[0]
    assert tournaments.start_match(older, "w", 0) is False
    assert tournaments.start_match(younger, "w", 0) is False
    assert store.record_result(finished_record(on_y.match_id, [1, 2], [1, 0]), "w")
    assert tournaments.start_match(younger, "w", 0) is False, "y is the older one's next"
    assert store.record_result(finished_record(on_x.match_id, [1, 2], [1, 0]), "w")
    assert tournaments.start_match(younger, "w", 0) is False, "still the older one's turn"
    assert tournaments.start_match(older, "w", 0) is True
    assert tournaments.start_match(younger, "w", 0) is False, "x and y are playing"
    tournaments.end_matches([older])
    assert tournaments.start_match(younger, "w", 0) is True
    tournaments.end_matches([younger])
    gone = queued_set(tournaments, cups[0], [x, b], worker="gone")[0]
    store.enqueue(ladder_id, "ladder", [PlannedMatch(3, (x, c))])
    mine = store.claim("w", 60)
    assert mine is not None and tournaments.start_match(gone, "gone", 0) is False
    assert store.record_result(finished_record(mine.match_id, [1, 2], [1, 0]), "w")
    store.enqueue(ladder_id, "ladder", [PlannedMatch(4, (x, c))])
    assert store.claim("w", 60) is None, "x is reserved by the gone process's rotation"
    assert tournaments.drop_stale_matches("here", []) == 4, "and both cups' second rotations"
    assert store.claim("w", 60) is not None, "its reservation went with its rows"


def test_a_tournament_cap_is_its_ladders_or_the_default(store: Store) -> None:
    """A bot that announced no preference plays the default number of matches at once (4),
    or its tournament's ladder's cap."""
    (one, *others), _ = active_bots(store, 6)
    store.set_announced_limits(dict.fromkeys([one, *others], 0))
    tournaments, tournament_id = a_tournament(store)
    rotations = [
        (f"{tournament_id}-{index}", [one, other], index) for index, other in enumerate(others)
    ]
    tournaments.add_set(tournament_id, "w", rotations)
    started = [tournaments.start_match(match_id, "w", 0) for match_id, _, _ in rotations]
    assert started == [True, True, True, True, False]
    assert tournaments.start_match(rotations[4][0], "w", 5) is True, "a ladder's cap of 5"


def test_tournament_matches_are_listed_while_played_and_withheld_like_rotations(
    store: Store,
) -> None:
    (one, two), _ = active_bots(store, 2)
    tournaments, tournament_id = a_tournament(store)
    first, second = queued_set(tournaments, tournament_id, [one, two])
    listings = Listings(store.db)
    assert listings.matches(MatchQuery())[0] == [], "a pending rotation is not listed"
    assert tournaments.start_match(first, "w", 0)
    (listed,), _ = listings.matches(MatchQuery(bot_id=two))
    assert (listed.match_id, listed.tournament_id, listed.kind) == (
        first,
        tournament_id,
        "tournament",
    )
    assert listed.phase == pb.MATCH_PHASE_PLAYING and not listed.ladder_id
    assert [seat.bot_id for seat in listed.seats] == [one, two]
    assert listings.match(first).tournament_id == tournament_id
    assert store.rotations_unfinished(first) == 1, "the other rotation of its deal is pending"
    assert listings.matches(MatchQuery(ladder=store.create_ladder(ladder_config())))[0] == []
    tournaments.end_matches([first])
    assert tournaments.start_match(second, "w", 0)
    assert store.rotations_unfinished(second) == 0, "the last rotation may be watched"
    assert [m.match_id for m in listings.matches(MatchQuery())[0]] == [second]
    tournaments.end_matches([second])
    assert listings.matches(MatchQuery())[0] == [], "over: its crosstable has the result"
    assert statuses(store) == {}


def test_ladder_workers_never_claim_or_requeue_a_tournament_match(store: Store) -> None:
    """A tournament's rows are the tournament player's: a claim passes them over, recovery
    after a worker died leaves them (no ladder worker would play them), and the lease
    holder's tick drops what a gone process left, keeping its own."""
    (one, two), _ = active_bots(store, 2)
    tournaments, tournament_id = a_tournament(store)
    gone = queued_set(tournaments, tournament_id, [one, two], worker="gone")
    assert tournaments.start_match(gone[0], "gone", 0)
    mine = queued_set(tournaments, tournament_id, [one, two], worker="here")
    assert store.claim("w", 60) is None
    assert store.recover("gone") == 0
    assert statuses(store) == {
        gone[0]: "playing",
        gone[1]: "pending",
        mine[0]: "pending",
        mine[1]: "pending",
    }
    assert tournaments.drop_stale_matches("here", [tournament_id]) == 2
    assert sorted(statuses(store)) == sorted(mine)
    assert tournaments.start_match(gone[1], "gone", 0) is None, "its set was dropped"
    assert tournaments.drop_stale_matches("here", []) == 2, "a tournament no longer played"
    assert statuses(store) == {}


def test_connect_bot_reads_its_credentials_and_bot_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot comes back with the check, in one transaction; a wrong token opens nothing, an
    unknown bot is NOT_FOUND and a banned owner's key says why, as before."""
    bot, token = store.register_bot("ann", None, "out", "oh-hell", OUTBOUND_UNNAMED, "1")
    other = store.register_bot("ann", token, "out2", "oh-hell", OUTBOUND_UNNAMED, "1")[0].bot_id
    assert token is not None
    bot_id = bot.bot_id
    key = store.create_bot_key(bot_id, token)
    reads = 0
    transaction = store.db.transaction

    def counted(durable: bool = True, pipelined: bool = False) -> AbstractContextManager[Tx]:
        nonlocal reads
        reads += 1
        return transaction(durable, pipelined)

    monkeypatch.setattr(store.db, "transaction", counted)
    connecting = store.connecting_bot(bot_id, key)
    assert reads == 1
    monkeypatch.undo()
    assert connecting is not None
    assert connecting == store.bot(bot_id) and connecting.endpoint == f"outbound://{bot_id}"
    assert store.connecting_bot(bot_id, token) == connecting
    assert store.connecting_bot(other, key) is None
    with pytest.raises(StoreError) as unknown:
        store.connecting_bot("nobody", key)
    assert unknown.value.code == "NOT_FOUND"
    store.ban_owner("ann", "cheating")
    with pytest.raises(StoreError) as banned:
        store.connecting_bot(bot_id, key)
    assert banned.value.code == "PERMISSION_DENIED" and "cheating" in str(banned.value)
