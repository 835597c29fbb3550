"""The knowledge base as the board uses it: a folder of documents, its index, its watcher.

:class:`KnowledgeBase` owns ``workspace/knowledge/`` (``settings.folder``) and the index file
``<data_dir>/knowledge.db`` (with a PostgreSQL state store, ``state.url``, the index is tables of that
database instead, shared by every replica: :mod:`.postgres`; :mod:`.store` chooses). On SQLite the index
lives in its own file, not in the state db: it is derived data (delete it and it is rebuilt from the
documents), it grows with the documents (benchmarks/kb.py: 50 MB of Markdown make a 97 MB index, which
the state db's backups and ``quick_check`` need not carry), bulk indexing then never holds the state
db's single writer lock that the intake's durable claims wait for, and it can use another SQLite driver
when the standard one lacks FTS5 (see :mod:`.fts`).

:meth:`KnowledgeBase.watch` re-indexes incrementally as files are saved, added or deleted
(watchfiles, as the souls do). Without a running watcher (``sabha ask``, ``sabha kb``),
:meth:`search` first brings the index in step with the folder (a ``stat`` per file, at most
every ``RESYNC_S`` seconds). :meth:`add` checks a document as the index would, then copies
it into the folder and indexes it (nothing is copied that would not be indexed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from board.memory.knowledge.chunking import DEFAULT_CHUNK_CHARS, SUPPORTED_SUFFIXES, Chunk, chunk_document
from board.memory.knowledge.index import SHARED, DocumentInfo, SearchHit, SyncReport, read_document
from board.memory.knowledge.store import INDEX_FILE, KnowledgeStore, open_store
from board.roles import is_role_slug
from board.storage import Database
from board.workspace.paths import resolve_inside

__all__ = ["INDEX_FILE", "RESYNC_S", "KnowledgeBase", "KnowledgeSettings", "scopes_for"]

log = logging.getLogger("sabha.knowledge")

RESYNC_S = 2.0


@dataclass(frozen=True)
class KnowledgeSettings:
    """``knowledge:`` in the config, as plain values."""

    enabled: bool = True
    folder: str = "knowledge"  # relative to the workspace
    max_results: int = 5
    chunk_chars: int = DEFAULT_CHUNK_CHARS
    result_chars: int = 1000
    max_file_bytes: int = 20 * 1024 * 1024


def scopes_for(role: str | None, conversation: str | None = None) -> tuple[str, ...] | None:
    """The scopes ``role`` may read: the shared documents, its own, and those attached in the
    ``conversation`` it answers in (a :func:`~.index.conversation_scope`). None (every scope) for
    the owner's own view (``sabha kb search`` without ``--role``)."""
    if role is None:
        return None
    scopes = (SHARED,) if role == SHARED else (SHARED, role)
    return scopes if conversation is None else (*scopes, conversation)


class KnowledgeBase:
    """See the module docstring. Build it with :meth:`open` (raises ``FTS5Unavailable``)."""

    def __init__(self, folder: Path, index: KnowledgeStore, settings: KnowledgeSettings) -> None:
        self.folder = folder
        self.index = index
        self.settings = settings
        self._sync_lock = asyncio.Lock()
        self._synced_at: float | None = None
        self._watching = False
        self._has_chunks = False
        self._counted = False  # has_documents is known once the first sync counted the chunks

    @classmethod
    def open(cls, workspace: Path, data_dir: Path, settings: KnowledgeSettings | None = None, *,
             db: Database | None = None, driver: Any = None) -> KnowledgeBase:
        """The knowledge base of ``workspace``: its index in the state store ``db`` when that is PostgreSQL,
        else in its own SQLite file under ``data_dir`` (see :func:`~.store.open_store`)."""
        settings = settings or KnowledgeSettings()
        folder = resolve_inside(workspace, settings.folder, what="knowledge.folder")
        return cls(folder, open_store(data_dir, db, driver=driver), settings)

    def close(self) -> None:
        """Close the index (its SQLite file; the PostgreSQL state store is its owner's to close)."""
        self.index.close()

    @property
    def has_documents(self) -> bool:
        """True when the index holds at least one searchable chunk (else the tool is not offered)."""
        return self._has_chunks

    @property
    def watching(self) -> bool:
        """True while :meth:`watch` keeps the index in step."""
        return self._watching

    async def sync(self) -> SyncReport:
        """Bring the index in step with the folder now (incremental)."""
        async with self._sync_lock:
            report = await self.index.sync(self.folder, max_chars=self.settings.chunk_chars,
                                           max_file_bytes=self.settings.max_file_bytes)
            self._synced_at = time.monotonic()
            if report.changed or report.chunks or not self._counted:
                self._has_chunks = (await self.index.counts())[1] > 0
                self._counted = True
        if report.changed:
            log.info("knowledge: re-indexed %s: %s", self.folder, report.describe())
        return report

    async def search(self, query: str, *, role: str | None, limit: int | None = None,
                     conversation: str | None = None) -> list[SearchHit]:
        """The best chunks for ``query`` that ``role`` may read in ``conversation`` (see :func:`scopes_for`)."""
        if not self._watching and (self._synced_at is None or time.monotonic() - self._synced_at > RESYNC_S):
            await self.sync()
        return await self.index.search(query, scopes_for(role, conversation), limit=limit or self.settings.max_results,
                                       text_chars=self.settings.result_chars)

    async def documents(self, role: str | None = None) -> list[DocumentInfo]:
        """The documents in the index (those ``role`` may read; every one when None)."""
        if not self._watching:
            await self.sync()
        return await self.index.documents(scopes_for(role))

    async def counts(self) -> tuple[int, int]:
        """(documents, chunks) in the index."""
        return await self.index.counts()

    async def rebuild(self) -> SyncReport:
        """Empty the index and index the folder again (``sabha kb reindex``)."""
        async with self._sync_lock:
            await self.index.rebuild()
            self._has_chunks = False
            self._synced_at = None
        return await self.sync()

    async def put_conversation_document(self, path: str, scope: str, *, sha256: str, size: int,
                                        chunks: list[Chunk]) -> int:
        """Index a document attached in the conversation ``scope`` (see
        :meth:`~.index.KnowledgeIndex.put_chunks`); returns the chunks written."""
        written = await self.index.put_chunks(path, scope, sha256=sha256, size=size, chunks=chunks)
        self._has_chunks = self._has_chunks or bool(chunks)
        return written

    async def drop_conversation_documents(self, keep_days: float) -> int:
        """Remove the conversations' documents not sent for ``keep_days`` (as their files are); returns how many."""
        cutoff = datetime.now(UTC) - timedelta(days=keep_days)
        return await self.index.drop_conversation_documents(cutoff.isoformat(timespec="seconds"))

    def target_for(self, source: Path, role: str | None) -> Path:
        """Where :meth:`add` puts ``source``: ``<folder>/<role or shared>/<name>``."""
        scope = role or SHARED
        if scope != SHARED and not is_role_slug(scope):
            raise ValueError(f"{scope!r} is not a role slug (lowercase letters, digits, - or _)")
        if source.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise ValueError(f"{source.name}: only {', '.join(SUPPORTED_SUFFIXES)} files are indexed")
        return self.folder / scope / source.name

    async def add(self, source: Path, role: str | None = None, *, overwrite: bool = False) -> tuple[Path, SyncReport]:
        """Copy the document ``source`` into the role's folder (shared when None) and index it.

        Checked first, copied only if it will be indexed: the bytes read once with
        :func:`~.index.read_document` (the check the index's sync makes: no symlink, a regular
        file, within ``max_file_bytes``) and chunked, then those bytes written. Raises
        ``FileNotFoundError`` when it does not exist, ``ValueError`` (a :class:`FileProblem` or a
        :class:`DocumentError` saying why) for anything that would not be indexed or a bad role,
        ``FileExistsError`` when a different file of that name is there and ``overwrite`` is off."""
        target = await asyncio.to_thread(self._copy_in, source, role, overwrite)
        return target, await self.sync()

    def _copy_in(self, source: Path, role: str | None, overwrite: bool) -> Path:
        data = read_document(source, root=None, max_bytes=self.settings.max_file_bytes, what=str(source))
        target = self.target_for(source, role)
        chunk_document(str(source), data, max_chars=self.settings.chunk_chars)  # DocumentError: nothing copied
        if target.exists() and not overwrite and target.read_bytes() != data:
            raise FileExistsError(f"{target} already exists with other content; pass --force to replace it")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.part")
        tmp.write_bytes(data)  # the bytes that were checked, not the file again (it may have changed)
        tmp.replace(target)  # the watcher sees one complete file, never a half-copied one
        return target

    async def watch(self, stop: asyncio.Event) -> None:
        """Re-index as documents change until ``stop`` is set (uses watchfiles)."""
        from watchfiles import awatch

        self._watching = True
        try:
            while not stop.is_set():
                try:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    report = await self.sync()
                    docs, chunks = await self.index.counts()
                    log.info("knowledge: watching %s (%d documents, %d chunks; %s)", self.folder, docs, chunks,
                             report.describe())
                    async for _changes in awatch(self.folder, stop_event=stop, recursive=True):
                        await self.sync()
                except asyncio.CancelledError:
                    raise
                except Exception:  # the folder vanished, the index failed: log, wait, start over
                    log.exception("knowledge: watching %s failed; retrying in 2 s", self.folder)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), timeout=2.0)
                else:
                    if not stop.is_set():  # awatch ended by itself (the folder went away)
                        await asyncio.sleep(0.5)
        finally:
            self._watching = False
