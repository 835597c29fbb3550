"""Transcripts as rows of ``transcript_lines`` (PostgreSQL mode): every replica reads every conversation.

The rows hold exactly the lines a JSONL file would (:func:`board.conversation.transcripts.header_line` at seq 0,
:func:`board.conversation.transcripts.entry_line` for each event from seq 1), so ``sabha sessions export`` writes
the bytes SQLite mode's file holds. A :class:`RowTranscript` keeps the same in-memory tail as a file one;
:meth:`RowTranscript.append` stays synchronous (a turn's tool events arrive in a callback): it adds to the
tail and hands the lines to one writer task per transcript, which inserts them in order, in one transaction
per batch; :meth:`RowTranscript.sync` waits for it and raises the storage error when they could not be
written (they stay queued, and the next append or sync tries again).

Each batch takes its sequence numbers from the table (``MAX(seq) + 1`` inside the transaction); when two
writers meet (``sabha ask`` beside ``sabha run``, a lease handed over), the loser's unique key breaks and it
retries with fresh numbers, so no line is lost or overwritten. When the numbers show another writer was
there, the tail is re-read at the next :meth:`RowTranscripts.open`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from board.conversation.transcripts import (
    TAIL_ENTRIES,
    FileTranscripts,
    Header,
    SessionIdTaken,
    TranscriptError,
    TranscriptStore,
    entry_line,
    header_line,
    parse_header,
    utc_now,
)
from board.masking import mask_value
from board.storage import Database, Dialect, DuplicateKey, Row

__all__ = ["RowTranscript", "RowTranscripts", "transcripts_for"]

log = logging.getLogger("sabha.transcripts")

#: Most lines in one INSERT (4 parameters each: far below PostgreSQL's 32767).
_BATCH = 500
#: Tries at fresh sequence numbers when another writer took the same ones.
_TRIES = 8
#: Lines read per round trip by a whole-transcript read (export, show).
_PAGE = 2000


def _decoded(row: Row, session_id: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(row["line"])
    except (json.JSONDecodeError, TypeError):
        log.warning("transcript %s: skipping unreadable line %s", session_id, row["seq"])
        return None
    return entry if isinstance(entry, dict) else None


class RowTranscript:
    """One session's transcript in ``transcript_lines`` and its in-memory tail."""

    def __init__(self, store: RowTranscripts, header: Header, tail: list[dict[str, Any]], seq: int) -> None:
        self.header = header
        self._store = store
        self._tail: deque[dict[str, Any]] = deque(tail, maxlen=TAIL_ENTRIES)
        self._seq = seq  # the highest seq this tail reflects
        self._pending: list[str] = []  # lines appended, not yet in the table
        self._writer: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self.stale = False  # another writer appended: re-read the tail at the next open

    @property
    def session_id(self) -> str:
        """The session id these rows record."""
        return self.header.session_id

    @property
    def busy(self) -> bool:
        """Lines are waiting to be written."""
        return bool(self._pending) or (self._writer is not None and not self._writer.done())

    def recent(self, limit: int, *, types: tuple[str, ...] = ("message",)) -> list[dict[str, Any]]:
        """The last ``limit`` events of the given types, oldest first (from the tail)."""
        picked = [e for e in self._tail if e.get("type") in types]
        return picked[-limit:] if limit > 0 else []

    def newest(self, types: tuple[str, ...] = ("message",)) -> Iterator[dict[str, Any]]:
        """The tail's events of the given types, newest first, read lazily."""
        return (e for e in reversed(self._tail) if e.get("type") in types)

    def append(self, *entries: dict[str, Any]) -> None:
        """Add events (every known secret masked) to the tail and queue their rows; see :meth:`sync`."""
        masked = tuple(mask_value(entry) for entry in entries)
        self._pending.extend(entry_line(entry) for entry in masked)
        self._tail.extend(masked)
        self._start()

    def _start(self) -> None:
        if not self._pending or (self._writer is not None and not self._writer.done()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): sync() writes them
            return
        self._writer = loop.create_task(self._write(), name=f"transcript-{self.session_id}")

    async def _write(self) -> None:
        self._error = None
        try:
            while self._pending:
                batch = self._pending[:_BATCH]
                first = await self._store.insert(self.session_id, batch)
                if first != self._seq + 1:
                    self.stale = True
                self._seq = first + len(batch) - 1
                del self._pending[: len(batch)]
        except Exception as exc:  # noqa: BLE001 (kept for sync(), which raises it; the lines stay queued)
            self._error = exc
            log.warning("transcript %s: %d line(s) not written yet: %s", self.session_id, len(self._pending), exc)

    async def sync(self) -> None:
        """Write every queued line; raise the storage error when they could not be written."""
        if (self._writer is None or self._writer.done()) and self._pending:
            self._writer = asyncio.get_running_loop().create_task(self._write())
        if self._writer is not None:
            await asyncio.shield(self._writer)
        if self._pending and self._error is not None:
            raise self._error


class RowTranscripts:
    """Transcripts in the ``transcript_lines`` table; one :class:`RowTranscript` per session id."""

    def __init__(self, db: Database, *, max_open: int = 256) -> None:
        self.db = db
        self.max_open = max_open
        self._open: OrderedDict[str, RowTranscript] = OrderedDict()

    def _remember(self, transcript: RowTranscript) -> None:
        self._open[transcript.session_id] = transcript
        self._open.move_to_end(transcript.session_id)
        for session_id in list(self._open):  # the least recently used first; never one with lines to write
            if len(self._open) <= self.max_open:
                break
            if not self._open[session_id].busy:
                del self._open[session_id]

    def where(self, session_id: str) -> str:
        """The table the transcript is in."""
        return f"transcript_lines, session {session_id}"

    async def flush(self) -> None:
        """Write every open transcript's queued lines (the board is closing); what the storage refuses is
        logged, and lost (the intake answers the message again after a restart)."""
        for transcript in list(self._open.values()):
            if transcript.busy:
                try:
                    await transcript.sync()
                except Exception as exc:  # noqa: BLE001 (closing: say so and go on)
                    log.error("transcript %s: lines could not be written before closing: %s",
                              transcript.session_id, exc)

    async def insert(self, session_id: str, lines: list[str], *, first: int | None = None) -> int:
        """Add ``lines`` after the session's last one (at ``first`` when given: the header's 0) in one
        transaction; returns the seq of the first."""
        for attempt in range(_TRIES):
            try:
                return await self._insert_once(session_id, lines, first)
            except DuplicateKey:  # another writer took these numbers (rolled back): take the next ones
                if first is not None or attempt == _TRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def _insert_once(self, session_id: str, lines: list[str], first: int | None) -> int:
        async with self.db.transaction() as tx:
            start = first
            if start is None:
                row = await tx.fetchone("SELECT MAX(seq) AS n FROM transcript_lines WHERE session_id = ?",
                                        (session_id,))
                start = int(row["n"]) + 1 if row is not None and row["n"] is not None else 1
            now = utc_now()
            params: list[Any] = []
            for n, line in enumerate(lines):
                params += [session_id, start + n, line, now]
            values = ", ".join(["(?, ?, ?, ?)"] * len(lines))
            await tx.execute(f"INSERT INTO transcript_lines(session_id, seq, line, written_at) VALUES {values}",
                             params)
        return start

    async def create(self, session_id: str, key: str, role: str) -> RowTranscript:
        """Start a new transcript: its header row (seq 0), committed."""
        header = Header(session_id=session_id, key=key, role=role, created=utc_now())
        try:
            await self.insert(session_id, [header_line(header)], first=0)
        except DuplicateKey:
            raise SessionIdTaken(f"session {session_id} has a transcript already") from None
        transcript = RowTranscript(self, header, [], 0)
        self._remember(transcript)
        return transcript

    async def open(self, session_id: str) -> RowTranscript:
        """The transcript of an existing session, its tail re-read when another writer added to it;
        :class:`TranscriptError` when the session has no header row."""
        transcript = self._open.get(session_id)
        if transcript is not None:
            self._open.move_to_end(session_id)
            if transcript.busy or (not transcript.stale and await self._last_seq(session_id) == transcript._seq):
                return transcript
            del self._open[session_id]  # another process wrote to it: read it again
        row = await self.db.fetchone("SELECT seq, line FROM transcript_lines WHERE session_id = ? AND seq = 0",
                                     (session_id,))
        if row is None:
            raise TranscriptError(f"no transcript rows for session {session_id}")
        header = parse_header(_decoded(row, session_id), f"the transcript of {session_id}", session_id)
        rows = await self.db.fetchall(
            "SELECT seq, line FROM transcript_lines WHERE session_id = ? AND seq > 0 ORDER BY seq DESC LIMIT ?",
            (session_id, TAIL_ENTRIES))
        tail = [e for e in (_decoded(r, session_id) for r in reversed(rows)) if e is not None]
        transcript = RowTranscript(self, header, tail, int(rows[0]["seq"]) if rows else 0)
        self._remember(transcript)
        return transcript

    async def _last_seq(self, session_id: str) -> int:
        row = await self.db.fetchone("SELECT MAX(seq) AS n FROM transcript_lines WHERE session_id = ?",
                                     (session_id,))
        return int(row["n"]) if row is not None and row["n"] is not None else -1

    async def _pages(self, session_id: str, *, after: int) -> AsyncIterator[list[Row]]:
        while True:
            rows = await self.db.fetchall(
                "SELECT seq, line FROM transcript_lines WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (session_id, after, _PAGE))
            if not rows:
                return
            yield rows
            after = int(rows[-1]["seq"])

    async def entries(self, session_id: str) -> list[dict[str, Any]]:
        """Every event of the session (header excluded), oldest first."""
        found: list[dict[str, Any]] = []
        async for rows in self._pages(session_id, after=0):
            found += [e for e in (_decoded(r, session_id) for r in rows) if e is not None]
        return found

    async def tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` events (header excluded)."""
        rows = await self.db.fetchall(
            "SELECT seq, line FROM transcript_lines WHERE session_id = ? AND seq > 0 ORDER BY seq DESC LIMIT ?",
            (session_id, limit))
        return [e for e in (_decoded(r, session_id) for r in reversed(rows)) if e is not None]

    async def last_active(self, session_id: str) -> datetime | None:
        """When the session's last line was written."""
        row = await self.db.fetchone(
            "SELECT written_at FROM transcript_lines WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (session_id,))
        return datetime.fromisoformat(str(row["written_at"])) if row is not None else None

    async def lines(self, session_id: str) -> AsyncIterator[bytes]:
        """The transcript as JSONL bytes: each row's line and a newline, header first."""
        empty = True
        async for rows in self._pages(session_id, after=-1):
            empty = False
            yield b"".join(str(r["line"]).encode("utf-8") + b"\n" for r in rows)
        if empty:
            raise TranscriptError(f"no transcript rows for session {session_id}")

    async def load_file(self, path: Path) -> int:
        """Copy a JSONL transcript file (SQLite mode's) into rows, each line's text as it is
        (``sabha state copy``); unreadable lines are skipped. Returns how many lines were copied."""
        texts = await asyncio.to_thread(_readable_lines, path)
        header = parse_header(json.loads(texts[0]) if texts else None, str(path), path.stem)
        for at in range(0, len(texts), _BATCH):
            await self.insert(header.session_id, texts[at: at + _BATCH], first=at)
        return len(texts)


def _readable_lines(path: Path) -> list[str]:
    """The lines of a JSONL file that hold a JSON object, as text (no newline), header first."""
    kept: list[str] = []
    with open(path, "rb") as fh:
        for raw in fh:
            text = raw.rstrip(b"\n").decode("utf-8", errors="replace")
            try:
                ok = isinstance(json.loads(text), dict) if text.strip() else False
            except json.JSONDecodeError:
                ok = False
            if ok:
                kept.append(text)
    return kept


def transcripts_for(db: Database, data_dir: Path) -> TranscriptStore:
    """The transcript store for the state backend: JSONL files in ``data_dir`` beside a SQLite state db
    (one process), rows of ``transcript_lines`` on PostgreSQL (every replica sees every conversation)."""
    return RowTranscripts(db) if db.dialect is Dialect.POSTGRES else FileTranscripts(data_dir)
