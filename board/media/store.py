"""The media rows in the state db: derived text by blob, and each message's attachments.

Text parameters are masked here (:func:`board.masking.mask_value`): a document or a transcript may spell
out a configured secret, and not every backend's statement masks on its own."""

from __future__ import annotations

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
                 (a.derived or "")[:_DERIVED_KEEP_CHARS] or None, a.problem, now, int(public), a.stored)
                for i, a in enumerate(attachments)]
        if not rows:
            return
        async with self.db.transaction() as tx:  # all of a message's attachments, or none
            for row in rows:
                await tx.execute(
                    "INSERT INTO message_attachments (channel, chat_id, thread_id, message_id, sender, ord, kind, "
                    "name, mime, size, blob, derived, problem, created_at, from_stranger, stored_bytes) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (channel, chat_id, message_id, ord) DO UPDATE SET sender = excluded.sender, "
                    "kind = excluded.kind, name = excluded.name, mime = excluded.mime, size = excluded.size, "
                    "blob = excluded.blob, derived = excluded.derived, problem = excluded.problem, "
                    "created_at = excluded.created_at, from_stranger = excluded.from_stranger, "
                    "stored_bytes = excluded.stored_bytes", mask_value(row))

    async def references(self, blob: str) -> bool:
        """True when a kept attachment (read without a problem) names ``blob``."""
        row = await self.db.fetchone("SELECT 1 AS n FROM message_attachments WHERE blob = ? AND problem IS NULL "
                                     "LIMIT 1", (blob,))
        return row is not None

    async def kept_bytes(self, since: str, *, channel: str | None = None, sender: str | None = None,
                         public: bool | None = None) -> int:
        """The bytes kept in the store (the file and its copies: ``stored_bytes``, else ``size``) for the files
        recorded since ``since`` (ISO UTC) and kept (read without a problem): of one sender (``channel`` and
        ``sender``), of strangers (``public``), or of everyone."""
        where = ["created_at >= ?", "problem IS NULL", "blob IS NOT NULL"]
        args: list[object] = [since]
        if channel is not None and sender is not None:
            where += ["channel = ?", "sender = ?"]
            args += [channel, sender]
        if public is not None:
            where.append("from_stranger = ?")
            args.append(int(public))
        row = await self.db.fetchone("SELECT COALESCE(SUM(COALESCE(stored_bytes, size)), 0) AS n "
                                     "FROM message_attachments WHERE " + " AND ".join(where), tuple(args))
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
