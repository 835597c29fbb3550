"""PostgreSQL as Sabha's state store: an asyncpg connection pool behind :class:`Database`.

Opening applies the migrations not applied yet, all in ONE transaction that first takes a transaction-
scoped advisory lock (:data:`MIGRATION_LOCK`): replicas that start together queue on the lock, and the
second finds everything applied, so each step runs once. A failing step rolls every step of that start
back; the next start tries again.

Every driver error a store could see is mapped here: the server cannot be reached, went away, or is
out of space or connections -> :class:`StorageError` (``retryable``: the intake treats it as an
outage, not a bug); a unique-key conflict -> :class:`DuplicateKey` (a store decides what a duplicate
means); anything else (a syntax error: a bug) passes through unchanged.

:meth:`PostgresDatabase.listening` is ``LISTEN`` on a connection of its own (asyncpg ``add_listener``), made
again when lost: how a process learns at once of what another one changed (scheduled work: ``pg_notify``).

:meth:`PostgresDatabase.apart` is a second store on the same database with ONE connection of its own and short
timeouts: for work that must not queue behind the pool (the lease heartbeat: under load every pooled connection
may be busy with turns' statements for longer than a lease).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from board.masking import mask_value
from board.storage.database import Dialect, DuplicateKey, Params, Row, Statement, StorageError, Work, drive
from board.storage.migrations import Migration, pending
from board.storage.sql import numbered
from board.storage.url import PASSWORD_ENV, StateURL

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

__all__ = ["MIGRATION_LOCK", "NO_DRIVER", "DuplicateKey", "PostgresDatabase", "driver"]

log = logging.getLogger("sabha.storage")

#: The advisory lock key held while migrating ("sabha" as a number).
MIGRATION_LOCK = 0x5AB4A
CONNECT_TIMEOUT_S = 10.0
LISTEN_RETRY_S = 2.0  # between tries to listen again (PostgresDatabase.listening)
T = TypeVar("T")


#: What to do when ``state.url`` names PostgreSQL on an install without its driver (SQLite needs none).
NO_DRIVER = ("state.url names PostgreSQL, but its driver, asyncpg, is not installed here: install Sabha with its "
             "PostgreSQL extra (pip install 'sabha[postgres]', or pip install asyncpg into the same environment)")


def driver() -> ModuleType:
    """The asyncpg module; :class:`StorageError` saying how to install it when it is missing."""
    try:
        import asyncpg
    except ImportError as exc:
        raise StorageError(NO_DRIVER) from exc
    return asyncpg


def _mapped(exc: BaseException, url: StateURL) -> BaseException:
    import asyncpg

    if isinstance(exc, asyncpg.UniqueViolationError):
        return DuplicateKey(f"duplicate key: {exc.detail or exc}")
    where = f"PostgreSQL at {url.host}:{url.port}"
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return StorageError(f"{where} refused the login of {url.user or 'the default user'} ({exc}): export the "
                            f"right password in {PASSWORD_ENV[0]} (or {PASSWORD_ENV[1]})")
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        return StorageError(f"{where} does not let {url.user or 'the default user'} in ({exc}): set the user in "
                            "state.url (postgresql://USER@host:5432/dbname) or create that role")
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return StorageError(f"{where} has no database {url.database!r}: create it (createdb {url.database}) or fix "
                            "the database name in state.url")
    # InternalClientError: the driver's protocol state broken by a server that went away mid-statement
    outage = (OSError, TimeoutError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
              asyncpg.InternalClientError,
              asyncpg.CannotConnectNowError, asyncpg.TooManyConnectionsError, asyncpg.InsufficientResourcesError,
              asyncpg.OperatorInterventionError)
    if isinstance(exc, outage):
        what = type(exc).__name__
        return StorageError(f"PostgreSQL at {url.host}:{url.port} is not available ({what}: {exc})".strip(),
                            retryable=True)
    return exc


class _Conn:
    """Statements on one connection (a transaction's, or one borrowed from the pool per statement)."""

    def __init__(self, conn: asyncpg.Connection[Any] | PoolConnectionProxy[Any], url: StateURL) -> None:
        self._conn = conn
        self._url = url

    async def execute(self, sql: str, params: Params = ()) -> None:
        try:
            await self._conn.execute(numbered(sql), *mask_value(tuple(params)))
        except Exception as exc:
            raise _mapped(exc, self._url) from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        try:
            return list(await self._conn.fetch(numbered(sql), *mask_value(tuple(params))))
        except Exception as exc:
            raise _mapped(exc, self._url) from exc

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        try:
            row = await self._conn.fetchrow(numbered(sql), *mask_value(tuple(params)))
        except Exception as exc:
            raise _mapped(exc, self._url) from exc
        return row


class PostgresDatabase:
    """An open PostgreSQL state store. Use :meth:`open`."""

    dialect = Dialect.POSTGRES

    def __init__(self, pool: asyncpg.Pool[Any], url: StateURL, *, acquire_s: float = CONNECT_TIMEOUT_S) -> None:
        self.pool = pool
        self.url = url
        self.acquire_s = acquire_s  # the longest a statement waits for a pooled connection

    @classmethod
    async def open(cls, url: StateURL, migrations: Iterable[Migration] = (), *,
                   min_size: int = 1, max_size: int = 10) -> PostgresDatabase:
        """Connect (a pool of ``min_size``..``max_size``) and apply the migrations not applied yet."""
        asyncpg = driver()
        try:
            pool = await asyncpg.create_pool(url.dsn(), password=url.password, min_size=min_size,
                                             max_size=max_size, timeout=CONNECT_TIMEOUT_S,
                                             command_timeout=60, server_settings={"application_name": "sabha"})
        except Exception as exc:
            raise _mapped(exc, url) from exc
        db = cls(pool, url)
        try:
            await db._migrate(list(migrations))
        except BaseException:
            await pool.close()
            raise
        return db

    async def apart(self, purpose: str, timeout_s: float) -> PostgresDatabase:
        """A store of its own on this database: one connection (made again when lost), named ``sabha <purpose>``
        on the server, whose waits for the connection and for a statement end after ``timeout_s`` with a retryable
        :class:`StorageError` (connecting: after :data:`CONNECT_TIMEOUT_S`). No migrations (this store has run them).
        Close it on its own."""
        asyncpg = driver()
        try:
            pool = await asyncpg.create_pool(self.url.dsn(), password=self.url.password, min_size=1, max_size=1,
                                             timeout=max(timeout_s, CONNECT_TIMEOUT_S), command_timeout=timeout_s,
                                             server_settings={"application_name": f"sabha {purpose}"})
        except Exception as exc:
            raise _mapped(exc, self.url) from exc
        return PostgresDatabase(pool, self.url, acquire_s=timeout_s)

    async def _migrate(self, migrations: list[Migration]) -> None:
        """Apply what is pending under the migration lock (replicas starting together apply each once). With
        nothing pending (every start but the first after an upgrade) one statement decides it, no lock taken:
        migrations are append-only, so what another replica applies meanwhile is applied for us too."""
        try:
            applied = {str(r["name"]) for r in await self.fetchall("SELECT name FROM schema_migrations")}
        except driver().UndefinedTableError:
            pass  # a new database: the locked path below creates the table
        else:
            if not pending(migrations, applied, where=f"state db {self.url}"):
                return
        async with self.transaction() as tx:
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            await tx.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                             "(name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            applied = {str(r["name"]) for r in await tx.fetchall("SELECT name FROM schema_migrations")}
            for migration in pending(migrations, applied, where=f"state db {self.url}"):
                log.info("state db: applying migration %s", migration.name)
                await tx.execute(migration.sql)
                await tx.execute("INSERT INTO schema_migrations(name) VALUES (?)", (migration.name,))

    async def execute(self, sql: str, params: Params = ()) -> None:
        async with self._borrowed() as conn:
            await conn.execute(sql, params)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        async with self._borrowed() as conn:
            return await conn.fetchall(sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        async with self._borrowed() as conn:
            return await conn.fetchone(sql, params)

    @contextlib.asynccontextmanager
    async def _borrowed(self) -> AsyncIterator[_Conn]:
        try:
            conn = await self.pool.acquire(timeout=self.acquire_s)
        except Exception as exc:
            raise _mapped(exc, self.url) from exc
        try:
            yield _Conn(conn, self.url)
        finally:
            await self._give_back(conn)

    async def _give_back(self, conn: PoolConnectionProxy[Any]) -> None:
        """Return a borrowed connection. If the server went away meanwhile, resetting it fails; the pool then
        drops that connection (and opens a new one when needed). That failure is not the statement's: the
        statement has finished (a transaction has committed, or its own error is on its way), so raising here
        would report a committed write as failed, or hide the real error behind the driver's."""
        try:
            await self.pool.release(conn)
        except Exception as exc:  # noqa: BLE001 - the pool dropped the connection; the statement's outcome stands
            log.debug("state db: a connection broke on its way back to the pool and is replaced (%s: %s)",
                      type(exc).__name__, exc)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Conn]:
        """One transaction on one pooled connection: committed when the block ends, rolled back if it raises."""
        async with self._borrowed() as conn:
            raw = conn._conn
            try:
                tx = raw.transaction()
                await tx.start()
            except Exception as exc:
                raise _mapped(exc, self.url) from exc
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(Exception):
                    await tx.rollback()
                raise
            try:
                await tx.commit()
            except Exception as exc:
                raise _mapped(exc, self.url) from exc

    @overload
    async def unit(self, work: Statement, *, urgent: bool = False) -> list[Row]: ...

    @overload
    async def unit(self, work: Work[T], *, urgent: bool = False) -> T: ...

    async def unit(self, work: Statement | Work[T], *, urgent: bool = False) -> list[Row] | T:
        """:meth:`board.storage.Database.unit`: one statement alone, or ``work`` statement by statement in one
        transaction (``urgent`` changes nothing here: each unit has a pooled connection of its own)."""
        if isinstance(work, tuple):
            return await self.fetchall(*work)
        async with self.transaction() as tx:
            return await drive(work, tx)

    @contextlib.asynccontextmanager
    async def listening(self, channel: str, on_notify: Callable[[], None]) -> AsyncIterator[None]:
        """While the block runs, call ``on_notify`` at every ``NOTIFY channel`` (from any process on this
        database), on a connection of its own. A lost connection is made again, and ``on_notify`` called then
        too (a notice may have gone by meanwhile)."""
        task = asyncio.create_task(self._listen(channel, on_notify), name=f"LISTEN {channel}")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _listen(self, channel: str, on_notify: Callable[[], None]) -> None:
        asyncpg = driver()
        failures = 0
        while True:
            lost = asyncio.Event()
            conn = None
            try:
                conn = await asyncpg.connect(self.url.dsn(), password=self.url.password, timeout=CONNECT_TIMEOUT_S,
                                             server_settings={"application_name": "sabha listen"})
                conn.add_termination_listener(lambda _conn, lost=lost: lost.set())
                await conn.add_listener(channel, lambda *_: on_notify())
                if failures:
                    log.info("state db: listening for %s again", channel)
                failures = 0
                on_notify()
                await lost.wait()
                log.warning("state db: the connection listening for %s was lost; listening again", channel)
            except Exception as exc:  # noqa: BLE001 - an outage: tried again; the waiter still looks now and then
                failures += 1
                if failures == 1:
                    log.warning("state db: cannot listen for %s on PostgreSQL at %s:%s (%s: %s); trying again every "
                                "%g s", channel, self.url.host, self.url.port, type(exc).__name__, exc, LISTEN_RETRY_S)
            finally:
                if conn is not None:
                    conn.terminate()
            await asyncio.sleep(LISTEN_RETRY_S)

    async def ping(self) -> None:
        """Raise :class:`StorageError` unless the server answers within a few seconds."""
        try:
            async with asyncio.timeout(5):
                await self.fetchone("SELECT 1")
        except TimeoutError as exc:
            raise StorageError(f"PostgreSQL at {self.url.host}:{self.url.port} did not answer in 5 s",
                               retryable=True) from exc

    async def close(self) -> None:
        await self.pool.close()

    async def __aenter__(self) -> PostgresDatabase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
