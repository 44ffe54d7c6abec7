"""How a bot's stream wakes the trio tasks waiting on it, cheaply (issue 20).

A decision over a stream costs less than a unary call, so what trio does around it shows:
an ``Event`` per request, a ``CapacityLimiter`` with its borrower bookkeeping, one
``run_sync_soon`` per answer. Here instead:

- ``Waiter``: one request's trio task, parked with ``wait_task_rescheduled`` and woken by
  ``Waker``;
- ``Waker``: wakes the waiters due from the asyncio host loop, every waiter due by trio's next
  tick with one ``run_sync_soon`` (each costs a write to trio's wake-up socket);
- ``Slots``: at most ``limit`` requests in flight per bot; a free slot is taken without a trio
  checkpoint, a full bot's callers queue in order.
"""

from __future__ import annotations

import weakref
from collections.abc import Coroutine
from typing import Any

import trio


class Waiter:
    """One trio task waiting for its request's answer (or deadline, or fault)."""

    __slots__ = ("_task", "ready")

    def __init__(self) -> None:
        self._task: trio.lowlevel.Task | None = None
        self.ready = False
        """Set (by ``Waker``, on trio's side) once the task may look at its request again."""

    def wait(self) -> Coroutine[Any, Any, object]:
        """Park until ``Waker`` wakes this waiter (at once if it did already); cancellable.
        Await it. (Not async itself: what it returns is awaited directly, a frame fewer.)"""
        if self.ready:
            return trio.lowlevel.checkpoint()
        self._task = trio.lowlevel.current_task()
        return trio.lowlevel.wait_task_rescheduled(self._abort)

    def _abort(self, _: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
        self._task = None  # cancelled: a later ``wake`` reschedules nothing
        return trio.lowlevel.Abort.SUCCEEDED

    def wake(self) -> None:
        """Mark ready and reschedule the parked task, if any (trio side, once)."""
        self.ready = True
        task, self._task = self._task, None
        if task is not None:
            trio.lowlevel.reschedule(task)


class Waker:
    """Wakes waiters from the host loop, many per trio wake-up: each ``run_sync_soon``
    costs a write to trio's wake-up socket and a pass of its entry queue, which cost as much
    as the stream message itself when done once per answer."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self._token = token
        self._due: list[Waiter] = []

    def wake_soon(self, waiter: Waiter) -> None:
        """Wake ``waiter`` at trio's next tick (with every other waiter due by then)."""
        self._due.append(waiter)
        if len(self._due) == 1:
            try:
                self._token.run_sync_soon(self._flush)
            except trio.RunFinishedError:  # trio ended: nobody waits any more
                self._due.clear()

    def _flush(self) -> None:
        due, self._due = self._due, []
        for waiter in due:
            waiter.wake()


_WAKERS: weakref.WeakKeyDictionary[trio.lowlevel.TrioToken, Waker] = weakref.WeakKeyDictionary()


def current_waker() -> Waker:
    """The current trio run's waker (one per run, shared by every bot's stream)."""
    token = trio.lowlevel.current_trio_token()
    waker = _WAKERS.get(token)
    if waker is None:
        waker = _WAKERS[token] = Waker(token)
    return waker


class Slots:
    """At most ``limit`` requests in flight; the others wait their turn, first come first
    served (a freed slot passes straight to the longest waiting)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._taken = 0
        self._queue = trio.lowlevel.ParkingLot()

    async def take(self) -> None:
        """Take a slot: at once (no checkpoint) if one is free, else wait for one."""
        if not self.try_take():
            await self.wait_for_one()

    def try_take(self) -> bool:
        """Take a slot if one is free and nobody waits for one (no await: the hot path)."""
        if self._taken < self._limit and not self._queue:
            self._taken += 1
            return True
        return False

    async def wait_for_one(self) -> None:
        """Wait for the slot ``give_back`` hands over (after ``try_take`` found none)."""
        await self._queue.park()

    def give_back(self) -> None:
        """Free a slot taken with ``take`` (or hand it to the next waiting)."""
        if not self._queue or not self._queue.unpark():
            self._taken -= 1

    @property
    def in_use(self) -> int:
        """Slots taken plus callers waiting for one."""
        return self._taken + len(self._queue)
