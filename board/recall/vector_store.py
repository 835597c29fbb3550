"""Where passages' vectors are kept and searched: ``recall_vectors`` (migration 1275), nearest by cosine distance.

Vectors are float32 blobs in the state db, one per passage, tagged with the model that made them
(:attr:`board.recall.embedder.EmbeddingSettings.index_key`); deleting a passage deletes its vector (a foreign key,
so "forget everything" takes both). They are written through the board's own :class:`board.storage.Database`.

Searching needs `sqlite-vec` (``vec_distance_cosine``). Python's ``sqlite3`` may be built without
``enable_load_extension`` (pyenv's default build is): then the extension is registered with SQLite itself
(``sqlite3_auto_extension``, looked up in the very SQLite library Python's ``_sqlite3`` uses), which loads it into
every connection opened afterwards. The store's searches run on a connection of their own to the state db file,
opened after that (the board's connections were opened before). :func:`vectors_problem` says why vectors cannot
be had here (no sqlite-vec, no way to load it, a PostgreSQL state store: pgvector is not supported yet), so
the board runs on lexical recall alone and ``sabha doctor`` says so.
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

__all__ = ["VectorStore", "VectorsUnavailable", "load_sqlite_vec", "pack", "vectors_problem"]

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
    """Why vectors cannot be kept with this state store (None: they can)."""
    if db_dialect is Dialect.POSTGRES:
        return ("the state store is PostgreSQL: vector search there needs pgvector, which this Sabha does not use "
                "yet (Debian 12 ships no postgresql-15-pgvector); recall is lexical (tsvector) only")
    try:
        load_sqlite_vec()
    except VectorsUnavailable as exc:
        return str(exc)
    return None


class VectorStore:
    """See the module docstring. ``path``: the SQLite state db file."""

    def __init__(self, db: Database, path: Path) -> None:
        self.db = db
        self.path = path
        self._search: aiosqlite.Connection | None = None

    async def save(self, rows: list[tuple[int, str, bytes]]) -> None:
        """Store ``(passage id, index key, packed vector)`` rows, replacing what a passage had (one transaction)."""
        async with self.db.transaction() as tx:
            for row in rows:
                await tx.execute(_UPSERT, row)

    async def _connection(self) -> aiosqlite.Connection:
        if self._search is None:
            import aiosqlite

            load_sqlite_vec()
            conn = await aiosqlite.connect(self.path, isolation_level=None)
            conn.row_factory = aiosqlite.Row
            await conn.execute_fetchall("PRAGMA busy_timeout=5000")
            self._search = conn
        return self._search

    async def nearest(self, vector: list[float], key: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The ``limit`` passages nearest ``vector`` (made by ``key``) that ``asker`` may see, nearest first. The
        asker's audiences are part of the query, exactly as in the lexical search."""
        audiences = sorted(asker.audiences | ({BOARD} if asker.board else set()))
        if limit <= 0 or not (audiences or asker.everything):
            return []
        where = "" if asker.everything else f" AND p.audience IN ({', '.join('?' for _ in audiences)})"
        sql = ("SELECT p.source, p.ref, p.cite, p.speaker, p.said_at, p.text, "
               "vec_distance_cosine(v.vector, ?) AS distance FROM recall_vectors v "
               f"JOIN recall_passages p ON p.id = v.passage_id WHERE v.model = ?{where} "
               "ORDER BY distance, p.id DESC LIMIT ?")
        params = [pack(vector), key, *([] if asker.everything else audiences), limit]
        conn = await self._connection()
        rows = await conn.execute_fetchall(sql, params)
        return [Passage(source=SourceKind(r["source"]), ref=str(r["ref"]), cite=str(r["cite"]),
                        speaker=str(r["speaker"]), said_at=str(r["said_at"]), text=str(r["text"])) for r in rows]

    async def close(self) -> None:
        """Close the search connection."""
        if self._search is not None:
            conn, self._search = self._search, None
            await conn.close()
