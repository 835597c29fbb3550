"""The state database: one SQLite file (WAL) opened with aiosqlite, with numbered migrations.

A :class:`Migration` is named ``NNNN_what``; the package that owns a table owns its
migrations (``board.memory.migrations``, ``board.room.migrations``, the intake's and each
channel's in ``bot``), each a ``NNNN_what.sql`` file in that ``migrations`` package, read by
:func:`load_migrations`; the composition root hands them all to :meth:`StateDB.open`.
They run in numeric order across owners, each once, inside a transaction, its name
recorded in ``schema_migrations``. Migrations are append-only: a shipped one is never
edited; a change is a new number.

Two connections: the main one (aiosqlite, autocommit: every statement is its own
transaction, so no write lock is held between awaits) serves the board and reports;
:meth:`StateDB.transaction` runs a short unit of work on a second, dedicated connection
and thread, so the intake's durable claim of an inbound message does not queue behind
the board's statements (a webhook's acknowledgement waits only for its own commit).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from board.masking import mask_value
from board.storage.database import Dialect, DuplicateKey, Params, Row, Statement, StorageError, Work
from board.storage.migrations import Migration, pending

if TYPE_CHECKING:
    import aiosqlite

__all__ = ["SqliteDatabase", "StateDB", "UnitLock", "mapped"]

log = logging.getLogger("sabha.db")

_PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000")
T = TypeVar("T")

#: SQLite errors that mean the store cannot write now (a full disk, a read-only file, a lock held too
#: long), not a bug in the statement.
_OUTAGE = ("database or disk is full", "disk i/o error", "attempt to write a readonly database",
           "database is locked", "unable to open database file")


def mapped(exc: sqlite3.Error) -> BaseException:
    """``exc`` as the storage layer names it: an outage -> :class:`StorageError` (retryable), a broken unique
    key -> :class:`DuplicateKey`, anything else (a bug in the statement) unchanged. Raise it ``from exc``, so
    :func:`bot.intake.storage.is_storage_error` still sees SQLite's own words."""
    text = str(exc).lower()
    if any(marker in text for marker in _OUTAGE):
        return StorageError(f"the SQLite state db cannot be written now ({exc})", retryable=True)
    if isinstance(exc, sqlite3.IntegrityError) and "unique" in text:
        return DuplicateKey(f"duplicate key: {exc}")
    return exc


class _ExpressTx:
    """Statements of one transaction on the state db's express connection (in its thread). Its ``BEGIN IMMEDIATE``
    runs in the step of its first statement, not as a step of its own: every step is a hand-off to the express
    thread and back, which a meeting's round end waits for (longer on a busy CPU); a block with no statement takes
    no step at all."""

    def __init__(self, db: StateDB) -> None:
        self._db = db
        self.begun = False  # BEGIN IMMEDIATE went through (set in the express thread, read after the step)
        self.stepped = False  # a step was handed to the express thread (it may run on after a cancel here)

    def _begin_then(self, step: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
        def begun(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            self.begun = True
            return step(conn)
        return begun

    async def _run(self, step: Callable[[sqlite3.Connection], T]) -> T:
        self.stepped = True
        try:
            return await self._db.on_express(step if self.begun else self._begin_then(step))
        except sqlite3.Error as exc:
            raise mapped(exc) from exc

    async def commit(self) -> None:
        """COMMIT what the block wrote (nothing to do for a block that ran no statement)."""
        if self.begun:
            await self._run(lambda conn: conn.execute("COMMIT"))

    async def execute(self, sql: str, params: Params = ()) -> None:
        masked = mask_value(tuple(params))
        await self._run(lambda conn: conn.execute(sql, masked).fetchall())

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        masked = mask_value(tuple(params))  # an INSERT ... RETURNING writes too
        return await self._run(lambda conn: _rows(conn.execute(sql, masked)))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        return next(iter(await self.fetchall(sql, params)), None)


def _rows(cursor: sqlite3.Cursor) -> list[Row]:
    return list(cursor.fetchall())  # sqlite3.Row: the express connection's row_factory



class UnitLock:
    """The express connection's lock for one unit of work at a time, like :class:`asyncio.Lock` (``async with``,
    first come first served) except that urgent waiters (:meth:`first`: a webhook's durable claim) are handed
    the lock before every other waiter. Background units (the recall index, a turn's bookkeeping) queue behind
    each other; a burst's claims would otherwise wait for the whole queue, not only for the unit running
    (notes/daemon-latency.md). Handed over directly on release, so nobody can slip in between."""

    def __init__(self) -> None:
        self._held = False
        self._urgent: collections.deque[asyncio.Future[None]] = collections.deque()
        self._others: collections.deque[asyncio.Future[None]] = collections.deque()

    def locked(self) -> bool:
        return self._held

    async def acquire(self, *, urgent: bool = False) -> None:
        if not self._held and not self._urgent and not self._others:
            self._held = True
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        (self._urgent if urgent else self._others).append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the lock as it was cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):
                    (self._urgent if urgent else self._others).remove(waiter)
            raise

    def release(self) -> None:
        for queue in (self._urgent, self._others):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)  # still held: now by that waiter
                    return
        self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    @contextlib.asynccontextmanager
    async def first(self) -> AsyncIterator[None]:
        """Hold the lock, waiting only for the unit that holds it now and for earlier urgent ones."""
        await self.acquire(urgent=True)
        try:
            yield
        finally:
            self.release()


class StateDB:
    """An open state database, the SQLite :class:`board.storage.Database`. Use :meth:`open` (or
    ``async with StateDB.open(...)``).

    Through the protocol (:meth:`execute`, :meth:`fetchall`, :meth:`fetchone`, :meth:`transaction`) an outage
    is a :class:`StorageError` and a broken unique key a :class:`DuplicateKey`, each raised from SQLite's
    own error."""

    dialect = Dialect.SQLITE

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._express: ThreadPoolExecutor | None = None
        self._express_conn: sqlite3.Connection | None = None
        self._express_pragmas: list[str] = []
        self._express_lock = threading.Lock()
        #: Held by every unit of work on the express connection (:meth:`transaction`, and the storage
        #: layer's transactions, :mod:`board.storage.sqlite`), so they never interleave there.
        self.tx_lock = UnitLock()

    @classmethod
    async def open(cls, path: Path, migrations: Iterable[Migration] = ()) -> StateDB:
        """Open (creating if needed) the database at ``path`` and apply ``migrations`` not applied yet."""
        import aiosqlite  # here, not at the top: `sabha --help` and `sabha souls` load migrations, not the db

        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path, isolation_level=None)  # autocommit; see the module docstring
        conn.row_factory = aiosqlite.Row
        db = cls(conn, path)
        try:
            for pragma in ("PRAGMA journal_mode=WAL", *_PRAGMAS):
                await conn.execute_fetchall(pragma)
            await db._migrate(sorted(migrations, key=lambda m: (m.number, m.name)))
        except BaseException:
            # Closed on every failure (a read-only folder fails at the first pragma): the
            # connection's thread would otherwise keep the process alive after the error.
            await conn.close()
            raise
        return db

    async def _migrate(self, migrations: list[Migration]) -> None:
        """Apply what is pending; a state db with nothing pending (every start but the first after an
        upgrade) costs one statement: the read of what was applied."""
        try:
            applied = {row[0] for row in await self.conn.execute_fetchall("SELECT name FROM schema_migrations")}
        except sqlite3.OperationalError as exc:  # a new state db: no table yet
            if "no such table" not in str(exc):
                raise
            await self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = set()
        for migration in pending(migrations, applied, where=f"state db {self.path}",
                                 elsewhere="point data_dir elsewhere"):
            name, sql = migration.name, migration.sql
            log.info("state db: applying migration %s", name)
            escaped = name.replace("'", "''")
            await self.conn.executescript(
                f"BEGIN;\n{sql}\nINSERT INTO schema_migrations(name, applied_at) "
                f"VALUES ('{escaped}', datetime('now'));\nCOMMIT;"
            )

    async def execute(self, sql: str, params: Params | dict[str, Any] = ()) -> None:
        """Run one statement (committed when it returns: the connection is in autocommit mode).

        The statement is stepped to its end in the same call: on an autocommit connection a
        statement left half-read (a PRAGMA's or RETURNING's row) keeps a read snapshot open,
        and the next write then fails with "database is locked" once the express connection
        wrote. Read rows with :meth:`fetchall` / :meth:`fetchone`, which close their cursor.

        Every known secret in a text parameter is masked first (:func:`board.masking.mask_value`):
        an error text that echoes an API key is stored as ``***``."""
        try:
            await self.conn.execute_fetchall(sql, mask_value(_params(params)))
        except sqlite3.Error as exc:
            raise mapped(exc) from exc

    async def fetchall(self, sql: str, params: Params | dict[str, Any] = ()) -> list[Row]:
        """Rows of a query, read to the end in one step on the connection's thread.

        Never as execute / fetch / close: another coroutine's write queued between those steps
        would run while the read still holds its snapshot, and once the express connection has
        committed in the meantime SQLite refuses that write at once ("database is locked"; a
        stale snapshot cannot be upgraded, and no busy timeout helps)."""
        try:
            return list(await self.conn.execute_fetchall(sql, mask_value(_params(params))))
        except sqlite3.Error as exc:
            raise mapped(exc) from exc

    async def fetchone(self, sql: str, params: Params | dict[str, Any] = ()) -> Row | None:
        """The first row of a query, or None (read like :meth:`fetchall`: give the query a
        ``LIMIT`` or a key when it could return many rows)."""
        return next(iter(await self.fetchall(sql, params)), None)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[_ExpressTx]:
        """One unit of work (``BEGIN IMMEDIATE``, sent with the first statement, ... ``COMMIT``, rolled back when
        the block raises) on the express connection, ordered with :meth:`express` work by :attr:`tx_lock`. SQLite's
        write lock is held from ``BEGIN`` to ``COMMIT`` across the awaits in between: keep the block short (no model
        call, no network inside)."""
        async with self.tx_lock:
            tx = _ExpressTx(self)  # BEGIN IMMEDIATE goes with its first statement
            try:
                yield tx
            except BaseException:
                if tx.stepped:  # the rollback queues behind a step still running (a cancel): it sees its BEGIN
                    await asyncio.shield(self.on_express(_rollback))
                raise
            try:
                await tx.commit()
            except BaseException:
                await asyncio.shield(self.on_express(_rollback))
                raise

    @overload
    async def unit(self, work: Statement, *, urgent: bool = False) -> list[Row]: ...

    @overload
    async def unit(self, work: Work[T], *, urgent: bool = False) -> T: ...

    async def unit(self, work: Statement | Work[T], *, urgent: bool = False) -> list[Row] | T:
        """:meth:`board.storage.Database.unit`: the whole of ``work`` in one :meth:`express` step (its statements
        run back to back in the express thread; parameters masked like every write here)."""
        try:
            if isinstance(work, tuple):
                sql, params = work
                masked = mask_value(tuple(params))
                return await self.express(lambda conn: _rows(conn.execute(sql, masked)), urgent=urgent)
            return await self.express(lambda conn: _drive(work, conn), urgent=urgent)
        except sqlite3.Error as exc:
            raise mapped(exc) from exc

    async def ping(self) -> None:
        """Raise :class:`StorageError` unless the state db answers."""
        await self.fetchone("SELECT 1")

    async def express(self, work: Callable[[sqlite3.Connection], T], *, urgent: bool = False) -> T:
        """Run ``work(conn)`` in one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back
        when it raises) on the dedicated express connection, in its own thread.

        For short, latency-critical writes (the intake's durable claim): they wait for no
        statement queued on the main connection, only for SQLite's write lock, which the
        main connection holds for one statement at a time. ``work`` runs in another thread:
        it must only use ``conn`` and its arguments. ``urgent`` work (a webhook's claim, acknowledged once it
        is done) goes before the other units waiting for the express connection (:class:`UnitLock`).
        """
        async with self.tx_lock.first() if urgent else self.tx_lock:
            return await self.on_express(lambda conn: self._transact(work))

    async def on_express(self, step: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``step(conn)`` on the express connection, in its thread (opened on first use). The caller
        holds :attr:`tx_lock` for a unit of work that spans several steps."""
        if self._express is None:
            self._express = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sabha-db-express")
        return await asyncio.get_running_loop().run_in_executor(self._express, self._on_express, step)

    def _on_express(self, step: Callable[[sqlite3.Connection], T]) -> T:
        with self._express_lock:
            return step(self._express_connection())

    def _express_connection(self) -> sqlite3.Connection:
        if self._express_conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None)
            conn.row_factory = sqlite3.Row
            # Checkpoints (copying the WAL into the db file, with an fsync) are left to the
            # main connection, so a receipt never waits for one.
            for pragma in (*_PRAGMAS, "PRAGMA wal_autocheckpoint=0", *self._express_pragmas):
                conn.execute(pragma)
            self._express_conn = conn
        return self._express_conn

    def _transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._express_connection()  # in the express thread, under the express lock
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = work(conn)
            conn.execute("COMMIT")  # may fail too (a full disk): then roll back, or the lock stays held
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    log.debug("rollback of an express transaction failed", exc_info=True)
            raise
        return result

    async def pragma(self, setting: str) -> None:
        """Apply ``PRAGMA <setting>`` (e.g. ``max_page_count = 100``) to every connection, now
        and to the express connection when it opens."""
        await self.conn.execute_fetchall(f"PRAGMA {setting}")  # stepped to the end: no snapshot kept open
        self._express_pragmas.append(f"PRAGMA {setting}")
        if self._express is not None and self._express_conn is not None:
            conn = self._express_conn
            await asyncio.get_running_loop().run_in_executor(self._express, conn.execute, f"PRAGMA {setting}")

    async def close(self) -> None:
        """Close both connections."""
        if self._express is not None:
            express, self._express = self._express, None
            conn, self._express_conn = self._express_conn, None
            if conn is not None:
                await asyncio.get_running_loop().run_in_executor(express, conn.close)
            express.shutdown(wait=False)
        await self.conn.close()

    async def __aenter__(self) -> StateDB:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _params(params: Params | dict[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
    return params if isinstance(params, dict) else tuple(params)


def _drive(work: Work[T], conn: sqlite3.Connection) -> T:
    """Run ``work`` on ``conn`` in the caller's thread and transaction, statement after statement."""
    try:
        sql, params = next(work)
        while True:
            sql, params = work.send(_rows(conn.execute(sql, mask_value(tuple(params)))))
    except StopIteration as done:
        result: T = done.value
        return result


def _rollback(conn: sqlite3.Connection) -> Any:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


#: The SQLite backend by the name it has beside :class:`board.storage.postgres.PostgresDatabase`.
SqliteDatabase = StateDB
