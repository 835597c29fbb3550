"""The knowledge index in PostgreSQL: full-text search with ``tsvector`` behind a GIN index.

With ``state.url: postgresql://...`` the index lives in the state database (migration
``0550_knowledge_index``), so every replica searches the same index: ``knowledge_documents`` (one
row per document, the same columns as the SQLite file's ``documents``) and ``knowledge_chunks`` (one
row per chunk: heading, body and ``search``, a ``tsvector`` of the heading (weight A) and the body
(weight B) with the ``english`` configuration: stemming and stop words, as SQLite's Porter tokenizer).
A query's words (:func:`~.index.query_words`, the same as on SQLite) are OR-ed with
``websearch_to_tsquery`` (which never fails on user text) and the chunks ranked with ``ts_rank``
times the number of the query's words a chunk has (``ts_rank`` knows no document frequency; this keeps
BM25's preference for the chunk that answers more of the question).
Diacritics are folded in Python on both sides (``résumé`` finds ``resume``), as SQLite's
``remove_diacritics`` does, without needing the ``unaccent`` extension. Scopes are filtered in the
query, as on SQLite: another role's private chunks never come back.

Several replicas sync the same workspace folder into the same database: every write (a document
(re)indexed, removed, a conversation's document put or dropped, a rebuild) is one transaction that
first takes the transaction-scoped advisory lock :data:`KNOWLEDGE_LOCK` and reads the document's row
again under it, so replicas syncing at once never index a document twice (``path`` is unique as well)
and a replica that comes second finds the document indexed and counts it unchanged. Reading and
chunking the files happens outside the lock, in a worker thread.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from board.memory.knowledge.chunking import DEFAULT_CHUNK_CHARS, Chunk
from board.memory.knowledge.index import (
    CONVERSATION_PREFIX,
    DocumentInfo,
    SearchHit,
    SyncReport,
    is_conversation_scope,
    now_iso,
    prepare_document,
    query_words,
    walk_folder,
)
from board.storage import Database, Row, Tx

__all__ = ["KNOWLEDGE_LOCK", "TS_CONFIG", "PostgresKnowledgeStore", "fold"]

#: The advisory lock every write to the knowledge tables takes first ("sabha" and issue 16).
KNOWLEDGE_LOCK = 0x5AB4A0016
#: The text search configuration: English stemming and stop words (SQLite: the Porter tokenizer).
TS_CONFIG = "english"

_DOCUMENT_COLUMNS = "path, scope, size, mtime_ns, sha256, chunks, indexed_at, error"
_INSERT_DOCUMENT = (f"INSERT INTO knowledge_documents({_DOCUMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id")
_INSERT_CHUNKS = (
    "INSERT INTO knowledge_chunks(doc_id, ord, scope, heading, body, search) "
    f"SELECT ?, t.ord, ?, t.heading, t.body, setweight(to_tsvector('{TS_CONFIG}', t.heading_folded), 'A') || "
    f"setweight(to_tsvector('{TS_CONFIG}', t.body_folded), 'B') "
    "FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), "
    "CAST(? AS TEXT[])) AS t(ord, heading, body, heading_folded, body_folded)"
)


def fold(text: str) -> str:
    """``text`` without diacritics (``résumé`` -> ``resume``) and without NUL (which PostgreSQL's text refuses)."""
    decomposed = unicodedata.normalize("NFKD", _clean(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _clean(text: str) -> str:
    return text.replace("\x00", "")


async def _locked(tx: Tx) -> None:
    await tx.execute("SELECT pg_advisory_xact_lock(?)", (KNOWLEDGE_LOCK,))


async def _insert(tx: Tx, values: tuple[str, str, int, int, str | None, str | None], chunks: Sequence[Chunk]) -> None:
    """A document's row and its chunks (inside the caller's locked transaction).
    ``values``: path, scope, size, mtime_ns, sha256, error."""
    path, scope, size, mtime_ns, sha256, error = values
    row = await tx.fetchone(_INSERT_DOCUMENT, (path, scope, int(size), int(mtime_ns), sha256, len(chunks),
                                              now_iso(), error))
    assert row is not None
    if not chunks:
        return
    headings = [_clean(c.heading) for c in chunks]
    bodies = [_clean(c.text) for c in chunks]
    await tx.execute(_INSERT_CHUNKS, (int(row["id"]), scope, list(range(len(chunks))), headings, bodies,
                                      [fold(h) for h in headings], [fold(b) for b in bodies]))


def _info(row: Row) -> DocumentInfo:
    return DocumentInfo(path=row["path"], scope=row["scope"], size=int(row["size"]), chunks=int(row["chunks"]),
                        indexed_at=row["indexed_at"], error=row["error"])


class PostgresKnowledgeStore:
    """The knowledge tables of a PostgreSQL state store; see the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        url = getattr(db, "url", None)
        self.where = (f"PostgreSQL {url} (tables knowledge_documents, knowledge_chunks)" if url is not None
                      else "PostgreSQL (tables knowledge_documents, knowledge_chunks)")
        self._unscoped_warned: set[str] = set()

    # -- sync ----------------------------------------------------------------------

    async def sync(self, folder: Path, *, max_chars: int = DEFAULT_CHUNK_CHARS,
                   max_file_bytes: int = 20 * 1024 * 1024) -> SyncReport:
        report = SyncReport()
        files = await asyncio.to_thread(walk_folder, folder, self._unscoped_warned)
        known = {r["path"]: r for r in await self.db.fetchall(
            "SELECT path, size, mtime_ns FROM knowledge_documents WHERE scope NOT LIKE ?",
            (f"{CONVERSATION_PREFIX}%",))}
        for relative in sorted(set(known) - set(files)):
            async with self.db.transaction() as tx:
                await _locked(tx)
                gone = await tx.fetchone("DELETE FROM knowledge_documents WHERE path = ? AND scope NOT LIKE ? "
                                         "RETURNING id", (relative, f"{CONVERSATION_PREFIX}%"))
            if gone is not None:  # else another replica removed it first
                report.removed.append(relative)
        for relative, (scope, path, st) in files.items():
            row = known.get(relative)
            if row is not None and int(row["size"]) == st.st_size and int(row["mtime_ns"]) == st.st_mtime_ns:
                report.unchanged += 1
                continue
            await self._index_file(folder, report, (relative, scope, path, st.st_size, st.st_mtime_ns),
                                   (max_chars, max_file_bytes))
        return report

    async def _index_file(self, folder: Path, report: SyncReport, file: tuple[str, str, Path, int, int],
                          limits: tuple[int, int]) -> None:
        relative, scope, path, size, mtime_ns = file
        max_chars, max_file_bytes = limits
        before = await self.db.fetchone("SELECT sha256, error FROM knowledge_documents WHERE path = ?", (relative,))
        known = before["sha256"] if before is not None and before["error"] is None else None
        prepared = await asyncio.to_thread(prepare_document, folder, relative, path, max_chars=max_chars,
                                           max_file_bytes=max_file_bytes, known_sha256=known)
        if prepared is None:
            return  # deleted since the walk: the next sync removes its row
        report.bytes_read += prepared.bytes_read
        async with self.db.transaction() as tx:
            await _locked(tx)
            now = await tx.fetchone("SELECT id, sha256, error FROM knowledge_documents WHERE path = ?", (relative,))
            if now is not None and now["error"] is None and now["sha256"] == prepared.sha256:
                # touched, not changed; or another replica indexed this very content while we read it
                await tx.execute("UPDATE knowledge_documents SET size = ?, mtime_ns = ? WHERE id = ?",
                                 (int(size), int(mtime_ns), int(now["id"])))
                report.unchanged += 1
                return
            if prepared.same:  # the content we skipped chunking was replaced meanwhile: chunk it after all
                prepared = None
            else:
                if now is not None:
                    await tx.execute("DELETE FROM knowledge_documents WHERE id = ?", (int(now["id"]),))
                await _insert(tx, (relative, scope, size, mtime_ns, prepared.sha256, prepared.error),
                              prepared.chunks)
        if prepared is None:
            await self._index_file(folder, report, file, limits)  # rare: read again, without the shortcut
            return
        report.record(relative, prepared, replaced=before is not None)

    # -- the conversations' documents -------------------------------------------------------

    async def put_chunks(self, path: str, scope: str, *, sha256: str, size: int, chunks: Sequence[Chunk]) -> int:
        """As :meth:`~.index.KnowledgeIndex.put_chunks`: the same content again only renews its date."""
        if not is_conversation_scope(scope):
            raise ValueError(f"{scope!r} is not a conversation scope")
        async with self.db.transaction() as tx:
            await _locked(tx)
            row = await tx.fetchone("SELECT id, sha256 FROM knowledge_documents WHERE path = ?", (path,))
            if row is not None and row["sha256"] == sha256:  # sent again: kept as long as from now
                await tx.execute("UPDATE knowledge_documents SET indexed_at = ? WHERE id = ?",
                                 (now_iso(), int(row["id"])))
                return 0
            if row is not None:
                await tx.execute("DELETE FROM knowledge_documents WHERE id = ?", (int(row["id"]),))
            await _insert(tx, (path, scope, size, 0, sha256, None), chunks)
        return len(chunks)

    async def drop_conversation_documents(self, indexed_before: str) -> int:
        async with self.db.transaction() as tx:
            await _locked(tx)
            gone = await tx.fetchall("DELETE FROM knowledge_documents WHERE scope LIKE ? AND indexed_at < ? "
                                     "RETURNING id", (f"{CONVERSATION_PREFIX}%", indexed_before))
        return len(gone)

    async def rebuild(self) -> None:
        async with self.db.transaction() as tx:
            await _locked(tx)
            await tx.execute("DELETE FROM knowledge_chunks")
            await tx.execute("DELETE FROM knowledge_documents")

    # -- reading ---------------------------------------------------------------------

    async def search(self, query: str, scopes: Sequence[str] | None, *, limit: int = 5,
                     text_chars: int | None = None) -> list[SearchHit]:
        words = query_words(fold(query))
        if not words or (scopes is not None and not scopes):
            return []
        # ts_rank has no inverse document frequency; BM25's preference for chunks that match more of the
        # query's words is kept by weighing the rank by how many of them a chunk has.
        sql = ("SELECT d.path, c.scope, c.heading, c.body, ts_rank(c.search, q.query) * "
               f"(SELECT count(*) FROM unnest(q.words) w WHERE c.search @@ plainto_tsquery('{TS_CONFIG}', w)) AS rank "
               "FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.doc_id, "
               f"(SELECT websearch_to_tsquery('{TS_CONFIG}', ?) AS query, CAST(? AS TEXT[]) AS words) q "
               "WHERE c.search @@ q.query")
        params: list[object] = [" or ".join(words), words]
        if scopes is not None:
            sql += " AND c.scope = ANY(CAST(? AS TEXT[]))"
            params.append(list(scopes))
        sql += " ORDER BY rank DESC, c.id LIMIT ?"
        params.append(max(1, limit))
        hits = []
        for row in await self.db.fetchall(sql, params):
            body = row["body"]
            text = body if text_chars is None or len(body) <= text_chars else body[: text_chars - 1] + "…"
            hits.append(SearchHit(source=row["path"], scope=row["scope"], heading=row["heading"],
                            score=float(f"{float(row['rank']):.6g}"), text=text))
        return hits

    async def documents(self, scopes: Iterable[str] | None = None) -> list[DocumentInfo]:
        rows = await self.db.fetchall(
            f'SELECT {_DOCUMENT_COLUMNS} FROM knowledge_documents ORDER BY path COLLATE "C"')
        if scopes is None:  # the workspace's documents; a conversation's are listed by `sabha media list`
            return [_info(r) for r in rows if not is_conversation_scope(r["scope"])]
        wanted = set(scopes)
        return [_info(r) for r in rows if r["scope"] in wanted]

    async def counts(self) -> tuple[int, int]:
        row = await self.db.fetchone("SELECT (SELECT count(*) FROM knowledge_documents) AS documents, "
                                     "(SELECT count(*) FROM knowledge_chunks) AS chunks")
        assert row is not None
        return int(row["documents"]), int(row["chunks"])

    def close(self) -> None:
        """Nothing to close: the state store is the board's."""
