"""Does this Python's SQLite have FTS5? The check the knowledge base makes before it opens.

Some SQLite builds (a few standalone Python distributions among them) leave FTS5 out.
:func:`fts5_driver` looks at ``PRAGMA compile_options`` (``ENABLE_FTS5``) and, as the
last word, tries to create an FTS5 table in memory; it returns the first DB-API module
that has FTS5: the standard library's ``sqlite3``, else ``pysqlite3`` when it is installed
(the knowledge index lives in its own file, so it can use a different SQLite than the
state db). When neither has it, :class:`FTS5Unavailable` says what to do.
"""

from __future__ import annotations

import contextlib
import importlib
import sqlite3
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["FTS5_HELP", "FTS5Unavailable", "fts5_driver", "fts5_problem"]

FTS5_HELP = (
    "the knowledge base needs SQLite's FTS5 full-text search. Fix it with one of: run Sabha on a Python whose "
    "sqlite3 has FTS5 (python.org installers, Debian/Ubuntu python3 and Homebrew builds do; check with "
    "`python3 -c \"import sqlite3; print(sqlite3.connect(':memory:').execute("
    "'pragma compile_options').fetchall())\"` and look for ENABLE_FTS5); or `pip install pysqlite3-binary` "
    "into Sabha's environment (the knowledge index then uses it); or set knowledge.enabled: false in the "
    "config to run without a knowledge base"
)


class FTS5Unavailable(RuntimeError):
    """No SQLite driver with FTS5 is available; ``str()`` says what to do."""


def fts5_problem(conn: Any) -> str | None:
    """Why the open connection ``conn`` cannot do FTS5, or None when it can."""
    options = {str(row[0]).upper() for row in conn.execute("PRAGMA compile_options").fetchall()}
    if "ENABLE_FTS5" in options:
        return None
    try:  # FTS5 may also come as a loadable or built-in extension without the compile option
        conn.execute("CREATE VIRTUAL TABLE temp.sabha_fts5_probe USING fts5(body)")
        conn.execute("DROP TABLE temp.sabha_fts5_probe")
    except Exception as exc:  # noqa: BLE001 - any driver's error means "no FTS5"
        version = conn.execute("SELECT sqlite_version()").fetchone()[0]
        return f"SQLite {version} was built without FTS5 ({exc})"
    return None


def _candidates() -> list[ModuleType]:
    found: list[ModuleType] = [sqlite3]
    with contextlib.suppress(ImportError):
        found.append(importlib.import_module("pysqlite3.dbapi2"))
    return found


def fts5_driver(candidates: Sequence[Any] | None = None) -> Any:
    """The first DB-API module of ``candidates`` (default: ``sqlite3``, then ``pysqlite3``) whose
    SQLite has FTS5; raises :class:`FTS5Unavailable` with what to do when none has."""
    problems = []
    for module in candidates if candidates is not None else _candidates():
        conn = module.connect(":memory:")
        try:
            problem = fts5_problem(conn)
        finally:
            conn.close()
        if problem is None:
            return module
        problems.append(f"{getattr(module, '__name__', module)}: {problem}")
    raise FTS5Unavailable(f"{'; '.join(problems)}; {FTS5_HELP}")
