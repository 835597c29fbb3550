"""The web chat's durable outbox: what each conversation's page shows, in order, with a seq.

A conversation is the owner's chat with one advisor (the envelope's ``chat_id`` is the advisor's
role). Its rows (table ``web_chat_outbox``, migration 0910) are the owner's questions and the
board's replies; ``seq`` counts 1, 2, ... per conversation and is the SSE event id, so a page
that reconnects with ``Last-Event-ID: n`` reads every row after ``n`` and nothing before.

Appending is idempotent: each row has an ``entry_key`` (a question: ``q:<client id>``; a reply:
``r:<client id>:<digest of its text>``), and appending a key that is there already returns the
row that is there, adds nothing. That is what makes delivering a reply again after a crash
harmless (the channel's ``may_redo`` says yes): a reply is either in the outbox or not, never
twice. The seq is taken in the same statement that inserts the row (``MAX(seq) + 1``), and the
appends of one conversation are serialised in the process, so live followers see rows in seq order.
Replicas appending to one conversation at the same moment may pick the same seq: the one whose row
lands second breaks the (conversation, seq) key and takes the next seq (:data:`SEQ_TRIES`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from board.storage import Database, DuplicateKey

__all__ = ["KEEP", "EntryKind", "NewEntry", "Outbox", "OutboxEntry", "question_key", "reply_key"]

#: Rows older than this are pruned at start (the transcripts keep the conversation for good).
KEEP = timedelta(days=30)
#: At most this many rows are replayed to a page that connects (the newest ones).
REPLAY_ROWS = 500
#: How often an append takes a fresh seq when another replica's row took the one it picked.
SEQ_TRIES = 5


class EntryKind(StrEnum):
    """What an outbox row is."""

    QUESTION = "question"  # the owner's message
    ANSWER = "answer"
    COMMAND = "command"
    ERROR = "error"
    MEETING = "meeting"
    PROGRESS = "progress"
    NOTICE = "notice"  # a line from the channel itself (an interrupted answer, a meeting's news)


@dataclass(frozen=True)
class NewEntry:
    """A row to append."""

    key: str
    kind: EntryKind
    body: str
    role: str | None = None
    label: str | None = None
    reply_to: str | None = None
    buttons: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class OutboxEntry:
    """A stored row (what the page receives as one SSE ``entry`` event, id = ``seq``)."""

    conversation: str
    seq: int
    key: str
    kind: EntryKind
    body: str
    role: str | None
    label: str | None
    reply_to: str | None
    buttons: tuple[tuple[str, str], ...]
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """The row as the page reads it."""
        return {"seq": self.seq, "kind": self.kind.value, "text": self.body, "role": self.role,
                "label": self.label, "reply_to": self.reply_to,
                "buttons": [{"label": label, "command": command} for label, command in self.buttons],
                "at": self.created_at}


def question_key(client_id: str) -> str:
    """The key of the owner's message with client id ``client_id``."""
    return f"q:{client_id}"


def reply_key(reply_to: str | None, kind: str, text: str) -> str:
    """The key of a reply: the question it answers and a digest of what it says (a "working on
    it" line and the answer to one question are two rows; the same reply delivered twice, one)."""
    digest = hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:16]
    return f"r:{reply_to or '-'}:{digest}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_COLUMNS = "conversation, seq, entry_key, kind, role, label, body, reply_to, buttons, created_at"


def _entry(row: Any) -> OutboxEntry:
    buttons = tuple((str(b[0]), str(b[1])) for b in json.loads(row["buttons"] or "[]"))
    return OutboxEntry(conversation=str(row["conversation"]), seq=int(row["seq"]), key=str(row["entry_key"]),
                       kind=EntryKind(row["kind"]), body=str(row["body"]), role=row["role"], label=row["label"],
                       reply_to=row["reply_to"], buttons=buttons, created_at=str(row["created_at"]))


@dataclass
class Outbox:
    """The ``web_chat_outbox`` table; ``on_append`` hears each new row (after it is committed)."""

    db: Database
    on_append: Callable[[OutboxEntry], None] = lambda entry: None
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def append(self, conversation: str, entry: NewEntry) -> tuple[OutboxEntry, bool]:
        """Append ``entry`` to ``conversation``; the stored row and whether it is new (False: a row
        with its key was there already, and is returned as it is)."""
        lock = self._locks.setdefault(conversation, asyncio.Lock())
        async with lock:
            buttons = json.dumps([list(b) for b in entry.buttons]) if entry.buttons else None
            params = (conversation, entry.key, entry.kind.value, entry.role, entry.label, entry.body,
                      entry.reply_to, buttons, _now(), conversation)
            for attempt in range(SEQ_TRIES):
                try:
                    rows = await self.db.fetchall(
                        f"INSERT INTO web_chat_outbox ({_COLUMNS}) "
                        "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ? FROM web_chat_outbox "
                        "WHERE conversation = ? ON CONFLICT (conversation, entry_key) DO NOTHING "
                        f"RETURNING {_COLUMNS}", params)
                    break
                except DuplicateKey:  # another replica's row took this seq: take the next one
                    if attempt == SEQ_TRIES - 1:
                        raise
            if rows:
                stored = _entry(rows[0])
                self.on_append(stored)
                return stored, True
            existing = await self.get(conversation, entry.key)
            assert existing is not None, "an ignored insert names a row that is there"
            return existing, False

    async def get(self, conversation: str, key: str) -> OutboxEntry | None:
        """The row with ``key`` in ``conversation``, if there is one."""
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM web_chat_outbox WHERE conversation = ? "
                                     "AND entry_key = ?", (conversation, key))
        return _entry(row) if row is not None else None

    async def since(self, conversation: str, after: int, limit: int = REPLAY_ROWS) -> Sequence[OutboxEntry]:
        """Rows of ``conversation`` after seq ``after``, oldest first (the newest ``limit`` of them)."""
        rows = await self.db.fetchall(
            f"SELECT * FROM (SELECT {_COLUMNS} FROM web_chat_outbox WHERE conversation = ? AND seq > ? "
            "ORDER BY seq DESC LIMIT ?) AS newest ORDER BY seq", (conversation, after, limit))
        return [_entry(row) for row in rows]

    async def last_seq(self, conversation: str) -> int:
        """The newest seq of ``conversation`` (0 when it is empty)."""
        row = await self.db.fetchone("SELECT MAX(seq) AS seq FROM web_chat_outbox WHERE conversation = ?",
                                     (conversation,))
        return int(row["seq"] or 0) if row is not None else 0

    async def prune(self, keep: timedelta = KEEP) -> None:
        """Forget rows older than ``keep`` (never the newest row of a conversation: seqs go on from it)."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="milliseconds")
        await self.db.execute(
            "DELETE FROM web_chat_outbox WHERE created_at < ? AND seq < "
            "(SELECT MAX(seq) FROM web_chat_outbox AS newest WHERE newest.conversation = web_chat_outbox.conversation)",
            (cutoff,))
