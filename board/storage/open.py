"""Opening the configured backend: :func:`open_database` turns a ``state.url`` and the migrations Sabha knows into
an open :class:`board.storage.Database` (SQLite's :class:`~board.storage.sqlite.StateDB` or a
:class:`~board.storage.postgres.PostgresDatabase`), migrated."""

from __future__ import annotations

from collections.abc import Iterable

from board.storage.database import Database, Dialect
from board.storage.migrations import Migration, for_dialect
from board.storage.url import StateURL

__all__ = ["open_database"]


async def open_database(url: StateURL, migrations: Iterable[Migration] = (), *, pool_size: int = 10) -> Database:
    """Open ``url`` and apply ``migrations`` (given in their SQLite form; each package's PostgreSQL twins are
    used on PostgreSQL). ``pool_size``: the most connections one process holds (PostgreSQL)."""
    if url.dialect is Dialect.SQLITE:
        from board.storage.sqlite import StateDB

        assert url.path is not None
        return await StateDB.open(url.path, migrations)
    from board.storage.postgres import PostgresDatabase

    return await PostgresDatabase.open(url, for_dialect(migrations, Dialect.POSTGRES), max_size=pool_size)
