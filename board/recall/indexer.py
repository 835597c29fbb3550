"""The background indexer: what was said and read, copied into ``recall_passages`` as it appears.

One pass (:meth:`RecallIndexer.run_once`) reads what is new since the last: meeting statements after the
last id, each session whose last entry changed since it was last read (from the entry it stopped at),
and documents' extracted text after the last attachment id. A session whose transcript was last written
before the pass began (by more than :data:`SETTLED_S`) and has not been written since this indexer read it
costs a pass only its ``last_active`` (a stat, or a row): no statement, no read of the transcript (a board's
thousands of sessions were read every 2 s before). The margin keeps a write in the same tick of the file
system's clock as the last read from being taken for no change. How far it got is kept in ``recall_progress``
in the same transaction as the passages it wrote, so a kill loses nothing and repeats nothing (a passage's
``ref`` is unique besides). :meth:`RecallIndexer.watch` runs passes until the board stops: indexing is never
on an answer's path, so a passage said a moment ago may not be found for a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from board.conversation.sessions import Sessions
from board.conversation.transcripts import TranscriptStore
from board.recall.audience import conversation_audience, identity_audience
from board.recall.passages import BOARD, SourceKind
from board.storage import Database, Statement, Work

__all__ = ["BATCH", "INTERVAL_S", "SETTLED_S", "RecallIndexer", "forget_accounts"]

log = logging.getLogger("sabha.recall")

#: The most statements or documents one pass reads (a big history is indexed over several passes).
BATCH = 2000
#: Seconds between passes while nothing is left to index.
INTERVAL_S = 2.0
#: A passage's text is cut here (a long answer is still found by its first part).
PASSAGE_CHARS = 4000
#: Seconds before a pass began that a transcript must have been last written for its time to be trusted as
#: "unchanged" by later passes (file times move in ticks; two writes in one tick share a time).
SETTLED_S = 2.0

_INSERT = ("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
           "VALUES {rows} ON CONFLICT (ref) DO NOTHING")
_ONE_ROW = "(?, ?, ?, ?, ?, ?, ?)"
_ADVANCE = ("INSERT INTO recall_progress (source, position, mark) VALUES (?, ?, ?) ON CONFLICT (source) "
            "DO UPDATE SET position = excluded.position, mark = excluded.mark")
#: Passages per INSERT: 7 parameters each, under SQLite's oldest limit of 999 per statement
_ROWS_PER_INSERT = 100


def _stored(passages: list[tuple[Any, ...]], advance: Statement) -> Work[None]:
    """``passages`` in a few multi-row statements, not one each (PostgreSQL: a round trip per statement while the
    transaction is open), then ``advance``."""
    for start in range(0, len(passages), _ROWS_PER_INSERT):
        chunk = passages[start:start + _ROWS_PER_INSERT]
        yield (_INSERT.format(rows=", ".join([_ONE_ROW] * len(chunk))),
               tuple(value for passage in chunk for value in passage))
    yield advance


class RecallIndexer:
    """See the module docstring."""

    def __init__(self, db: Database, sessions: Sessions, transcripts: TranscriptStore, *,
                 interval_s: float = INTERVAL_S) -> None:
        self.db = db
        self.sessions = sessions
        self.transcripts = transcripts
        self.interval_s = interval_s
        #: Whether there is anything to recall yet (the ``recall`` tool is offered only then); set by each pass.
        self.holds = False
        #: session id -> the ``last_active`` of its transcript when it was last read whole and settled
        self._settled: dict[str, datetime] = {}

    async def run_once(self) -> int:
        """One pass over every source; how many passages it added."""
        added = await self._statements() + await self._documents()
        settled_before = datetime.now(UTC) - timedelta(seconds=SETTLED_S)
        for ref in await self.sessions.list(include_archived=True):
            active = await self.transcripts.last_active(ref.session_id)
            if active is None or self._settled.get(ref.session_id) == active:
                continue  # no transcript, or not written since it was read
            added += await self._session(ref.session_id, ref.key, ref.role, active)
            if active < settled_before:
                self._settled[ref.session_id] = active
        if added:
            log.info("recall: indexed %d passages", added)
        if not self.holds:
            self.holds = added > 0 or await self.db.fetchone("SELECT 1 AS x FROM recall_passages LIMIT 1") is not None
        return added

    async def watch(self, stop: asyncio.Event) -> None:
        """Index until ``stop``: a pass, then a pause (none while a pass filled a whole batch)."""
        while not stop.is_set():
            try:
                added = await self.run_once()
            except Exception:  # the index is a nicety beside the answers: log, and try again later
                log.exception("recall: an indexing pass failed")
                added = 0
            if added < BATCH:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.interval_s)

    async def _position(self, source: str) -> tuple[int, str]:
        row = await self.db.fetchone("SELECT position, mark FROM recall_progress WHERE source = ?", (source,))
        return (int(row["position"]), str(row["mark"])) if row else (0, "")

    async def _store(self, passages: list[tuple[Any, ...]], source: str, position: int, mark: str = "") -> None:
        """``passages`` and the source's new position, in one unit of work (:meth:`board.storage.Database.unit`). On
        SQLite the whole of it is one step on the express connection's thread: a transaction of several awaited
        statements holds SQLite's write lock, and the express connection every webhook's claim needs, across as
        many turns of a busy event loop (measured up to 208 ms under load), and the turns' own writes sleep in
        SQLite's busy handler meanwhile."""
        await self.db.unit(_stored(passages, (_ADVANCE, (source, position, mark))))

    async def _statements(self) -> int:
        last, _ = await self._position("statements")
        rows = await self.db.fetchall(
            "SELECT id, meeting_id, round, role, text, created_at FROM meeting_statements WHERE id > ? ORDER BY id "
            "LIMIT ?", (last, BATCH))
        if not rows:
            return 0
        passages = [(SourceKind.MEETING.value, f"stmt:{r['id']}", BOARD, r["role"],
                     f"[meeting {r['meeting_id']}, round {r['round']}]", r["created_at"],
                     str(r["text"])[:PASSAGE_CHARS]) for r in rows]
        await self._store(passages, "statements", int(rows[-1]["id"]))
        return len(rows)

    async def _documents(self) -> int:
        """Documents' extracted text: seen only by the person who sent it (a group's members did not all read
        it, and the attachment row does not say it was a group)."""
        last, _ = await self._position("documents")
        rows = await self.db.fetchall(
            "SELECT id, channel, sender, name, kind, derived, created_at FROM message_attachments WHERE id > ? "
            "ORDER BY id LIMIT ?", (last, BATCH))
        if not rows:
            return 0
        passages = [(SourceKind.DOCUMENT.value, f"doc:{r['id']}", identity_audience(r["channel"], r["sender"]), "user",
                     f"[{r['name'] or r['kind']}]", r["created_at"], str(r["derived"])[:PASSAGE_CHARS])
                    for r in rows if r["derived"]]
        await self._store(passages, "documents", int(rows[-1]["id"]))
        return len(passages)

    async def _session(self, session_id: str, key: str, role: str, active: datetime) -> int:
        source = f"session:{session_id}"
        done, mark = await self._position(source)
        tail = await self.transcripts.tail(session_id, 1)  # read from the end: cheap however long the session
        if not tail:
            return 0
        seen = hashlib.sha256(json.dumps(tail[-1], sort_keys=True, default=str).encode()).hexdigest()[:32]
        if seen == mark:
            return 0
        entries = await self.transcripts.entries(session_id)
        first = next((e for e in entries if e.get("type") == "message" and e.get("role") == "user"), None)
        audience = conversation_audience(key, _text(first, "channel"), _text(first, "sender"))
        if audience is None:
            return 0  # whose it is shows with its first user message
        passages: list[tuple[Any, ...]] = []
        for seq, entry in enumerate(entries[done:], start=done):
            text = entry.get("text")
            if entry.get("type") != "message" or entry.get("role") not in ("user", "assistant") \
                    or not isinstance(text, str) or not text.strip():
                continue
            said_at = str(entry.get("ts") or active.isoformat())
            speaker = role if entry.get("role") == "assistant" else "user"
            passages.append((SourceKind.CONVERSATION.value, f"{session_id}#{seq}", audience, speaker,
                             f"[{role}, {said_at[:10]}]", said_at, text[:PASSAGE_CHARS]))
        await self._store(passages, source, len(entries), seen)
        return len(passages)


def _text(entry: dict[str, Any] | None, field: str) -> str | None:
    value = None if entry is None else entry.get(field)
    return value if isinstance(value, str) and value else None


async def forget_accounts(db: Database, keys: tuple[str, ...]) -> int:
    """A person said "forget everything": drop the passages of their own direct chats (every account of theirs
    among ``keys``: ``<channel>:<sender>``; a ``person:<n>`` key names no account). The transcripts stay, as
    ever; what they say from here on is indexed again. How many passages went."""
    audiences = [identity_audience(*key.split(":", 1)) for key in keys if ":" in key and not key.startswith("person:")]
    if not audiences:
        return 0
    gone = await db.fetchall(
        f"DELETE FROM recall_passages WHERE audience IN ({','.join('?' * len(audiences))}) RETURNING id",
        tuple(audiences))
    if gone:
        log.info("recall: forgot %d passage(s) of %d account(s) that asked to be forgotten", len(gone), len(audiences))
    return len(gone)
