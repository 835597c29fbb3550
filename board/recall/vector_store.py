"""Where passages' vectors are kept and searched: ``recall_vectors`` (migration 1275), nearest by cosine distance.

One vector per passage, tagged with the model that made it (:attr:`board.recall.embedder.EmbeddingSettings.index_key`);
deleting a passage deletes its vector (a foreign key, so "forget everything" takes both). They are written through
the board's own :class:`board.storage.Database`: float32 blobs on SQLite, ``REAL[]`` on PostgreSQL.

On PostgreSQL, searching needs the pgvector extension in the database (``<=>`` over the column cast to
``vector``): :meth:`VectorStore.problem` finds it, or creates it (``CREATE EXTENSION IF NOT EXISTS vector``, which
needs the server to have pgvector installed and the right to create it), else says why recall stays lexical.

On SQLite, searching needs `sqlite-vec` (``vec_distance_cosine``). Python's ``sqlite3`` may be built without
``enable_load_extension`` (pyenv's default build is): then the extension is registered with SQLite itself
(``sqlite3_auto_extension``, looked up in the very SQLite library Python's ``_sqlite3`` uses), which loads it into
every connection opened afterwards. The store's searches run on a connection of their own to the state db file,
opened after that (the board's connections were opened before). :func:`vectors_problem` says why vectors cannot
be had with SQLite here (no sqlite-vec, no way to load it), so the board runs on lexical recall alone and
``sabha doctor`` says so.
"""

from __future__ import annotations

import ctypes
import logging
import sqlite3
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from board.recall.passages import BOARD, Asker, Passage, SourceKind
from board.storage import Database, Dialect

if TYPE_CHECKING:
    import aiosqlite

__all__ = ["PGVECTOR_MISSING", "VectorStore", "VectorsUnavailable", "load_sqlite_vec", "pack", "vectors_problem"]

log = logging.getLogger("sabha.recall")

_registered: list[str] = []  # sqlite-vec's version once registered with SQLite (process-wide)

_UPSERT = ("INSERT INTO recall_vectors (passage_id, model, vector) VALUES (?, ?, ?) ON CONFLICT (passage_id) "
           "DO UPDATE SET model = excluded.model, vector = excluded.vector")


class VectorsUnavailable(RuntimeError):
    """Vectors cannot be searched here; the message says why and what to install."""


def pack(vector: list[float]) -> bytes:
    """A vector as sqlite-vec reads it: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)


def _auto_extension(entry: int) -> None:
    """Register ``entry`` (an extension's init function) with the SQLite library Python's sqlite3 module uses."""
    import _sqlite3

    library = ctypes.CDLL(_sqlite3.__file__)  # its symbols and its dependencies': the SQLite it was linked with
    library.sqlite3_auto_extension.argtypes = [ctypes.c_void_p]
    if library.sqlite3_auto_extension(ctypes.c_void_p(entry)) != 0:
        raise VectorsUnavailable("SQLite refused to register sqlite-vec (sqlite3_auto_extension failed)")


def load_sqlite_vec() -> str:
    """Make sqlite-vec available to SQLite connections opened from now on; its version. Raises
    :class:`VectorsUnavailable` with what to do."""
    if _registered:
        return _registered[0]
    try:
        import sqlite_vec  # type: ignore[import-untyped]
    except ImportError as exc:
        raise VectorsUnavailable("sqlite-vec is not installed: pip install sqlite-vec (a dependency of Sabha: "
                                 "reinstall Sabha)") from exc
    try:
        path = sqlite_vec.loadable_path()
        library = ctypes.CDLL(path if Path(path).suffix else f"{path}.so")
        _auto_extension(ctypes.cast(library.sqlite3_vec_init, ctypes.c_void_p).value or 0)
        probe = sqlite3.connect(":memory:")
        try:
            version = str(probe.execute("SELECT vec_version()").fetchone()[0])
        finally:
            probe.close()
    except (OSError, AttributeError, sqlite3.Error) as exc:
        raise VectorsUnavailable(f"sqlite-vec is installed but SQLite cannot load it ({exc}); use a Python "
                                 "whose sqlite3 links the system SQLite (Debian's python3, pyenv builds)") from exc
    _registered.append(version)
    return version


def vectors_problem(db_dialect: Dialect) -> str | None:
    """Why vectors cannot be kept with this state store, as far as this process can tell (None: they can; on
    PostgreSQL the server decides: :meth:`VectorStore.problem`)."""
    if db_dialect is Dialect.POSTGRES:
        return None
    try:
        load_sqlite_vec()
    except VectorsUnavailable as exc:
        return str(exc)
    return None


PGVECTOR_MISSING = ("the PostgreSQL server has no pgvector extension (Debian: apt-get install postgresql-<version>-"
                    "pgvector where the distribution has it, or build pgvector; then CREATE EXTENSION vector in "
                    "Sabha's database)")


class VectorStore:
    """See the module docstring. ``path``: the SQLite state db file."""

    def __init__(self, db: Database, path: Path | None) -> None:
        self.db = db
        self.path = path
        self._search: aiosqlite.Connection | None = None
        self._problem: list[str | None] = []  # found once: None (vectors work) or why not

    async def problem(self) -> str | None:
        """Why vectors cannot be searched here (None: they can); asked of the server once."""
        if not self._problem:
            self._problem.append(await self._find_problem())
        return self._problem[0]

    async def _find_problem(self) -> str | None:
        if self.db.dialect is not Dialect.POSTGRES:
            return vectors_problem(self.db.dialect)
        if await self.db.fetchone("SELECT 1 AS x FROM pg_extension WHERE extname = 'vector'") is not None:
            return None
        if await self.db.fetchone("SELECT 1 AS x FROM pg_available_extensions WHERE name = 'vector'") is None:
            return PGVECTOR_MISSING
        try:
            await self.db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as exc:  # noqa: BLE001 - no right to create it (the server's own error): the DBA can
            return (f"pgvector is installed on the server but not in this database and Sabha may not add it ({exc}): "
                    "run CREATE EXTENSION vector in Sabha's database as a superuser")
        log.info("recall: created the pgvector extension in the state database")
        return None

    async def save(self, rows: list[tuple[int, str, list[float]]]) -> None:
        """Store ``(passage id, index key, vector)`` rows, replacing what a passage had (one transaction)."""
        postgres = self.db.dialect is Dialect.POSTGRES
        sql = _UPSERT.replace("VALUES (?, ?, ?)", "VALUES (?, ?, CAST(? AS REAL[]))") if postgres else _UPSERT
        async with self.db.transaction() as tx:
            for passage, key, vector in rows:
                await tx.execute(sql, (passage, key, vector if postgres else pack(vector)))

    async def _connection(self) -> aiosqlite.Connection:
        if self._search is None:
            import aiosqlite

            load_sqlite_vec()
            conn = await aiosqlite.connect(self.path or ":memory:", isolation_level=None)
            conn.row_factory = aiosqlite.Row
            await conn.execute_fetchall("PRAGMA busy_timeout=5000")
            self._search = conn
        return self._search

    async def nearest(self, vector: list[float], key: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The ``limit`` passages nearest ``vector`` (made by ``key``) that ``asker`` may see, nearest first. The
        asker's audiences are part of the query, exactly as in the lexical search."""
        audiences = sorted(asker.audiences | ({BOARD} if asker.board else set()))
        if limit <= 0 or not (audiences or asker.everything) or await self.problem() is not None:
            return []
        where = "" if asker.everything else f" AND p.audience IN ({', '.join('?' for _ in audiences)})"
        seen: list[object] = [] if asker.everything else list(audiences)
        if self.db.dialect is Dialect.POSTGRES:
            rows = await self.db.fetchall(
                "SELECT p.source, p.ref, p.cite, p.speaker, p.said_at, p.text FROM recall_vectors v "
                f"JOIN recall_passages p ON p.id = v.passage_id WHERE v.model = ?{where} "
                "ORDER BY CAST(v.vector AS vector) <=> CAST(CAST(? AS REAL[]) AS vector), p.id DESC LIMIT ?",
                [key, *seen, vector, limit])
        else:
            conn = await self._connection()
            rows = list(await conn.execute_fetchall(
                "SELECT p.source, p.ref, p.cite, p.speaker, p.said_at, p.text FROM recall_vectors v "
                f"JOIN recall_passages p ON p.id = v.passage_id WHERE v.model = ?{where} "
                "ORDER BY vec_distance_cosine(v.vector, ?), p.id DESC LIMIT ?", [key, *seen, pack(vector), limit]))
        return [Passage(source=SourceKind(r["source"]), ref=str(r["ref"]), cite=str(r["cite"]),
                        speaker=str(r["speaker"]), said_at=str(r["said_at"]), text=str(r["text"])) for r in rows]

    async def close(self) -> None:
        """Close the search connection."""
        if self._search is not None:
            conn, self._search = self._search, None
            await conn.close()
