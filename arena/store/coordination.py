"""How many arena processes on one database act as one arena: who is alive, who leads what.

Workers: every arena process registers under an id no two live processes share, and renews a
short lease (its heartbeat) while it runs. A match whose worker's lease ran out goes back to
the queue (``Store.recover``); a process whose own lease ran out (a stall, a lost database)
finds it cannot renew it (a new ``incarnation`` is needed) and gives its matches up.

Leadership: a named lease row (``leases``), held by one worker until it expires; its holder
renews it, anyone takes it once it has expired, and ``epoch`` grows at every change of holder
so a deposed holder's late write can be refused (a fencing token). A lease row, not a session
advisory lock: it needs no connection pinned per process (the store runs on a pool, possibly
behind PgBouncer in transaction mode), a frozen process loses it by the clock rather than by
TCP keep-alives, it is visible in a table, and SQLite runs the same code.

Every time here is the database's clock (``Tx.clock``), never a process's: processes on
several machines compare one clock.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from arena.store.db import Database, Pending, Tx

ROLES = ("api", "scheduler", "referee")
"""What a process may run besides the API it always serves (``all`` is every role)."""


class WorkerIdInUse(RuntimeError):
    """Another live process is registered under this worker id."""


@dataclass(frozen=True)
class Worker:
    """One registered arena process, as another process sees it."""

    worker_id: str
    roles: tuple[str, ...]
    address: str
    host: str
    pid: int
    started_at_us: int
    alive_until_us: int
    draining: bool
    alive: bool
    matches_playing: int = 0


def default_worker_id() -> str:
    """``CARDARENA_WORKER_ID`` if set (Kubernetes: the pod name), else the host name and six
    random hex digits: two processes never pick the same one by default."""
    return os.environ.get("CARDARENA_WORKER_ID") or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


def _us(seconds: float) -> int:
    return int(seconds * 1e6)


class Coordination:
    """Worker registration, heartbeats and leadership leases on the arena's database."""

    def __init__(self, database: Database) -> None:
        self.db = database

    # -- workers --------------------------------------------------------------------------------

    def register(self, worker_id: str, roles: tuple[str, ...], address: str, lease_s: float) -> str:
        """Register this process as ``worker_id`` with a lease of ``lease_s``; its new
        incarnation. ``WorkerIdInUse`` if a live process holds the id. A registration is
        taken over once its lease ran out (that process is dead, or will find out), or at
        once when it is this host's and its process is gone (a restart under a fixed id)."""
        incarnation = uuid.uuid4().hex
        host = socket.gethostname()
        with self.db.transaction() as tx:
            before = tx.one(
                "SELECT incarnation, host, pid FROM workers WHERE worker_id = ?", (worker_id,)
            )
            dead = before[0] if before and _is_gone(before[1], before[2], host) else ""
            taken = tx.one(
                "INSERT INTO workers (worker_id, incarnation, roles, address, host, pid, "
                f"started_at_us, alive_until_us) VALUES (?, ?, ?, ?, ?, ?, {tx.clock}, "
                f"{tx.clock} + ?) ON CONFLICT (worker_id) DO UPDATE SET "
                "incarnation = excluded.incarnation, roles = excluded.roles, "
                "address = excluded.address, host = excluded.host, pid = excluded.pid, "
                "started_at_us = excluded.started_at_us, "
                "alive_until_us = excluded.alive_until_us, draining = 0 "
                f"WHERE workers.alive_until_us <= {tx.clock} OR workers.incarnation = ? "
                "RETURNING 1",
                (
                    *(worker_id, incarnation, ",".join(roles), address, host, os.getpid()),
                    *(_us(lease_s), dead),
                ),
            )
            if taken is None:
                holder = tx.one("SELECT host, pid FROM workers WHERE worker_id = ?", (worker_id,))
                raise WorkerIdInUse(
                    f"worker id {worker_id!r} is in use by a live arena process (host "
                    f"{holder[0]!r}, pid {holder[1]}): give this one another --worker-id, or "
                    "leave it unset for a unique one"
                )
        return incarnation

    def heartbeat(
        self, worker_id: str, incarnation: str, lease_s: float, draining: bool = False
    ) -> bool:
        """Renew this process's lease; False if it ran out first (a lease that expired is
        never renewed: the process's matches may be someone else's by now)."""
        with self.db.transaction(durable=False) as tx:
            tx.execute(
                f"UPDATE workers SET alive_until_us = {tx.clock} + ?, draining = ? "
                f"WHERE worker_id = ? AND incarnation = ? AND alive_until_us > {tx.clock}",
                (_us(lease_s), int(draining), worker_id, incarnation),
            )
            return tx.rowcount == 1

    def retire(self, worker_id: str, incarnation: str) -> None:
        """Remove this process's registration (a clean stop, after its matches went back)."""
        with self.db.transaction() as tx:
            tx.execute(
                "DELETE FROM workers WHERE worker_id = ? AND incarnation = ?",
                (worker_id, incarnation),
            )
            tx.execute("DELETE FROM leases WHERE holder = ?", (worker_id,))

    def workers(self) -> list[Worker]:
        """Every registered process, live or not, by id."""
        with self.db.transaction() as tx:
            rows = tx.all(
                "SELECT worker_id, roles, address, host, pid, started_at_us, alive_until_us, "
                f"draining, alive_until_us > {tx.clock} FROM workers ORDER BY worker_id"
            )
            playing = dict(
                tx.all(
                    "SELECT claimed_by, COUNT(*) FROM matches WHERE status = 'playing' "
                    "GROUP BY claimed_by"
                )
            )
        return [
            Worker(
                r[0],
                tuple(role for role in r[1].split(",") if role),
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                bool(r[7]),
                bool(r[8]),
                int(playing.get(r[0], 0)),
            )
            for r in rows
        ]

    def address_of_holder(self, match_id: str) -> tuple[str, str] | None:
        """The worker playing ``match_id`` and the address of its API, if it is alive."""
        with self.db.transaction() as tx:
            row = tx.one(
                "SELECT w.worker_id, w.address FROM matches m JOIN workers w ON "
                "w.worker_id = m.claimed_by WHERE m.match_id = ? AND m.status = 'playing' "
                f"AND w.alive_until_us > {tx.clock}",
                (match_id,),
            )
        return (row[0], row[1]) if row else None

    # -- outbound bots' streams (issue 20) --------------------------------------------------

    def stream_opened(self, bot_id: str, worker_id: str) -> None:
        """``bot_id``'s ConnectBot stream is open to ``worker_id`` now."""
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO bot_streams (bot_id, worker_id, opened_at_us) "
                f"VALUES (?, ?, {tx.clock}) ON CONFLICT (bot_id) DO UPDATE SET "
                "worker_id = excluded.worker_id, opened_at_us = excluded.opened_at_us",
                (bot_id, worker_id),
            )

    def stream_closed(self, bot_id: str, worker_id: str) -> None:
        """``bot_id``'s stream to ``worker_id`` ended (a newer one elsewhere is kept)."""
        with self.db.transaction() as tx:
            tx.execute(
                "DELETE FROM bot_streams WHERE bot_id = ? AND worker_id = ?", (bot_id, worker_id)
            )

    def stream_holder(self, bot_id: str) -> tuple[str, str] | None:
        """The live worker ``bot_id``'s stream is open to and the address of its API."""
        with self.db.transaction() as tx:
            row = tx.one(
                "SELECT w.worker_id, w.address FROM bot_streams s JOIN workers w ON "
                f"w.worker_id = s.worker_id WHERE s.bot_id = ? AND w.alive_until_us > {tx.clock}",
                (bot_id,),
            )
        return (row[0], row[1]) if row else None

    def connected_bots(self, bot_ids: Sequence[str]) -> set[str]:
        """Those of ``bot_ids`` with a stream open to a live worker."""
        if not bot_ids:
            return set()
        with self.db.transaction() as tx:
            among, params = tx.one_of("s.bot_id", bot_ids)
            rows = tx.all(
                "SELECT s.bot_id FROM bot_streams s JOIN workers w ON w.worker_id = s.worker_id "
                f"WHERE {among} AND w.alive_until_us > {tx.clock}",
                params,
            )
        return {row[0] for row in rows}

    # -- leadership -----------------------------------------------------------------------------

    def lead(self, name: str, worker_id: str, lease_s: float) -> int | None:
        """Take or renew the lease ``name`` for ``lease_s``: its epoch if ``worker_id`` holds
        it now, None if another live holder does."""
        with self.db.transaction(durable=False) as tx:
            row = tx.one(
                "INSERT INTO leases (name, holder, until_us, epoch) "
                f"VALUES (?, ?, {tx.clock} + ?, 1) ON CONFLICT (name) DO UPDATE SET "
                "holder = excluded.holder, until_us = excluded.until_us, "
                "epoch = CASE WHEN leases.holder = excluded.holder THEN leases.epoch "
                "ELSE leases.epoch + 1 END "
                f"WHERE leases.holder = excluded.holder OR leases.until_us < {tx.clock} "
                "RETURNING epoch",
                (name, worker_id, _us(lease_s)),
            )
        return int(row[0]) if row else None

    def resign(self, name: str, worker_id: str) -> None:
        """Give up the lease ``name`` if ``worker_id`` holds it (the next taker needs no wait)."""
        with self.db.transaction(durable=False) as tx:
            tx.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, worker_id))

    def leaders(self) -> dict[str, tuple[str, int, bool]]:
        """Every lease: name → (holder, epoch, still valid)."""
        with self.db.transaction() as tx:
            rows = tx.all(f"SELECT name, holder, epoch, until_us > {tx.clock} FROM leases")
        return {name: (holder, int(epoch), bool(valid)) for name, holder, epoch, valid in rows}


def _is_gone(host: str, pid: int, this_host: str) -> bool:
    """Whether a registration's process is known dead: it ran on this host and is this
    process (an earlier incarnation in it) or no process has its pid any more."""
    if host != this_host:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def holds_lease(tx: Tx, name: str, worker_id: str, epoch: int) -> bool:
    """Whether ``worker_id`` still holds lease ``name`` at ``epoch``, inside a transaction (a
    fencing check: a write made on a lease's authority is refused once the lease moved on)."""
    row = tx.one(
        f"SELECT 1 FROM leases WHERE name = ? AND holder = ? AND epoch = ? AND until_us > "
        f"{tx.clock}" + _for_share(tx),
        (name, worker_id, epoch),
    )
    return row is not None


def send_lease_check(tx: Tx, name: str, worker_id: str, epoch: int) -> Pending:
    """``holds_lease``'s query, sent now and read later (its rows: one if the lease is held),
    so that it shares a round trip with other reads (a pipelined transaction)."""
    return tx.send(
        f"SELECT 1 FROM leases WHERE name = ? AND holder = ? AND epoch = ? AND until_us > "
        f"{tx.clock}" + _for_share(tx),
        (name, worker_id, epoch),
    )


def _for_share(tx: Tx) -> str:
    return " FOR SHARE" if tx.dialect == "postgres" else ""
