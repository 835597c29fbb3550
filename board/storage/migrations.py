"""The rules every backend applies to numbered migrations, and where each dialect's scripts live.

A migration is ``NNNN_what`` (:class:`board.db.Migration`); the package that owns a table owns its
migrations. SQLite scripts are the package's ``migrations/NNNN_what.sql`` files; the PostgreSQL script
of the same step is ``migrations/postgres/NNNN_what.sql`` (same number and name, the server's dialect).
Both backends refuse duplicate names and a database that holds migrations this Sabha does not know
(a newer Sabha wrote it): :func:`pending` says which steps are left, or why none may run.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Set
from pathlib import Path

from board.db import Migration, MigrationError
from board.storage.database import Dialect

__all__ = ["load_dialect_migrations", "pending"]


def pending(migrations: Iterable[Migration], applied: Set[str], *, where: str,
            elsewhere: str = "point state.url at another database") -> list[Migration]:
    """The migrations not in ``applied``, in order; raises :class:`MigrationError` for duplicate names
    or for applied names this Sabha does not know (``where`` names the database in that message)."""
    ordered = sorted(migrations, key=lambda m: (m.number, m.name))
    names = [m.name for m in ordered]
    if len(set(names)) != len(names):
        raise MigrationError(f"duplicate migration names: {sorted({n for n in names if names.count(n) > 1})}")
    unknown = set(applied) - set(names)
    if unknown:
        raise MigrationError(f"{where} has migrations this Sabha does not know ({', '.join(sorted(unknown))}); "
                             f"upgrade Sabha or {elsewhere}")
    return [m for m in ordered if m.name not in applied]


def load_dialect_migrations(package: str, dialect: Dialect) -> tuple[Migration, ...]:
    """``package``'s migrations in ``dialect``: its ``*.sql`` (SQLite) or its ``postgres/*.sql``.

    A SQLite step without its PostgreSQL twin raises :class:`MigrationError` naming the files to write:
    a store that is not on PostgreSQL yet must not start half-made there."""
    from board.db import load_migrations

    sqlite = load_migrations(package)
    if dialect is Dialect.SQLITE:
        return sqlite
    module = importlib.import_module(package)
    folder = Path(next(iter(module.__path__))) / "postgres"
    scripts = sorted(folder.glob("*.sql")) if folder.is_dir() else []
    found = tuple(sorted((Migration(p.stem, p.read_text(encoding="utf-8")) for p in scripts),
                         key=lambda m: (m.number, m.name)))
    missing = sorted({m.name for m in sqlite} - {m.name for m in found})
    if missing:
        raise MigrationError(f"{package} has no PostgreSQL migration for {', '.join(missing)} "
                             f"(write {folder}/<name>.sql): its tables are not available on PostgreSQL yet")
    return found
