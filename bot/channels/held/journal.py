"""The front desk's writes to ``held_webhooks`` (:mod:`bot.channels.held.desk`): group commit on the desk's own loop,
through a connection its thread owns.

Requests that arrive while a commit runs are stored together in the next one (:class:`Journal`), each
request's 200 waiting for the commit that holds its row. The writer (:class:`JournalWriter`) depends on the backend:

- SQLite (:class:`SqliteWriter`): a ``sqlite3`` connection opened and used on the desk's thread itself, no
  thread hop (each hop is a wait for the GIL while the main thread runs turns). ``BEGIN IMMEDIATE`` is tried
  without a busy timeout, so the desk's loop never blocks on SQLite's write lock: while another connection holds it
  the batch waits on the loop (1-5 ms steps) and tries again, up to :data:`BUSY_S`, then the storage error is
  raised (the requests are answered 503). WAL with ``synchronous=NORMAL`` (as the state db's other connections):
  a commit is durable against a crash of the process, as every other write of the daemon.
- PostgreSQL (:class:`DatabaseWriter`): the state store's own async API (asyncpg, in the desk's loop), one
  transaction per batch.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from board.storage import Database

__all__ = ["BUSY_S", "DatabaseWriter", "HeldRow", "Journal", "JournalWriter", "SqliteWriter"]

#: How long a batch waits for SQLite's write lock before its requests are answered 503 (the busy timeout of the
#: daemon's other connections).
BUSY_S = 5.0
#: One held request as stored: (path, headers as JSON, body, received at as ISO 8601).
HeldRow = tuple[str, str, bytes, str]
_INSERT = "INSERT INTO held_webhooks(path, headers, body, received_at) VALUES (?, ?, ?, ?)"


class JournalWriter(Protocol):
    """Stores a batch of rows in one transaction (committed when it returns) or raises, storing none."""

    async def write(self, rows: Sequence[HeldRow]) -> None: ...

    async def close(self) -> None: ...


class SqliteWriter:
    """See the module docstring: a connection of the desk's thread, never blocking its loop."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        for pragma in ("PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=0", "PRAGMA wal_autocheckpoint=0"):
            self.conn.execute(pragma)  # checkpoints are left to the main connection, as on the express one

    async def write(self, rows: Sequence[HeldRow]) -> None:
        deadline = time.monotonic() + BUSY_S
        pause = 0.001
        while True:
            try:
                self._insert(rows)
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(pause)  # another connection writes: the loop goes on meanwhile
            pause = min(pause * 2, 0.005)

    def _insert(self, rows: Sequence[HeldRow]) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(_INSERT, rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        self.conn.close()


class DatabaseWriter:
    """Through a :class:`board.storage.Database` opened in the desk's loop (PostgreSQL)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def write(self, rows: Sequence[HeldRow]) -> None:
        async with self.db.transaction() as tx:
            for row in rows:
                await tx.execute(_INSERT, row)

    async def close(self) -> None:
        await self.db.close()


class Journal:
    """Group commit: :meth:`add` returns once the row is committed, together with the rows that arrived meanwhile;
    raises the writer's error when that commit failed."""

    def __init__(self, writer: JournalWriter) -> None:
        self.writer = writer
        self.commits = 0
        self._pending: list[tuple[HeldRow, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def add(self, row: HeldRow) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="front desk journal")
        await done

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self.writer.write([row for row, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to every waiting request
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            self.commits += 1
            for _, done in batch:
                if not done.done():
                    done.set_result(None)
