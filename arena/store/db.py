"""Database connections for the store: SQLite by default, PostgreSQL to scale out.

Both speak the same SQL (written with ``?`` placeholders, translated for psycopg) and run on a
dedicated thread pool so neither trio nor asyncio ever blocks on I/O: SQLite on one thread with
one connection (every access serialised, WAL mode), PostgreSQL on a small psycopg pool.
Schema changes are numbered migrations applied once, inside a transaction, at open.

A SQLite file belongs to one process at a time: it holds an exclusive ``flock`` on
``FILE.lock`` beside it while it is open, so a second arena on the same file refuses to start
(``DatabaseInUse``) instead of taking over the first one's matches. The kernel releases the
lock when the process ends, however it ends (``kill -9`` included); the file itself stays.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from arena.store.schema import MIGRATIONS


class Cursor(Protocol):
    """What the store needs of a DB-API cursor."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...

    @property
    def rowcount(self) -> int: ...


class Database:
    """A connection source plus the executor every store operation runs on."""

    dialect: str
    executor: ThreadPoolExecutor

    def transaction(
        self, durable: bool = True, pipelined: bool = False
    ) -> contextlib.AbstractContextManager[Tx]:
        """A transaction: committed when the block ends, rolled back if it raises.

        ``durable=False`` lets the commit return before it is on disk where that costs a disk
        flush (PostgreSQL): for writes whose loss in a database crash loses no work.

        ``pipelined=True`` (PostgreSQL's pipeline mode; nothing on SQLite, which has no round
        trips) sends statements without waiting for their results: a write (``execute``,
        ``many``) costs no round trip of its own, the queries ``send`` sent before a read share
        its round trip, and the writes left at the end go with the commit. The price: a
        statement's error shows at the next read or at the commit, and ``rowcount`` is not
        known, so it suits a transaction that decides from what it reads, not from what its
        writes did. A pipelined transaction is one the arena runs for every match (claims,
        results, enqueues): on PostgreSQL its prepared statements run on their generic plans
        (``plan_cache_mode``), made once, not planned again at every call for their
        parameters (their keys looked up one by one whatever the number: nothing to gain
        from knowing it), which halved the server's planning for a batch of 8 results.
        """
        raise NotImplementedError

    def call(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of one statement run as a transaction of its own (on PostgreSQL without
        BEGIN and COMMIT: one round trip; for a server-side function that does a whole
        transaction's work)."""
        with self.transaction() as tx:
            return tx.all(sql, params)

    def close(self) -> None:
        """Release connections and the executor."""
        raise NotImplementedError

    def is_transient(self, error: BaseException) -> bool:
        """Whether running the same transaction again may succeed (deadlock, lock timeout)."""
        return False


class Pending:
    """The rows of a query sent with ``Tx.send``, read when asked for."""

    def __init__(self, fetch: Callable[[], list[Any]]) -> None:
        self._fetch = fetch

    def rows(self) -> list[Any]:
        """Every row (in a pipelined transaction: waits for them, and for what was sent
        before, in one round trip)."""
        return list(self._fetch())


class Tx:
    """One transaction; ``?`` placeholders whatever the driver."""

    def __init__(self, cursor: Any, dialect: str) -> None:
        self._cursor = cursor
        self.dialect = dialect

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgres" else sql

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """SQL for ``column`` being one of ``values`` (at least one), and its parameters: on
        PostgreSQL a single array, so that the statement's text is the same whatever their
        number and psycopg prepares it once (its plan made once, not at every call: a list of
        ``?`` is a new statement for every length); on SQLite (in-process) a list of ``?``."""
        if self.dialect == "postgres":
            return f"{column} = ANY (?)", [list(values)]
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Tx:
        """Run one statement."""
        self._cursor.execute(self._sql(sql), tuple(params))
        return self

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each row of parameters (in a pipelined transaction, or
        psycopg's own pipeline outside one, one round trip for them all)."""
        self._cursor.executemany(self._sql(sql), [tuple(row) for row in rows])

    def send(self, sql: str, params: Sequence[Any] = ()) -> Pending:
        """Send a query now and read its rows later: in a pipelined transaction, queries sent
        one after the other come back in one round trip (elsewhere it runs at once)."""
        if self.dialect != "postgres":
            rows = self.all(sql, params)
            return Pending(lambda: rows)
        cursor = self._cursor.connection.cursor()  # a cursor of its own keeps its rows
        cursor.execute(self._sql(sql), tuple(params))
        return Pending(cursor.fetchall)

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row of a query, or None."""
        return self.execute(sql, params)._cursor.fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a query."""
        return list(self.execute(sql, params)._cursor.fetchall())

    @property
    def rowcount(self) -> int:
        """Rows changed by the last statement."""
        return int(self._cursor.rowcount)

    @property
    def clock(self) -> str:
        """SQL for the database's clock in µs since the epoch (one clock for every process)."""
        return CLOCK_US[self.dialect]


BINARY_PARAM = "%b"
"""PostgreSQL: a placeholder whose parameter psycopg sends in binary (its ``%b``), for an
array of blobs: sent as ``?`` (``%s``) a ``bytea[]`` goes as escaped text, 25 times the CPU of
sending the bytes. It stays as written where ``?`` becomes ``%s``."""

CLOCK_US = {
    "postgres": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
    "sqlite": "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)",
}
"""The database's clock, in µs since the Unix epoch, as SQL for each dialect."""


def _migrate(tx: Tx) -> None:
    tx.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = tx.one("SELECT MAX(version) FROM schema_version")
    current = row[0] if row and row[0] is not None else 0
    for version, statements in enumerate(MIGRATIONS, start=1):
        if version <= current:
            continue
        for statement in statements(tx.dialect):
            tx.execute(statement)
        tx.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))


SQLITE_PRAGMAS = (
    "journal_mode=WAL",
    "synchronous=NORMAL",
    "busy_timeout=10000",
    "foreign_keys=ON",
    # A checkpoint (the WAL copied into the database, two disk flushes) every 10,000 pages
    # (40 MB) instead of 1,000: a finished match writes about 30 pages, so the flushes come
    # every ~300 matches instead of every ~30 (the copying, about 0.1 ms a match, stays).
    # The WAL file is cut back to 64 MB after.
    "wal_autocheckpoint=10000",
    "journal_size_limit=67108864",
)
"""How every SQLite connection of the store is set up."""


class DatabaseInUse(RuntimeError):
    """Another process (or another open of it in this one) has the SQLite file."""


def lock_file(path: str) -> int:
    """Hold ``PATH.lock`` exclusively (``flock``) and write our pid in it; its descriptor.

    ``DatabaseInUse``, naming the holder's pid, when someone else holds it. flock locks
    belong to the open file, so two opens in one process exclude each other too, and the
    descriptor is not inherited by child processes (Python opens it non-inheritable).
    """
    lock_path = f"{path}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise DatabaseInUse(
            f"database {path} is in use by another arena process (pid {holder}; lock held on "
            f"{lock_path}): stop that one first, or give another database"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class SqliteDatabase(Database):
    """One SQLite file (or ``:memory:``), one connection, one thread, one process."""

    dialect = "sqlite"

    def __init__(self, path: str) -> None:
        in_memory = path in ("", ":memory:") or path.startswith("file::memory:")
        self._lock_fd = None if in_memory else lock_file(path)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._lock = threading.Lock()
        try:
            self._connection = self.executor.submit(self._connect, path).result()
            with self.transaction() as tx:
                _migrate(tx)
        except BaseException:
            self.executor.shutdown()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
            raise

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in SQLITE_PRAGMAS:
            connection.execute(f"PRAGMA {pragma}")
        return connection

    @contextlib.contextmanager
    def transaction(self, durable: bool = True, pipelined: bool = False) -> Iterator[Tx]:
        del durable  # WAL with synchronous=NORMAL: no commit waits for the disk
        del pipelined  # in-process: no round trips to save
        with self._lock:
            cursor = self._connection.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(cursor, self.dialect)
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    def close(self) -> None:
        self.executor.submit(self._connection.close).result()
        self.executor.shutdown()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def is_transient(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)


LZ4_WHERE_AVAILABLE = (
    "SELECT set_config('default_toast_compression', 'lz4', false) FROM pg_settings "
    "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
)
"""Session setting of every store connection: values too large for a row (match records, about
12 kB) are compressed with lz4 instead of pglz where the server has lz4 (PostgreSQL 14+ built
with it; elsewhere nothing changes). An Oh Hell record took 0.6 ms of server CPU with pglz (into
5.2 kB), a third of what recording its result costs the server; with lz4 0.07 ms (into 7.0 kB).
What is read back is the same bytes: each stored value says how it was compressed."""


class PostgresDatabase(Database):
    """A psycopg connection pool; several arena processes may share the database."""

    dialect = "postgres"

    def __init__(
        self, url: str, pool_size: int = 8, configure: Callable[[Any], None] | None = None
    ) -> None:
        """``configure`` is also called with each new psycopg connection before its first use
        (a session setting; a protocol trace, to count round trips in a test)."""
        try:
            import psycopg_pool
        except ImportError as error:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "PostgreSQL needs the postgres extra: pip install 'card-arena[postgres]'"
            ) from error
        self.executor = ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="pg")
        # Autocommit: every transaction is an explicit block (``connection.transaction()``
        # sends BEGIN), so a pipelined one can send its BEGIN with its first statements.
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            open=True,
            kwargs={"autocommit": True},
            configure=functools.partial(_configure, extra=configure),
        )
        with self.transaction() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(727271)")  # one migrator at a time
            _migrate(tx)

    @contextlib.contextmanager
    def transaction(self, durable: bool = True, pipelined: bool = False) -> Iterator[Tx]:
        import psycopg

        with self._pool.connection() as connection:
            if pipelined and psycopg.Pipeline.is_supported():
                with _pipelined_transaction(connection) as cursor:
                    yield _postgres_tx(cursor, durable, generic_plans=True)
                return
            with connection.transaction():
                yield _postgres_tx(connection.cursor(), durable)

    def call(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._pool.connection() as connection:  # autocommit: its own transaction
            return list(connection.execute(sql.replace("?", "%s"), tuple(params)).fetchall())

    def close(self) -> None:
        self._pool.close()
        self.executor.shutdown()

    def is_transient(self, error: BaseException) -> bool:
        import psycopg

        return isinstance(
            error,
            psycopg.errors.DeadlockDetected
            | psycopg.errors.SerializationFailure
            | psycopg.OperationalError,
        )


def _configure(connection: Any, extra: Callable[[Any], None] | None) -> None:
    """Set up a new pool connection: the store's session settings, then ``extra``."""
    connection.execute(LZ4_WHERE_AVAILABLE)
    if extra is not None:
        extra(connection)


def _postgres_tx(cursor: Any, durable: bool, generic_plans: bool = False) -> Tx:
    """A transaction on ``cursor``, its settings made in one statement (``Database.transaction``
    says what ``durable`` and a pipelined transaction's ``generic_plans`` change)."""
    tx = Tx(cursor, "postgres")
    settings = [("synchronous_commit", "off")] if not durable else []
    if generic_plans:
        settings.append(("plan_cache_mode", "force_generic_plan"))
    if settings:
        calls = ", ".join(f"set_config('{name}', '{value}', true)" for name, value in settings)
        tx.execute(f"SELECT {calls}")
    return tx


@contextlib.contextmanager
def _pipelined_transaction(connection: Any) -> Iterator[Any]:
    """A transaction in pipeline mode whose BEGIN goes with its first statements and whose
    COMMIT goes with its last writes: one round trip per read that waits, plus the commit's.

    (``connection.transaction()`` in a pipeline syncs after the BEGIN, before the COMMIT and
    after it: three more. ``psycopg.Transaction`` on an autocommit connection queues the BEGIN
    and the COMMIT without syncing.) An error the server reports only at the end leaves the
    transaction failed: it is rolled back before the connection goes back to the pool."""
    import psycopg

    status = psycopg.pq.TransactionStatus
    try:
        with connection.pipeline() as pipeline, psycopg.Transaction(connection):
            try:
                yield connection.cursor()
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    pipeline.sync()  # out of an aborted pipeline, so that the ROLLBACK runs
                raise
    finally:
        if connection.info.transaction_status in (status.INTRANS, status.INERROR):
            with contextlib.suppress(psycopg.Error):  # a broken connection: the pool drops it
                connection.rollback()


@contextlib.contextmanager
def scratch_postgres_database(server_url: str, prefix: str = "cardarena_scratch") -> Iterator[str]:
    """A new, empty database on the server of ``server_url``, dropped afterwards (tests and
    benchmarks); yields its URL."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield server_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def open_database(url: str) -> Database:
    """``postgresql://…`` opens PostgreSQL; anything else is a SQLite path."""
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(url)
    return SqliteDatabase(url.removeprefix("sqlite:///"))
