"""The rules every backend applies to numbered migrations, and where each dialect's scripts live.

A migration is ``NNNN_what`` (:class:`Migration`; :mod:`board.db` re-exports it); the package that owns a table owns its
migrations. SQLite scripts are the package's ``migrations/NNNN_what.sql`` files; the PostgreSQL script
of the same step is ``migrations/postgres/NNNN_what.sql`` (same number and name, the server's dialect).
Both backends refuse duplicate names and a database that holds migrations this Sabha does not know
(a newer Sabha wrote it): :func:`pending` says which steps are left, or why none may run.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.storage.database import Dialect

__all__ = ["Migration", "MigrationError", "for_dialect", "load_dialect_migrations", "load_migrations", "pending"]

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+$")


class MigrationError(RuntimeError):
    """The migrations cannot be applied (a bad name, a duplicate, or a db from a newer Sabha)."""


@dataclass(frozen=True)
class Migration:
    """One schema step: ``name`` is ``NNNN_what`` (the number orders it), ``sql`` a script."""

    name: str
    sql: str
    #: The package whose ``migrations`` folder holds it (where its other dialects' scripts are found).
    package: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise MigrationError(f"migration name {self.name!r} must look like 0123_what_it_does")

    @property
    def number(self) -> int:
        """The numeric prefix, which orders migrations across owners."""
        return int(self.name[:4])


def _package_files(package: str) -> Any:
    """The folder of ``package`` (a ``Path``) when it is one on disk, as pip installs it; else
    what :func:`importlib.resources.files` gives (imported only then: with zipfile and tempfile
    it would cost every command that opens the db ~4 ms of start-up)."""
    module = importlib.import_module(package)
    folders = list(getattr(module, "__path__", ()))
    if len(folders) == 1 and Path(folders[0]).is_dir():
        return Path(folders[0])
    from importlib.resources import files

    return files(package)


def load_migrations(package: str) -> tuple[Migration, ...]:
    """The ``NNNN_what.sql`` files of ``package`` (its file stems are the names), in numeric order."""
    scripts = [entry for entry in _package_files(package).iterdir() if entry.name.endswith(".sql")]
    migrations = [Migration(entry.name.removesuffix(".sql"), entry.read_text(encoding="utf-8"), package)
                  for entry in scripts]
    return tuple(sorted(migrations, key=lambda m: (m.number, m.name)))


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
    sqlite = load_migrations(package)
    if dialect is Dialect.SQLITE:
        return sqlite
    module = importlib.import_module(package)
    folder = Path(next(iter(module.__path__))) / "postgres"
    scripts = sorted(folder.glob("*.sql")) if folder.is_dir() else []
    found = tuple(sorted((Migration(p.stem, p.read_text(encoding="utf-8"), package) for p in scripts),
                         key=lambda m: (m.number, m.name)))
    missing = sorted({m.name for m in sqlite} - {m.name for m in found})
    if missing:
        raise MigrationError(f"{package} has no PostgreSQL migration for {', '.join(missing)} "
                             f"(write {folder}/<name>.sql): its tables are not available on PostgreSQL yet")
    return found


def for_dialect(migrations: Iterable[Migration], dialect: Dialect) -> list[Migration]:
    """The same steps in ``dialect``: each SQLite migration's package gives its twin
    (:func:`load_dialect_migrations`); a migration made in code (no package) is kept as it is."""
    if dialect is Dialect.SQLITE:
        return list(migrations)
    out: list[Migration] = []
    packages: list[str] = []
    for migration in migrations:
        if not migration.package:
            out.append(migration)
        elif migration.package not in packages:
            packages.append(migration.package)
    for package in packages:
        out.extend(load_dialect_migrations(package, dialect))
    return out
