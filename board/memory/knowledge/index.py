"""The knowledge index: one SQLite file with an FTS5 table of chunks, BM25-ranked.

Tables: ``documents`` (path relative to the knowledge folder, scope, size, mtime, content
hash, chunk count, the error that kept it out), ``chunk_meta`` (one row per chunk: its
document, scope and heading) and ``chunk_fts`` (FTS5 over heading and body, Porter
stemming, diacritics folded; its rowid is the ``chunk_meta`` id). The file is derived
data: it can be deleted at any time and is rebuilt from the documents; a file of another
schema version is rebuilt as well. (The conversations' long documents are not in the folder:
``sabha kb reindex`` indexes them again from the state db's text cache.)

:meth:`KnowledgeIndex.sync` brings it in step with the folder incrementally: a file whose
size and mtime are unchanged is not read, a file whose content hash is unchanged is not
re-chunked, a changed one is replaced in one transaction, a deleted one removed.
:meth:`KnowledgeIndex.search` filters by scope *in the SQL query* (``shared`` plus the
asking role's own), so another role's private chunks can never come back.

Documents attached in a conversation (:mod:`board.media.library`) are not files of the
folder: :meth:`KnowledgeIndex.put_chunks` writes them with a conversation scope
(``chat:<hash of channel and chat>``, see :func:`conversation_scope`), which no role slug
can equal, and :meth:`sync` leaves them alone. Only a search given that scope finds them.

The methods block (SQLite in this thread); the async :class:`~.base.KnowledgeBase`
runs them in a worker thread. One lock serialises use of the connection.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from board.memory.knowledge.chunking import (
    DEFAULT_CHUNK_CHARS,
    SUPPORTED_SUFFIXES,
    Chunk,
    DocumentError,
    chunk_document,
)
from board.memory.knowledge.fts import fts5_driver
from board.roles import is_role_slug
from board.workspace.files import FileProblem, read_checked

__all__ = [
    "CONVERSATION_PREFIX",
    "SCHEMA_VERSION",
    "SHARED",
    "DocumentInfo",
    "KnowledgeIndex",
    "Prepared",
    "SearchHit",
    "SyncReport",
    "conversation_scope",
    "is_conversation_scope",
    "match_expression",
    "now_iso",
    "prepare_document",
    "query_words",
    "read_document",
    "scope_of",
    "walk_folder",
]

log = logging.getLogger("sabha.knowledge")

SCHEMA_VERSION = 1
SHARED = "shared"
#: The scope of a conversation's attached documents starts with this (":" is in no role slug).
CONVERSATION_PREFIX = "chat:"
#: What the error for an oversized document tells the owner to do.
TOO_LARGE = "split it, or raise knowledge.max_file_bytes"
MAX_QUERY_TERMS = 16
#: Words too common to help a BM25 query (they only slow it down).
STOPWORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on",
    "or", "our", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "to", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would",
    "you", "your"
})

_SCHEMA = """
CREATE TABLE documents (
    id         INTEGER PRIMARY KEY,
    path       TEXT NOT NULL UNIQUE,
    scope      TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    sha256     TEXT,
    chunks     INTEGER NOT NULL DEFAULT 0,
    indexed_at TEXT NOT NULL,
    error      TEXT
);
CREATE TABLE chunk_meta (
    id      INTEGER PRIMARY KEY,
    doc_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord     INTEGER NOT NULL,
    scope   TEXT NOT NULL,
    heading TEXT NOT NULL
);
CREATE INDEX chunk_meta_doc ON chunk_meta(doc_id);
CREATE VIRTUAL TABLE chunk_fts USING fts5(heading, body, tokenize='porter unicode61 remove_diacritics 2');
"""


def read_document(path: Path, *, root: Path | None, max_bytes: int, what: str) -> bytes:
    """The bytes of one document after the one check every document gets, whoever reads it
    (:func:`~board.workspace.files.read_checked`): a regular file (not a FIFO, not a device),
    within ``knowledge.max_file_bytes``. The index's sync passes the knowledge folder as
    ``root`` (a symlink or a hard link leading out of it is refused); ``sabha kb add`` passes
    None for a file from outside, which must then be named directly, never through a symlink.

    Raises :class:`FileProblem` (why, and what to do) or ``FileNotFoundError``."""
    return read_checked(path, root=root, max_bytes=max_bytes, what=what, follow_links=root is not None,
                        too_large=TOO_LARGE)


@dataclass(frozen=True)
class SearchHit:
    """One search result: where it came from, how well it matched (higher is better) and its text."""

    source: str
    scope: str
    heading: str
    score: float
    text: str


@dataclass(frozen=True)
class DocumentInfo:
    """One indexed (or refused) document, for ``sabha kb list``."""

    path: str
    scope: str
    size: int
    chunks: int
    indexed_at: str
    error: str | None


@dataclass
class SyncReport:
    """What one sync did (relative paths)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    chunks: int = 0
    bytes_read: int = 0

    def record(self, relative: str, prepared: Prepared, *, replaced: bool) -> None:
        """Count a document just (re)indexed, or refused (logged)."""
        if prepared.error is not None:
            log.warning("knowledge: %s is not indexed: %s", relative, prepared.error)
            self.failed.append((relative, prepared.error))
        else:
            self.chunks += len(prepared.chunks)
            (self.updated if replaced else self.added).append(relative)

    @property
    def changed(self) -> bool:
        """True when the index changed."""
        return bool(self.added or self.updated or self.removed or self.failed)

    def describe(self) -> str:
        """One log line."""
        parts = [f"{len(self.added)} added", f"{len(self.updated)} updated", f"{len(self.removed)} removed",
                 f"{self.unchanged} unchanged", f"{self.chunks} chunks written"]
        if self.failed:
            parts.append(f"{len(self.failed)} not indexed ({'; '.join(e for _, e in self.failed[:3])})")
        return ", ".join(parts)


def scope_of(relative: str) -> str | None:
    """The scope of a document at ``relative`` (posix, inside the knowledge folder): its first
    folder (``shared`` or a role slug); a file at the top is shared. None: not a scope folder."""
    parts = relative.split("/")
    if len(parts) == 1:
        return SHARED
    first = parts[0]
    return first if first == SHARED or is_role_slug(first) else None


def conversation_scope(channel: str, chat_id: str) -> str:
    """The scope of the documents attached in one conversation (a chat on a channel)."""
    digest = hashlib.sha256(f"{channel}\n{chat_id}".encode()).hexdigest()[:20]
    return f"{CONVERSATION_PREFIX}{digest}"


def is_conversation_scope(scope: str) -> bool:
    """True for a conversation's scope (see :func:`conversation_scope`)."""
    return scope.startswith(CONVERSATION_PREFIX)


def query_words(query: str) -> list[str]:
    """The words a search looks for: lowercase, stop words dropped unless nothing else is left,
    each once, at most :data:`MAX_QUERY_TERMS` (both backends search for these)."""
    words = [w for w in re.findall(r"\w+", query.lower()) if w]
    useful = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(useful))[:MAX_QUERY_TERMS]


def match_expression(query: str) -> str | None:
    """An FTS5 query for free text: its words (:func:`query_words`), each quoted (so no FTS5
    syntax in the text can act), joined with OR for BM25 to rank."""
    unique = query_words(query)
    return " OR ".join(f'"{w}"' for w in unique) if unique else None


def walk_folder(folder: Path, warned: set[str]) -> dict[str, tuple[str, Path, os.stat_result]]:
    """Relative path -> (scope, path, stat) of every indexable file under ``folder``; a top folder that
    is neither ``shared`` nor a role slug is logged once (``warned`` remembers which) and skipped."""
    found: dict[str, tuple[str, Path, os.stat_result]] = {}
    if not folder.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not _ignored(d))
        for name in sorted(filenames):
            if _ignored(name) or not name.lower().endswith(SUPPORTED_SUFFIXES):
                continue
            path = Path(dirpath) / name
            relative = path.relative_to(folder).as_posix()
            scope = scope_of(relative)
            if scope is None:
                top = relative.split("/")[0]
                if top not in warned:
                    warned.add(top)
                    log.warning("knowledge: folder %r is neither 'shared' nor a role slug; its files are not "
                                "indexed (move them to knowledge/shared/ or knowledge/<role>/)", top)
                continue
            try:
                found[relative] = (scope, path, path.stat())
            except OSError:
                continue  # gone between the listing and the stat, or a dangling symlink
    return found


@dataclass(frozen=True)
class Prepared:
    """One document read for the index: its hash and chunks, or why it is not indexed."""

    sha256: str | None
    chunks: list[Chunk]
    error: str | None
    bytes_read: int
    #: True when its content hash is the one already indexed (touched, not changed: not chunked)
    same: bool = False


def prepare_document(folder: Path, relative: str, path: Path, *, max_chars: int, max_file_bytes: int,
                     known_sha256: str | None) -> Prepared | None:
    """Read, check, hash and chunk the document ``relative`` of ``folder`` (the work of a sync that
    needs no index). None when it was deleted since the walk. ``known_sha256``: the hash the index
    holds for it (cleanly indexed), so an unchanged content is not chunked again."""
    try:
        data = read_document(path, root=folder, max_bytes=max_file_bytes, what=f"knowledge/{relative}")
    except FileNotFoundError:
        return None
    except (FileProblem, OSError) as exc:
        return Prepared(None, [], str(exc), 0)
    digest = hashlib.sha256(data).hexdigest()
    if known_sha256 == digest:
        return Prepared(digest, [], None, len(data), same=True)
    try:
        chunks = chunk_document(relative, data, max_chars=max_chars)
    except (DocumentError, OSError) as exc:
        return Prepared(digest, [], str(exc), len(data))
    return Prepared(digest, chunks, None, len(data))


def _ignored(name: str) -> bool:
    return name.startswith((".", "~", "#")) or name.endswith(("~", ".swp", ".tmp", ".part"))


def now_iso() -> str:
    """Now, as the index records it (ISO UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class _SyncPass(NamedTuple):
    """What one :meth:`KnowledgeIndex.sync` passes to each file it (re)indexes."""

    folder: Path
    report: SyncReport
    max_chars: int
    max_file_bytes: int


class KnowledgeIndex:
    """The index file; see the module docstring. ``driver`` is the DB-API module to use (default:
    the first with FTS5); without FTS5 :func:`~.fts.fts5_driver` raises :class:`~.fts.FTS5Unavailable`."""

    def __init__(self, path: Path, *, driver: Any = None) -> None:
        self.path = path
        self._driver = fts5_driver([driver] if driver is not None else None)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = self._driver.connect(str(path), check_same_thread=False, timeout=10.0)
        self._unscoped_warned: set[str] = set()
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._ensure_schema()
        except BaseException:
            self._conn.close()
            raise

    def _ensure_schema(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version:
            log.warning("knowledge index %s has schema %s, this Sabha uses %s: rebuilding it from the documents",
                        self.path, version, SCHEMA_VERSION)
        tables = [r[0] for r in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'chunk_fts_%'")]
        with self._conn:
            for table in tables:
                self._conn.execute(f'DROP TABLE IF EXISTS "{table}"')
            self._conn.executescript(_SCHEMA)
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()

    # -- sync ----------------------------------------------------------------------

    def sync(self, folder: Path, *, max_chars: int = DEFAULT_CHUNK_CHARS,
             max_file_bytes: int = 20 * 1024 * 1024) -> SyncReport:
        """Bring the index in step with ``folder``; see the module docstring."""
        report = SyncReport()
        files = walk_folder(folder, self._unscoped_warned)
        with self._lock:
            known = {row[1]: row for row in self._conn.execute(
                "SELECT id, path, size, mtime_ns, sha256, error FROM documents WHERE scope NOT LIKE ?",
                (f"{CONVERSATION_PREFIX}%",))}
        for relative in sorted(set(known) - set(files)):
            with self._lock, self._conn:
                self._delete(known[relative][0])
            report.removed.append(relative)
        for relative, (scope, path, st) in files.items():
            row = known.get(relative)
            if row is not None and row[2] == st.st_size and row[3] == st.st_mtime_ns:
                report.unchanged += 1
                continue
            self._index_file(_SyncPass(folder, report, max_chars, max_file_bytes), relative, scope, path, st, row)
        return report

    def _index_file(self, sync: _SyncPass, relative: str, scope: str, path: Path, st: os.stat_result,
                    row: Any) -> None:
        folder, report, max_chars, max_file_bytes = sync
        known = row[4] if row is not None and row[5] is None else None
        prepared = prepare_document(folder, relative, path, max_chars=max_chars, max_file_bytes=max_file_bytes,
                                    known_sha256=known)
        if prepared is None:
            return  # deleted since the walk: the next sync removes its row
        report.bytes_read += prepared.bytes_read
        if prepared.same:
            with self._lock, self._conn:  # touched, not changed
                self._conn.execute("UPDATE documents SET size=?, mtime_ns=? WHERE id=?",
                                   (st.st_size, st.st_mtime_ns, row[0]))
            report.unchanged += 1
            return
        chunks, error = prepared.chunks, prepared.error
        with self._lock, self._conn:
            if row is not None:
                self._delete(row[0])
            cur = self._conn.execute(
                "INSERT INTO documents(path, scope, size, mtime_ns, sha256, chunks, indexed_at, error) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (relative, scope, st.st_size, st.st_mtime_ns, prepared.sha256, len(chunks), now_iso(), error))
            self._insert_chunks(cur.lastrowid, scope, chunks)
        report.record(relative, prepared, replaced=row is not None)

    def put_chunks(self, path: str, scope: str, *, sha256: str, size: int, chunks: Sequence[Chunk]) -> int:
        """Index ``chunks`` as the document ``path`` of the conversation ``scope`` (replacing one of that
        path; the same content again changes nothing). Returns the chunks written."""
        if not is_conversation_scope(scope):
            raise ValueError(f"{scope!r} is not a conversation scope")
        with self._lock, self._conn:
            row = self._conn.execute("SELECT id, sha256 FROM documents WHERE path=?", (path,)).fetchone()
            if row is not None and row[1] == sha256:  # sent again: kept as long as from now
                self._conn.execute("UPDATE documents SET indexed_at=? WHERE id=?", (now_iso(), row[0]))
                return 0
            if row is not None:
                self._delete(row[0])
            cur = self._conn.execute(
                "INSERT INTO documents(path, scope, size, mtime_ns, sha256, chunks, indexed_at, error) "
                "VALUES (?, ?, ?, 0, ?, ?, ?, NULL)", (path, scope, size, sha256, len(chunks), now_iso()))
            self._insert_chunks(cur.lastrowid, scope, chunks)
        return len(chunks)

    def drop_conversation_documents(self, indexed_before: str) -> int:
        """Remove the conversations' documents last indexed before ``indexed_before`` (ISO UTC); returns how many."""
        with self._lock, self._conn:
            ids = [r[0] for r in self._conn.execute(
                "SELECT id FROM documents WHERE scope LIKE ? AND indexed_at < ?",
                (f"{CONVERSATION_PREFIX}%", indexed_before))]
            for doc_id in ids:
                self._delete(doc_id)
        return len(ids)

    def _insert_chunks(self, doc_id: int | None, scope: str, chunks: Sequence[Chunk]) -> None:
        """Write a document's chunks (the caller holds the lock and the transaction)."""
        if not chunks:
            return
        first = (self._conn.execute("SELECT COALESCE(MAX(id), 0) FROM chunk_meta").fetchone()[0]) + 1
        ids = range(first, first + len(chunks))
        self._conn.executemany(
            "INSERT INTO chunk_meta(id, doc_id, ord, scope, heading) VALUES (?, ?, ?, ?, ?)",
            [(i, doc_id, n, scope, c.heading) for n, (i, c) in enumerate(zip(ids, chunks, strict=True))])
        self._conn.executemany("INSERT INTO chunk_fts(rowid, heading, body) VALUES (?, ?, ?)",
                               [(i, c.heading, c.text) for i, c in zip(ids, chunks, strict=True)])

    def _delete(self, doc_id: int) -> None:
        """Remove a document and its chunks (the caller holds the lock and the transaction)."""
        self._conn.execute("DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM chunk_meta WHERE doc_id=?)",
                           (doc_id,))
        self._conn.execute("DELETE FROM chunk_meta WHERE doc_id=?", (doc_id,))
        self._conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))

    # -- reading ---------------------------------------------------------------------

    def search(self, query: str, scopes: Sequence[str] | None, *, limit: int = 5,
               text_chars: int | None = None) -> list[SearchHit]:
        """The ``limit`` best chunks for ``query`` among ``scopes`` (None: every scope, the owner's
        view), best first; an empty list when the query has no words or nothing matches."""
        expression = match_expression(query)
        if expression is None or (scopes is not None and not scopes):
            return []
        sql = ("SELECT d.path, m.scope, m.heading, chunk_fts.body, bm25(chunk_fts, 2.0, 1.0) AS rank "
               "FROM chunk_fts JOIN chunk_meta m ON m.id = chunk_fts.rowid JOIN documents d ON d.id = m.doc_id "
               "WHERE chunk_fts MATCH ?")
        params: list[Any] = [expression]
        if scopes is not None:
            sql += f" AND m.scope IN ({', '.join('?' for _ in scopes)})"
            params.extend(scopes)
        sql += " ORDER BY rank LIMIT ?"
        params.append(max(1, limit))
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        hits = []
        for path, scope, heading, body, rank in rows:
            text = body if text_chars is None or len(body) <= text_chars else body[: text_chars - 1] + "…"
            hits.append(SearchHit(source=path, scope=scope, heading=heading, score=float(f"{-float(rank):.6g}"),
                                  text=text))
        return hits

    def documents(self, scopes: Iterable[str] | None = None) -> list[DocumentInfo]:
        """Every document of the workspace in the index (or those of ``scopes``), by path."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT path, scope, size, chunks, indexed_at, error FROM documents ORDER BY path").fetchall()
        if scopes is None:  # the workspace's documents; a conversation's are listed by `sabha media list`
            return [DocumentInfo(*row) for row in rows if not is_conversation_scope(row[1])]
        wanted = set(scopes)
        return [DocumentInfo(*row) for row in rows if row[1] in wanted]

    def counts(self) -> tuple[int, int]:
        """(documents, chunks) in the index."""
        with self._lock:
            docs = self._conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = self._conn.execute("SELECT COUNT(*) FROM chunk_meta").fetchone()[0]
        return int(docs), int(chunks)
