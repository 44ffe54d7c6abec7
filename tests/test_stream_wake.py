"""referee.stream_wake: the waiter, waker and slots a bot's stream parks its requests on."""

from __future__ import annotations

import trio
import trio.testing

from referee.stream_wake import Slots, Waiter, current_waker


async def test_a_waiter_wakes_on_the_waker_and_many_wake_in_one_tick() -> None:
    waiters = [Waiter() for _ in range(5)]
    woken: list[int] = []

    async def wait(index: int) -> None:
        await waiters[index].wait()
        woken.append(index)

    async with trio.open_nursery() as nursery:
        for index in range(5):
            nursery.start_soon(wait, index)
        await trio.testing.wait_all_tasks_blocked()
        waker = current_waker()
        assert current_waker() is waker  # one per run
        for waiter in waiters[:3]:
            waker.wake_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(woken) == [0, 1, 2]
        assert not waiters[3].ready
        for waiter in waiters[3:]:
            waker.wake_soon(waiter)
    assert sorted(woken) == [0, 1, 2, 3, 4]


async def test_a_waiter_woken_before_it_waits_returns_at_once() -> None:
    waiter = Waiter()
    waiter.wake()
    with trio.fail_after(1):
        await waiter.wait()


async def test_a_cancelled_waiter_is_not_rescheduled_by_a_later_wake() -> None:
    waiter = Waiter()
    with trio.move_on_after(0.01) as scope:
        await waiter.wait()
    assert scope.cancelled_caught
    waiter.wake()  # the task left: nothing to reschedule (trio would raise if it did)
    await trio.sleep(0)
    assert waiter.ready


async def test_slots_admit_up_to_the_limit_then_hand_over_in_order() -> None:
    slots = Slots(2)
    await slots.take()
    await slots.take()
    assert slots.in_use == 2
    order: list[int] = []

    async def later(index: int) -> None:
        await slots.take()
        order.append(index)

    async with trio.open_nursery() as nursery:
        for index in range(3):
            nursery.start_soon(later, index)
            await trio.testing.wait_all_tasks_blocked()
        assert slots.in_use == 5 and order == []
        slots.give_back()
        await trio.testing.wait_all_tasks_blocked()
        assert order == [0]
        for _ in range(2):
            slots.give_back()
            await trio.testing.wait_all_tasks_blocked()
    assert order == [0, 1, 2]
    assert slots.in_use == 2  # the three admitted hold theirs
    for _ in range(2):
        slots.give_back()
    assert slots.in_use == 0


async def test_a_caller_cancelled_while_queued_for_a_slot_leaves_the_queue() -> None:
    slots = Slots(1)
    await slots.take()
    with trio.move_on_after(0.01):
        await slots.take()
    assert slots.in_use == 1
    slots.give_back()
    assert slots.in_use == 0
    await slots.take()  # free at once, no checkpoint needed
    assert slots.in_use == 1
