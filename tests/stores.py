"""Real stores for tests: a SQLite file, or a fresh PostgreSQL database on the local server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.store.db import open_database, scratch_postgres_database
from arena.store.repository import Store

BACKENDS = ["sqlite", "postgres"]
"""Every store backend, in the order tests run them."""

POSTGRES_ADMIN_URL = os.environ.get(
    "ARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


ROWS_WITHOUT_THEIR_MATCH_SQL = (
    "SELECT (SELECT COUNT(*) FROM records r WHERE NOT EXISTS (SELECT 1 FROM matches m "
    "WHERE m.match_id = r.match_id AND m.status = 'finished')), "
    "(SELECT COUNT(*) FROM match_seats s WHERE NOT EXISTS (SELECT 1 FROM matches m "
    "WHERE m.match_id = s.match_id AND m.status = 'finished'))"
)
"""How many records and seat rows are not of a finished match (none, ever: on PostgreSQL no
foreign key checks it since schema 24, the store's one writer of them does)."""


def rows_without_their_match(store: Store) -> tuple[int, int]:
    """Records and seat rows that are not of a finished match (``ROWS_WITHOUT_THEIR_MATCH_SQL``)."""
    with store.db.transaction() as tx:
        records, seats = tx.one(ROWS_WITHOUT_THEIR_MATCH_SQL)
    return int(records), int(seats)


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN_URL, connect_timeout=3):
            return True
    except Exception:
        return False


@contextmanager
def postgres_url() -> Iterator[str]:
    """A new, empty database on the test server, dropped afterwards."""
    with scratch_postgres_database(POSTGRES_ADMIN_URL, "cardarena_test") as url:
        yield url


@contextmanager
def open_store(backend: str, tmp_path: Path) -> Iterator[Store]:
    """A migrated store on ``backend`` ("sqlite" or "postgres")."""
    if backend == "sqlite":
        database = open_database(str(tmp_path / "arena.sqlite3"))
        try:
            yield Store(database)
        finally:
            database.close()
        return
    with postgres_url() as url:
        database = open_database(url)
        try:
            yield Store(database)
        finally:
            database.close()
