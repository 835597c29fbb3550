"""SQLite as a :class:`board.storage.Database`: the embedded state db (:class:`board.db.StateDB`) seen
through the storage protocol, so a store written against the protocol runs on both backends.

Statements outside a transaction go to the state db's main connection (autocommit). A transaction runs
on its express connection (``BEGIN IMMEDIATE`` ... ``COMMIT``), one at a time: :meth:`StateDB.tx_lock`
orders it with the state db's own :meth:`StateDB.transaction` work, so the two never interleave on that
connection. The write lock is held from ``BEGIN`` to ``COMMIT``, across the awaits in between: keep a
transaction's block short (no model call, no network inside).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from board.db import StateDB
from board.storage.database import Dialect, Params, Row, StorageError

__all__ = ["SqliteDatabase"]

T = TypeVar("T")

#: SQLite errors that mean the store cannot write now (a full disk, a read-only file, a lock held too
#: long), not a bug in the statement.
_OUTAGE = ("database or disk is full", "disk i/o error", "attempt to write a readonly database",
           "database is locked", "unable to open database file")


def _mapped(exc: sqlite3.Error) -> BaseException:
    text = str(exc).lower()
    if any(marker in text for marker in _OUTAGE):
        return StorageError(f"the SQLite state db cannot be written now ({exc})", retryable=True)
    if isinstance(exc, sqlite3.IntegrityError) and "unique" in text:
        from board.storage.postgres import DuplicateKey

        return DuplicateKey(f"duplicate key: {exc}")
    return exc


class _ExpressTx:
    """Statements of one transaction on the state db's express connection (in its thread)."""

    def __init__(self, db: StateDB) -> None:
        self._db = db

    async def _run(self, step: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return await self._db.on_express(step)
        except sqlite3.Error as exc:
            raise _mapped(exc) from exc

    async def execute(self, sql: str, params: Params = ()) -> None:
        await self._run(lambda conn: conn.execute(sql, tuple(params)).fetchall())

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return await self._run(lambda conn: _rows(conn.execute(sql, tuple(params))))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        return next(iter(await self.fetchall(sql, params)), None)


def _rows(cursor: sqlite3.Cursor) -> list[Row]:
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


class SqliteDatabase:
    """The state db through the storage protocol."""

    dialect = Dialect.SQLITE

    def __init__(self, db: StateDB) -> None:
        self.db = db

    async def execute(self, sql: str, params: Params = ()) -> None:
        try:
            await self.db.execute(sql, tuple(params))
        except sqlite3.Error as exc:
            raise _mapped(exc) from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        try:
            return [dict(row) for row in await self.db.fetchall(sql, tuple(params))]
        except sqlite3.Error as exc:
            raise _mapped(exc) from exc

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        return next(iter(await self.fetchall(sql, params)), None)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[_ExpressTx]:
        async with self.db.tx_lock:
            tx = _ExpressTx(self.db)
            await tx._run(lambda conn: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield tx
            except BaseException:
                await asyncio.shield(self.db.on_express(_rollback))
                raise
            try:
                await tx._run(lambda conn: conn.execute("COMMIT"))
            except BaseException:
                await asyncio.shield(self.db.on_express(_rollback))
                raise

    async def ping(self) -> None:
        await self.fetchone("SELECT 1")

    async def close(self) -> None:
        await self.db.close()


def _rollback(conn: sqlite3.Connection) -> Any:
    if conn.in_transaction:
        conn.execute("ROLLBACK")
