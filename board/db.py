"""The state database: one SQLite file (WAL) opened with aiosqlite, with numbered migrations.

Migrations are append-only: each entry of :data:`MIGRATIONS` runs once, in order, and
``PRAGMA user_version`` records how far a database has got. Other modules add their
tables by appending a migration here, never by editing an old one.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import aiosqlite

log = logging.getLogger("sabha.db")

MIGRATIONS: list[tuple[str, str]] = [
    (
        "sessions",
        """
        CREATE TABLE sessions (
            session_id  TEXT PRIMARY KEY,
            key         TEXT NOT NULL,
            role        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            archived_at TEXT
        );
        CREATE UNIQUE INDEX sessions_current ON sessions(key) WHERE archived_at IS NULL;
        """,
    ),
]


class StateDB:
    """An open state database. Use :meth:`open` (or ``async with StateDB.open(...)``)."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> StateDB:
        """Open (creating if needed) the database at ``path`` and bring it up to date."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        db = cls(conn, path)
        await db._migrate()
        return db

    async def _migrate(self) -> None:
        async with self.conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        if version > len(MIGRATIONS):
            raise RuntimeError(
                f"state db {self.path} is at schema version {version}, newer than this Sabha "
                f"({len(MIGRATIONS)}); upgrade Sabha or point data_dir elsewhere"
            )
        for number in range(version, len(MIGRATIONS)):
            name, sql = MIGRATIONS[number]
            log.info("state db: applying migration %d (%s)", number + 1, name)
            await self.conn.executescript(f"BEGIN;\n{sql}\nPRAGMA user_version = {number + 1};\nCOMMIT;")

    async def execute(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> None:
        """Run one statement and commit."""
        await self.conn.execute(sql, params)
        await self.conn.commit()

    async def fetchall(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[aiosqlite.Row]:
        """Rows of a query."""
        async with self.conn.execute(sql, params) as cur:
            return list(await cur.fetchall())

    async def fetchone(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> aiosqlite.Row | None:
        """The first row of a query, or None."""
        async with self.conn.execute(sql, params) as cur:
            return await cur.fetchone()

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()

    async def __aenter__(self) -> StateDB:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
