"""The state database: one SQLite file (WAL) opened with aiosqlite, with numbered migrations.

A :class:`Migration` is named ``NNNN_what``; the package that owns a table owns its
migrations (``board.memory.migrations``, ``board.room.migrations``, the intake's and each
channel's in ``bot``), each a ``NNNN_what.sql`` file in that ``migrations`` package, read by
:func:`load_migrations`; the composition root hands them all to :meth:`StateDB.open`.
They run in numeric order across owners, each once, inside a transaction, its name
recorded in ``schema_migrations``. Migrations are append-only: a shipped one is never
edited; a change is a new number.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiosqlite

__all__ = ["Migration", "MigrationError", "StateDB", "load_migrations"]

log = logging.getLogger("sabha.db")

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+$")


class MigrationError(RuntimeError):
    """The migrations cannot be applied (a bad name, a duplicate, or a db from a newer Sabha)."""


@dataclass(frozen=True)
class Migration:
    """One schema step: ``name`` is ``NNNN_what`` (the number orders it), ``sql`` a script."""

    name: str
    sql: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise MigrationError(f"migration name {self.name!r} must look like 0123_what_it_does")

    @property
    def number(self) -> int:
        """The numeric prefix, which orders migrations across owners."""
        return int(self.name[:4])


def load_migrations(package: str) -> tuple[Migration, ...]:
    """The ``NNNN_what.sql`` files of ``package`` (its file stems are the names), in numeric order."""
    scripts = [entry for entry in files(package).iterdir() if entry.name.endswith(".sql")]
    migrations = [Migration(entry.name.removesuffix(".sql"), entry.read_text(encoding="utf-8")) for entry in scripts]
    return tuple(sorted(migrations, key=lambda m: (m.number, m.name)))


class StateDB:
    """An open state database. Use :meth:`open` (or ``async with StateDB.open(...)``)."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path, migrations: Iterable[Migration] = ()) -> StateDB:
        """Open (creating if needed) the database at ``path`` and apply ``migrations`` not applied yet."""
        import aiosqlite  # here, not at the top: `sabha --help` and `sabha souls` load migrations, not the db

        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        db = cls(conn, path)
        try:
            await db._migrate(sorted(migrations, key=lambda m: (m.number, m.name)))
        except BaseException:
            await conn.close()
            raise
        return db

    async def _migrate(self, migrations: list[Migration]) -> None:
        await self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        async with self.conn.execute("SELECT name FROM schema_migrations") as cur:
            applied = {row[0] for row in await cur.fetchall()}
        names = [m.name for m in migrations]
        if len(set(names)) != len(names):
            raise MigrationError(f"duplicate migration names: {sorted(n for n in names if names.count(n) > 1)}")
        unknown = applied - set(names)
        if unknown:
            raise MigrationError(
                f"state db {self.path} has migrations this Sabha does not know ({', '.join(sorted(unknown))}); "
                "upgrade Sabha or point data_dir elsewhere"
            )
        for migration in migrations:
            name, sql = migration.name, migration.sql
            if name in applied:
                continue
            log.info("state db: applying migration %s", name)
            escaped = name.replace("'", "''")
            await self.conn.executescript(
                f"BEGIN;\n{sql}\nINSERT INTO schema_migrations(name, applied_at) "
                f"VALUES ('{escaped}', datetime('now'));\nCOMMIT;"
            )

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
