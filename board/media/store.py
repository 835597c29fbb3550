"""The media rows in the state db: derived text by blob, and each message's attachments.

What the quotas (:mod:`board.media.quota`) read here: :meth:`MediaStore.kept_bytes` sums, for the rows of
one person's identities (or strangers', or everyone's) recorded within ``keep_days``, the bytes each kept
attachment holds in the file store (``stored_bytes``) and the bytes of text read from it kept in this db
(``text_bytes``: the ``media_derived`` text of its blob and the copy on its row), through the
``(channel, sender, created_at)`` index. :meth:`MediaStore.text_total`, asked before every download for the
total quota, is a running figure: summed once, kept by :meth:`MediaStore.record`, summed again after each
:meth:`MediaStore.prune` (hourly), like the file store's own total; each process keeps its own.

Text parameters are masked here (:func:`board.masking.mask_value`): a document or a transcript may spell
out a configured secret, and not every backend's statement masks on its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from board.masking import mask_value
from board.media.attachment import Attachment, MediaKind
from board.storage.database import Database, Row

__all__ = ["MediaStore", "StoredAttachment"]

_DERIVED_KEEP_CHARS = 20_000  # what a listing or a meeting's evidence needs of a long document


@dataclass(frozen=True)
class StoredAttachment:
    """One attachment of one message, as recorded after it was read."""

    channel: str
    chat_id: str
    thread_id: int | None
    message_id: str | None
    sender: str
    kind: MediaKind
    name: str | None
    mime: str | None
    size: int | None
    blob: str | None
    derived: str | None
    problem: str | None
    created_at: str


class MediaStore:
    """See the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._text_total: int | None = None  # the kept text's bytes (text_total), None: to be summed

    async def text_bytes(self, blob: str, derived: str | None) -> int:
        """The bytes of text an attachment of ``blob`` keeps in this db: what was read from the blob
        (``media_derived``, every ``how``) and ``derived`` as its row keeps it."""
        rows = await self.db.fetchall("SELECT text FROM media_derived WHERE blob = ?", (blob,))
        return sum(len(str(r["text"]).encode()) for r in rows) + len(_row_text(derived).encode())

    async def text_total(self, since: str) -> int:
        """The bytes of text the attachments recorded since ``since`` keep (the running figure; see the
        module docstring)."""
        if self._text_total is None:
            self._text_total = await self.kept_text(since)
        return self._text_total

    async def kept_text(self, since: str) -> int:
        """The bytes of text the attachments recorded since ``since`` (ISO UTC) keep, summed now."""
        row = await self.db.fetchone("SELECT COALESCE(SUM(text_bytes), 0) AS n FROM message_attachments "
                                     "WHERE created_at >= ? AND problem IS NULL AND text_bytes IS NOT NULL", (since,))
        return int(row["n"]) if row is not None else 0

    async def derived(self, blob: str, how: str) -> str | None:
        """Text made earlier from ``blob`` by ``how``, or None."""
        row = await self.db.fetchone("SELECT text FROM media_derived WHERE blob = ? AND how = ?", (blob, how))
        return None if row is None else str(row["text"])

    async def remember(self, blob: str, how: str, text: str) -> None:
        """Keep ``text`` made from ``blob`` by ``how``."""
        await self.db.execute(
            "INSERT INTO media_derived (blob, how, text, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (blob, how) "
            "DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
            mask_value((blob, how, text, _now())))

    async def record(self, *, channel: str, chat_id: str, thread_id: int | None, message_id: str | None,
                     sender: str, attachments: tuple[Attachment, ...], public: bool = False) -> None:
        """Record a message's attachments once read (again for a retried message: replaced); ``public``:
        sent by a stranger (their quota, :mod:`board.media.quota`)."""
        now = _now()
        rows = [(channel, chat_id, thread_id, message_id, sender, i, a.kind.value, a.name, a.mime, a.size, a.blob,
                 _row_text(a.derived) or None, a.problem, now, int(public), a.stored, a.text_bytes)
                for i, a in enumerate(attachments)]
        if not rows:
            return
        async with self.db.transaction() as tx:  # all of a message's attachments, or none
            for row in rows:
                await tx.execute(
                    "INSERT INTO message_attachments (channel, chat_id, thread_id, message_id, sender, ord, kind, "
                    "name, mime, size, blob, derived, problem, created_at, from_stranger, stored_bytes, text_bytes) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (channel, chat_id, message_id, ord) DO UPDATE SET sender = excluded.sender, "
                    "kind = excluded.kind, name = excluded.name, mime = excluded.mime, size = excluded.size, "
                    "blob = excluded.blob, derived = excluded.derived, problem = excluded.problem, "
                    "created_at = excluded.created_at, from_stranger = excluded.from_stranger, "
                    "stored_bytes = excluded.stored_bytes, text_bytes = excluded.text_bytes", mask_value(row))
        if self._text_total is not None:  # a retried message's rows are counted again until the next prune
            self._text_total += sum(a.text_bytes or 0 for a in attachments if a.problem is None)

    async def references(self, blob: str) -> bool:
        """True when a kept attachment (read without a problem) names ``blob``."""
        row = await self.db.fetchone("SELECT 1 AS n FROM message_attachments WHERE blob = ? AND problem IS NULL "
                                     "LIMIT 1", (blob,))
        return row is not None

    async def kept_bytes(self, since: str, *, identities: Sequence[tuple[str, str]] | None = None,
                         public: bool | None = None) -> int:
        """The bytes kept (the file and its copies: ``stored_bytes``, else ``size``; and the text read from it:
        ``text_bytes``) for the files recorded since ``since`` (ISO UTC) and kept (read without a problem): of
        one person (``identities``: their ``(channel, sender)`` pairs), of strangers (``public``), or of
        everyone."""
        where = ["created_at >= ?", "problem IS NULL", "blob IS NOT NULL"]
        args: list[object] = [since]
        if identities:
            where.append("(" + " OR ".join(["(channel = ? AND sender = ?)"] * len(identities)) + ")")
            args += [part for pair in identities for part in pair]
        if public is not None:
            where.append("from_stranger = ?")
            args.append(int(public))
        row = await self.db.fetchone("SELECT COALESCE(SUM(COALESCE(stored_bytes, size) + COALESCE(text_bytes, 0)), 0)"
                                     " AS n FROM message_attachments WHERE " + " AND ".join(where), tuple(args))
        return int(row["n"]) if row is not None else 0

    async def prune(self, keep_days: float) -> int:
        """Remove derived text and attachment records older than ``keep_days`` (the files go with
        :meth:`board.media.blobs.BlobStore.prune`); how many rows went."""
        cutoff = (datetime.now(UTC) - timedelta(days=keep_days)).isoformat(timespec="milliseconds")
        before = await self.db.fetchone("SELECT (SELECT COUNT(*) FROM media_derived WHERE created_at < ?) + "
                                        "(SELECT COUNT(*) FROM message_attachments WHERE created_at < ?) AS n",
                                        (cutoff, cutoff))
        await self.db.execute("DELETE FROM media_derived WHERE created_at < ?", (cutoff,))
        await self.db.execute("DELETE FROM message_attachments WHERE created_at < ?", (cutoff,))
        self._text_total = None  # summed again at the next ask
        return int(before["n"]) if before is not None else 0

    async def documents_since(self, since: str) -> list[StoredAttachment]:
        """The documents read without a problem since ``since`` (ISO UTC), oldest first."""
        sql = ("SELECT channel, chat_id, thread_id, message_id, sender, kind, name, mime, size, blob, derived, "
               "problem, created_at FROM message_attachments WHERE kind = ? AND problem IS NULL AND blob IS NOT NULL "
               "AND created_at >= ? ORDER BY id")
        rows = await self.db.fetchall(sql, (MediaKind.DOCUMENT.value, since))
        return [_stored(r) for r in rows]

    async def recent(self, *, channel: str | None = None, chat_id: str | None = None,
                     limit: int = 50) -> list[StoredAttachment]:
        """The newest attachments first (of one chat when given)."""
        where: list[str] = []
        args: list[object] = []
        if channel is not None:
            where.append("channel = ?")
            args.append(channel)
        if chat_id is not None:
            where.append("chat_id = ?")
            args.append(chat_id)
        sql = ("SELECT channel, chat_id, thread_id, message_id, sender, kind, name, mime, size, blob, derived, "
               "problem, created_at FROM message_attachments"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?")
        rows = await self.db.fetchall(sql, (*args, limit))
        return [_stored(r) for r in rows]


def _stored(r: Row) -> StoredAttachment:
    thread = r["thread_id"]
    size = r["size"]
    return StoredAttachment(str(r["channel"]), str(r["chat_id"]), None if thread is None else int(thread),
                            r["message_id"], str(r["sender"]), MediaKind(r["kind"]), r["name"], r["mime"],
                            None if size is None else int(size), r["blob"], r["derived"], r["problem"],
                            str(r["created_at"]))


def _row_text(derived: str | None) -> str:
    """What an attachment's own row keeps of the text read from it."""
    return (derived or "")[:_DERIVED_KEEP_CHARS]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
