"""Which of the named leadership leases (``arena.store.coordination``) this process holds.

A holder renews a lease once a third of it has passed, so a lease it holds is good for at
least two thirds of ``lease_s`` after ``lead`` says so; a process that does not hold one asks
again at most every ``retry_s``. Failover after a holder dies therefore takes at most
``lease_s + retry_s``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from arena.store.coordination import Coordination

Db = Callable[..., Awaitable[Any]]
"""Runs a store function off the event loop (``Arena.db``)."""


@dataclass
class _Held:
    epoch: int | None
    asked_at: float


class Leadership:
    """This process's view of the leases it holds, renewed as they are used."""

    def __init__(
        self, db: Db, coordination: Coordination, worker_id: str, lease_s: float, retry_s: float
    ) -> None:
        self._db = db
        self._coordination = coordination
        self.worker_id = worker_id
        self.lease_s = lease_s
        self.retry_s = retry_s
        self._leases: dict[str, _Held] = {}

    async def lead(self, name: str, lease_s: float | None = None) -> int | None:
        """The lease's epoch if this process holds ``name`` (taking or renewing it when due,
        for ``lease_s``, default ``self.lease_s``), else None."""
        lease_s = self.lease_s if lease_s is None else lease_s
        now = trio.current_time()
        held = self._leases.get(name)
        if held is not None:
            due = lease_s / 3 if held.epoch is not None else self.retry_s
            if now - held.asked_at < due:
                return held.epoch
        epoch: int | None = await self._db(self._coordination.lead, name, self.worker_id, lease_s)
        self._leases[name] = _Held(epoch, now)
        return epoch

    def lost(self, name: str) -> None:
        """A write on the lease's authority was refused: ask the database again next time."""
        self._leases.pop(name, None)

    def lost_all(self) -> None:
        """This process's registration ran out: hold nothing until the database says so."""
        self._leases.clear()

    def holding(self) -> list[str]:
        """The leases this process believes it holds."""
        return sorted(name for name, held in self._leases.items() if held.epoch is not None)

    async def resign_all(self) -> None:
        """Give up every lease held (a stopping process: the next holder needs no wait)."""
        for name in self.holding():
            await self._db(self._coordination.resign, name, self.worker_id)
        self._leases.clear()
