"""The knowledge index as :class:`~.base.KnowledgeBase` sees it, whichever backend keeps it.

:class:`KnowledgeStore` is the interface: ``sync`` (bring it in step with the folder), ``search``,
``documents``, ``counts``, the conversations' documents (``put_chunks``,
``drop_conversation_documents``) and ``rebuild`` (``sabha kb reindex``). Two implementations side by
side, chosen by the state store's backend (:func:`open_store`):

* SQLite (the default): :class:`SqliteKnowledgeStore`, the FTS5 index in its own file
  ``<data_dir>/knowledge.db`` (:class:`~.index.KnowledgeIndex`, run in a worker thread);
* PostgreSQL (``state.url: postgresql://...``): :class:`~.postgres.PostgresKnowledgeStore`, tables
  in the state database with a ``tsvector`` column behind a GIN index, shared by every replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from board.memory.knowledge.chunking import DEFAULT_CHUNK_CHARS, Chunk
from board.memory.knowledge.index import DocumentInfo, KnowledgeIndex, SearchHit, SyncReport
from board.storage import Database, Dialect

__all__ = ["INDEX_FILE", "KnowledgeStore", "SqliteKnowledgeStore", "open_store"]

#: The SQLite index file, in the data dir.
INDEX_FILE = "knowledge.db"


class KnowledgeStore(Protocol):
    """Where the chunks of the knowledge documents are indexed; see the module docstring."""

    #: Where the index is, for people (``sabha kb list``): a file, or the PostgreSQL tables.
    where: str

    async def sync(self, folder: Path, *, max_chars: int = DEFAULT_CHUNK_CHARS,
                   max_file_bytes: int = 20 * 1024 * 1024) -> SyncReport:
        """Bring the index in step with ``folder`` (incremental: unchanged files are not read)."""
        ...

    async def search(self, query: str, scopes: Sequence[str] | None, *, limit: int = 5,
                     text_chars: int | None = None) -> list[SearchHit]:
        """The ``limit`` best chunks for ``query`` among ``scopes`` (None: every scope), best first."""
        ...

    async def documents(self, scopes: Iterable[str] | None = None) -> list[DocumentInfo]:
        """The workspace's documents (or those of ``scopes``), by path."""
        ...

    async def counts(self) -> tuple[int, int]:
        """(documents, chunks) in the index."""
        ...

    async def put_chunks(self, path: str, scope: str, *, sha256: str, size: int, chunks: Sequence[Chunk]) -> int:
        """Index a document attached in the conversation ``scope``; returns the chunks written."""
        ...

    async def drop_conversation_documents(self, indexed_before: str) -> int:
        """Remove the conversations' documents last indexed before ``indexed_before`` (ISO UTC)."""
        ...

    async def rebuild(self) -> None:
        """Empty the index (every document and chunk); the next :meth:`sync` indexes the folder again."""
        ...

    def close(self) -> None:
        """Let go of what the index holds open (not the state store, which its owner closes)."""
        ...


class SqliteKnowledgeStore:
    """The FTS5 index file (:class:`~.index.KnowledgeIndex`), its blocking calls run in a worker thread."""

    def __init__(self, path: Path, *, driver: Any = None) -> None:
        self._driver = driver
        self.index = KnowledgeIndex(path, driver=driver)
        self.where = str(path)

    async def sync(self, folder: Path, *, max_chars: int = DEFAULT_CHUNK_CHARS,
                   max_file_bytes: int = 20 * 1024 * 1024) -> SyncReport:
        return await asyncio.to_thread(self.index.sync, folder, max_chars=max_chars, max_file_bytes=max_file_bytes)

    async def search(self, query: str, scopes: Sequence[str] | None, *, limit: int = 5,
                     text_chars: int | None = None) -> list[SearchHit]:
        return await asyncio.to_thread(self.index.search, query, scopes, limit=limit, text_chars=text_chars)

    async def documents(self, scopes: Iterable[str] | None = None) -> list[DocumentInfo]:
        return await asyncio.to_thread(self.index.documents, scopes)

    async def counts(self) -> tuple[int, int]:
        return await asyncio.to_thread(self.index.counts)

    async def put_chunks(self, path: str, scope: str, *, sha256: str, size: int, chunks: Sequence[Chunk]) -> int:
        return await asyncio.to_thread(self.index.put_chunks, path, scope, sha256=sha256, size=size, chunks=chunks)

    async def drop_conversation_documents(self, indexed_before: str) -> int:
        return await asyncio.to_thread(self.index.drop_conversation_documents, indexed_before)

    async def rebuild(self) -> None:
        """Delete the file (and its WAL) and start a new one: derived data, rebuilt from the documents."""
        path = self.index.path
        self.index.close()
        for suffix in ("", "-wal", "-shm"):
            await asyncio.to_thread(Path(f"{path}{suffix}").unlink, missing_ok=True)
        self.index = KnowledgeIndex(path, driver=self._driver)

    def close(self) -> None:
        self.index.close()


def open_store(data_dir: Path, db: Database | None = None, *, driver: Any = None) -> KnowledgeStore:
    """The index for a board whose state is in ``db``: in PostgreSQL when ``db`` is PostgreSQL (its tables
    come with the state store's migrations), else the SQLite file in ``data_dir`` (raises
    :class:`~.fts.FTS5Unavailable` when no SQLite here has FTS5)."""
    if db is not None and db.dialect is Dialect.POSTGRES:
        from board.memory.knowledge.postgres import PostgresKnowledgeStore

        return PostgresKnowledgeStore(db)
    return SqliteKnowledgeStore(data_dir / INDEX_FILE, driver=driver)
