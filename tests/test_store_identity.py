"""Owners on real SQLite and PostgreSQL: per-owner limits, new-owner refusal, token rotation and
revocation, the operator's holds and bans (and that banned bots leave matchmaking)."""

from __future__ import annotations

import pytest

from arena.matchmaking import PlannedMatch
from arena.store.repository import OwnerLimits, Store, StoreError
from tests.test_store import ladder_config


def register(
    store: Store, owner: str, token: str | None, name: str, max_bots: int = 0, per_hour: int = 0
) -> str | None:
    """Register a bot; returns the new owner token, if one was made."""
    limits = OwnerLimits(max_bots=max_bots, per_hour=per_hour)
    endpoint = f"{owner}.example:1"  # an address has one owner: each owner its own
    return store.register_bot(owner, token, name, "oh-hell", endpoint, "1", limits=limits)[1]


def refused(code: str, call: object, *args: object) -> StoreError:
    with pytest.raises(StoreError) as error:
        call(*args)  # type: ignore[operator]
    assert error.value.code == code, error.value
    return error.value


def test_an_owner_has_a_bot_count_and_an_hourly_registration_limit(store: Store) -> None:
    token = register(store, "ann", None, "b0")
    for index in range(1, 3):
        register(store, "ann", token, f"b{index}", max_bots=3)
    with pytest.raises(StoreError) as over:
        register(store, "ann", token, "b3", max_bots=3)
    assert over.value.code == "RESOURCE_EXHAUSTED" and "3 bots" in str(over.value)
    retired = store.bots()[0].bot_id
    store.set_bot_state(retired, token, "retired")
    register(store, "ann", token, "b3", max_bots=3)  # a retired bot does not count

    with pytest.raises(StoreError) as hourly:
        register(store, "ann", token, "b4", per_hour=4)
    assert hourly.value.code == "RESOURCE_EXHAUSTED"
    assert 3590 < hourly.value.retry_after_s <= 3600, "until the oldest leaves the hour"
    assert len(store.bots()) == 4, "a refused registration leaves nothing behind"
    register(store, "bob", None, "b0", per_hour=1, max_bots=1)  # limits are per owner


def test_a_new_owner_is_made_only_if_the_callers_policy_allows(store: Store) -> None:
    calls: list[str] = []

    def closed() -> None:
        calls.append("asked")
        raise StoreError("PERMISSION_DENIED", "registration is closed")

    limits = OwnerLimits(new_owner=closed)
    with pytest.raises(StoreError) as denied:
        store.register_bot("eve", None, "b", "oh-hell", "h:1", "1", limits=limits)
    assert denied.value.code == "PERMISSION_DENIED" and calls == ["asked"]
    with pytest.raises(StoreError):  # a made-up token does not get around it
        store.register_bot("eve", "made-up", "b", "oh-hell", "h:1", "1", limits=limits)
    assert store.bots() == []
    token = store.create_owner("eve")
    refused("ALREADY_EXISTS", store.create_owner, "eve")
    bot, again = store.register_bot("eve", token, "b", "oh-hell", "h:1", "1", limits=limits)
    assert again is None and bot.owner == "eve" and calls == ["asked", "asked"], (
        "an existing owner's registration does not ask"
    )


def test_a_rotated_token_replaces_the_old_and_a_revoked_one_works_nowhere(store: Store) -> None:
    old = register(store, "ann", None, "b0")
    bot_id = store.bots()[0].bot_id
    refused("PERMISSION_DENIED", store.rotate_token, "ann", "wrong")
    new = store.rotate_token("ann", old)
    assert new != old
    refused("PERMISSION_DENIED", store.set_bot_state, bot_id, old, "paused")
    refused("PERMISSION_DENIED", register, store, "ann", old, "b1")
    refused("PERMISSION_DENIED", store.rotate_token, "ann", old)
    assert store.set_bot_state(bot_id, new, "paused").state == "paused"
    store.revoke_token("ann")
    for token in (old, new, ""):
        refused("PERMISSION_DENIED", store.set_bot_state, bot_id, token, "active")
        refused("PERMISSION_DENIED", store.rotate_token, "ann", token)
    given = store.rotate_token("ann", None, admin=True)
    resumed = store.set_bot_state(bot_id, given, "active")
    assert resumed.state == "validating", "it was paused before it passed validation"
    refused("NOT_FOUND", store.rotate_token, "nobody", None, True)
    refused("NOT_FOUND", store.revoke_token, "nobody")


def test_the_operators_hold_is_released_only_by_the_operator(store: Store) -> None:
    token = register(store, "ann", None, "b0")
    bot_id = store.bots()[0].bot_id
    store.set_state_by_arena(bot_id, "active", "passed validation", 0)
    held = store.admin_set_bot_state(bot_id, "paused", "spamming the queue")
    assert held.state == "paused" and "spamming the queue" in held.state_detail
    for attempt in (
        lambda: store.set_bot_state(bot_id, token, "active"),
        lambda: store.update_bot(bot_id, token, "", "2"),  # a new version would revalidate
        lambda: store.set_bot_state(bot_id, token, "retired"),
    ):
        error = refused("FAILED_PRECONDITION", attempt)
        assert "spamming the queue" in str(error)
    store.set_state_by_arena(bot_id, "active", "answering again", 0)  # a late health sweep
    assert store.bot(bot_id).state == "paused", "the arena's own changes do not undo a hold"
    released = store.admin_set_bot_state(bot_id, "active", "sorted out")
    assert released.state == "validating", "a released bot is validated again"
    assert store.set_bot_state(bot_id, token, "paused").state == "paused", "the owner's again"
    retired = store.admin_set_bot_state(bot_id, "retired", "abandoned")
    assert retired.state == "retired" and "abandoned" in retired.state_detail
    refused("FAILED_PRECONDITION", store.admin_set_bot_state, bot_id, "active", "")
    refused("NOT_FOUND", store.admin_set_bot_state, "missing", "paused", "x")


def test_a_banned_owner_cannot_act_and_its_bots_leave_matchmaking(store: Store) -> None:
    token = register(store, "ann", None, "a0")
    for index in range(1, 3):
        register(store, "ann", token, f"a{index}")
    other = register(store, "bob", None, "b0")
    ann = [bot.bot_id for bot in store.bots() if bot.owner == "ann"]
    bob = [bot.bot_id for bot in store.bots() if bot.owner == "bob"]
    for bot_id in ann + bob:
        store.set_state_by_arena(bot_id, "active", "", 0)
    store.set_bot_state(ann[2], token, "retired")
    ladder_id = store.create_ladder(ladder_config())
    store.enter_active_bots(ladder_id, "oh-hell")
    assert {e.bot_id for e in store.entrants(ladder_id)} == {*ann[:2], *bob}

    assert store.ban_owner("ann", "cheating with a shared hand") == 2, "not the retired bot"
    assert {e.bot_id for e in store.entrants(ladder_id)} == set(bob)
    assert not store.enqueue(ladder_id, "ladder", [PlannedMatch(1, (ann[0], ann[1], bob[0]))])
    assert store.bot(ann[0]).state == "paused"
    assert "cheating with a shared hand" in store.bot(ann[0]).state_detail
    assert store.bot(ann[2]).state == "retired"
    for attempt in (
        lambda: store.set_bot_state(ann[0], token, "active"),
        lambda: store.update_bot(ann[0], token, "h:2", ""),
        lambda: register(store, "ann", token, "a9"),
        lambda: store.rotate_token("ann", token),
    ):
        assert "banned by the operator: cheating" in str(refused("PERMISSION_DENIED", attempt))
    refused("PERMISSION_DENIED", store.set_bot_state, ann[0], "wrong", "active")
    refused("FAILED_PRECONDITION", store.admin_set_bot_state, ann[0], "active", "")
    assert store.set_bot_state(bob[0], other, "paused").state == "paused", "bob is untouched"

    assert store.unban_owner("ann") == 2
    assert store.bot(ann[0]).state == "paused", "paused until its owner resumes it"
    assert store.set_bot_state(ann[0], token, "active").state == "active"
    refused("NOT_FOUND", store.ban_owner, "nobody", "x")


def test_an_operator_hold_outlasts_a_ban(store: Store) -> None:
    token = register(store, "ann", None, "a0")
    bot_id = store.bots()[0].bot_id
    store.admin_set_bot_state(bot_id, "paused", "its own reason")
    assert store.ban_owner("ann", "the owner's reason") == 0
    assert store.unban_owner("ann") == 0
    error = refused("FAILED_PRECONDITION", store.set_bot_state, bot_id, token, "active")
    assert "its own reason" in str(error)


def test_no_pause_lets_a_bot_skip_validation(store: Store) -> None:
    """Paused by its owner or by a ban while in validation, a bot resumes to validation."""
    token = register(store, "ann", None, "a0")
    assert token is not None
    bot_id = store.bots()[0].bot_id
    store.ban_owner("ann", "a test")
    store.unban_owner("ann")
    assert store.set_bot_state(bot_id, token, "active").state == "validating"
    store.set_state_by_arena(bot_id, "rejected", "failed validation", 0)
    refused("FAILED_PRECONDITION", store.set_bot_state, bot_id, token, "paused")
