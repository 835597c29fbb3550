"""Transcripts: the :class:`Transcript` / :class:`TranscriptStore` interface and its JSONL-file form.

Two stores implement the interface, chosen by the state backend
(:func:`board.conversation.transcript_rows.transcripts_for`, in ``Board.__init__``): this module's
:class:`FileTranscripts` (SQLite mode: one append-only JSONL file per session id under the data folder)
and :class:`board.conversation.transcript_rows.RowTranscripts` (PostgreSQL: one row per line, so every replica
reads every conversation). Both hold the same lines: ``sabha sessions export`` writes the same bytes from
either. What follows describes the file form.

The first line is a header (``type: session``, id, key, role, created); every later
line is one event (``message``, ``tool_call``, ``tool_result``, ``consult``,
``compaction``). Writes go through one lock per session, are flushed at once and
fsynced at the end of every turn. A torn last line (a crash mid-write) is skipped with
a warning when read and never glued to the next write. Recent history comes from an
in-memory tail that is filled by reading the file backwards, so a turn costs the same
whether the transcript has ten lines or a hundred thousand; the tail is re-read when the
file's size shows that another process (``sabha ask`` beside ``sabha run``) appended to it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from board.masking import mask_value

__all__ = [
    "TAIL_ENTRIES",
    "FileTranscript",
    "FileTranscripts",
    "Header",
    "SessionIdTaken",
    "Transcript",
    "TranscriptError",
    "TranscriptStore",
    "entry_line",
    "header_line",
    "iter_entries",
    "parse_header",
    "read_tail",
    "utc_now",
]

log = logging.getLogger("sabha.transcripts")

TAIL_ENTRIES = 400
_BLOCK = 64 * 1024


def utc_now() -> str:
    """The current time as an ISO-8601 UTC string with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class TranscriptError(ValueError):
    """A transcript cannot be used (missing, or its header is unreadable)."""


class SessionIdTaken(TranscriptError):
    """A new transcript was asked for under a session id that has one already (draw another id)."""


@dataclass(frozen=True)
class Header:
    """The first line of a transcript."""

    session_id: str
    key: str
    role: str
    created: str


def header_line(header: Header) -> str:
    """The header as its JSONL line (no newline): the bytes every transcript starts with."""
    line = {"type": "session", "version": 1, "id": header.session_id, "key": header.key, "role": header.role,
            "created": header.created}
    return json.dumps(line, ensure_ascii=False)


def entry_line(entry: dict[str, Any]) -> str:
    """An event as its JSONL line (no newline), compact, as both stores write it."""
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def parse_header(entry: dict[str, Any] | None, where: str, fallback_id: str) -> Header:
    """The :class:`Header` a parsed first line holds; :class:`TranscriptError` when it is not one."""
    if not entry or entry.get("type") != "session":
        raise TranscriptError(f"{where} does not start with a session header line")
    return Header(session_id=str(entry.get("id", fallback_id)), key=str(entry.get("key", "")),
                  role=str(entry.get("role", "")), created=str(entry.get("created", "")))


class Transcript(Protocol):
    """One session's transcript as a turn uses it: the recent tail (in memory), appends, and
    :meth:`sync`, after which everything appended is durable."""

    header: Header

    @property
    def session_id(self) -> str: ...

    def recent(self, limit: int, *, types: tuple[str, ...] = ("message",)) -> list[dict[str, Any]]:
        """The last ``limit`` events of the given types, oldest first."""
        ...

    def newest(self, types: tuple[str, ...] = ("message",)) -> Iterator[dict[str, Any]]:
        """The tail's events of the given types, newest first, read lazily: a caller that stops early
        (a turn's history stops at the last compaction) does not walk the whole tail."""
        ...

    def append(self, *entries: dict[str, Any]) -> None:
        """Add events (secrets masked); they are durable after :meth:`sync`."""
        ...

    async def sync(self) -> None:
        """Return once every appended event is durable; raise when it cannot be made so."""
        ...


class TranscriptStore(Protocol):
    """Where transcripts live (files or rows); hands out one :class:`Transcript` per session id."""

    async def create(self, session_id: str, key: str, role: str) -> Transcript:
        """Start a new transcript with its header line (durable on return)."""
        ...

    async def open(self, session_id: str) -> Transcript:
        """The transcript of an existing session, its tail current; :class:`TranscriptError` if absent."""
        ...

    async def entries(self, session_id: str) -> list[dict[str, Any]]:
        """Every readable event of a session, oldest first (header excluded; [] when there is none)."""
        ...

    async def tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` events of a session (header excluded; [] when there is none)."""
        ...

    async def last_active(self, session_id: str) -> datetime | None:
        """When the session's transcript was last written, or None when it has none."""
        ...

    def lines(self, session_id: str) -> AsyncIterator[bytes]:
        """The transcript as JSONL bytes, header first, in pieces (``sabha sessions export``);
        :class:`TranscriptError` when there is none."""
        ...

    def where(self, session_id: str) -> str:
        """Where the transcript is kept, for a person (a file path, or the table)."""
        ...

    async def flush(self) -> None:
        """Write what is still queued (the board is closing); log what cannot be written."""
        ...


def _parse_line(raw: bytes, path: Path, where: str) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        entry = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        log.warning("transcript %s: skipping unreadable %s (%d bytes)", path, where, len(raw))
        return None
    if not isinstance(entry, dict):
        log.warning("transcript %s: skipping non-object %s", path, where)
        return None
    return entry


def read_tail(path: Path, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` events of a transcript (header excluded), read from the end.

    Cost grows with ``limit``, not with the file's size.
    """
    entries: list[dict[str, Any]] = []
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        pos = end
        carry = b""
        first = True
        while pos > 0 and len(entries) < limit:
            step = min(_BLOCK, pos)
            pos -= step
            fh.seek(pos)
            chunk = fh.read(step) + carry
            lines = chunk.split(b"\n")
            carry = lines.pop(0) if pos > 0 else b""
            for idx in range(len(lines) - 1, -1, -1):
                raw = lines[idx]
                is_last = first and idx == len(lines) - 1
                where = "torn last line" if is_last and raw.strip() and not chunk.endswith(b"\n") else "line"
                entry = _parse_line(raw, path, where)
                if entry is None or entry.get("type") == "session":
                    continue
                entries.append(entry)
                if len(entries) >= limit:
                    break
            first = False
    entries.reverse()
    return entries


def iter_entries(path: Path) -> Iterator[dict[str, Any]]:
    """Every readable line of a transcript, header first; unreadable lines are skipped."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            entry = _parse_line(raw.rstrip(b"\n"), path, f"line {number}")
            if entry is not None:
                yield entry


class FileTranscript:
    """One session's transcript file and its in-memory tail."""

    def __init__(self, path: Path, header: Header) -> None:
        self.path = path
        self.header = header
        self._tail: deque[dict[str, Any]] | None = None
        self._needs_newline: bool | None = None
        self._size: int | None = None  # the file size the tail reflects

    @property
    def session_id(self) -> str:
        """The session id this file records."""
        return self.header.session_id

    def _load_tail(self) -> deque[dict[str, Any]]:
        # One stat per call: if the size is not what our own writes left, another process
        # (`sabha ask` next to `sabha run`) appended to this session, so re-read the tail.
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:  # deleted under us: the next append starts it again
            size = 0
        if self._tail is None or size != self._size:
            self._tail = deque(read_tail(self.path, TAIL_ENTRIES) if size else (), maxlen=TAIL_ENTRIES)
            self._size = size
            self._needs_newline = None
        return self._tail

    def recent(self, limit: int, *, types: tuple[str, ...] = ("message",)) -> list[dict[str, Any]]:
        """The last ``limit`` events of the given types, oldest first (from the tail cache)."""
        picked = [e for e in self._load_tail() if e.get("type") in types]
        return picked[-limit:] if limit > 0 else []

    def newest(self, types: tuple[str, ...] = ("message",)) -> Iterator[dict[str, Any]]:
        """The tail's events of the given types, newest first (see :class:`Transcript`)."""
        return (e for e in reversed(self._load_tail()) if e.get("type") in types)

    def append(self, *entries: dict[str, Any]) -> None:
        """Write events and flush them to the OS, every known secret in them masked (an error
        text echoing an API key). Callers serialise per session (the board's per-key lock); see
        :meth:`sync`."""
        # Fill the tail from disk *before* writing, or the new entries would be read back
        # from the file and then added again (duplicated history after every restart).
        tail = self._load_tail()
        if self._needs_newline is None:
            self._needs_newline = self._size is not None and self._size > 0 and _ends_without_newline(self.path)
            if self._needs_newline:
                log.warning("transcript %s: last line was torn; it stays in the file and is skipped", self.path)
        entries = tuple(mask_value(entry) for entry in entries)  # secrets never reach the file (board.masking)
        payload = b"".join(entry_line(entry).encode("utf-8") + b"\n" for entry in entries)
        if self._needs_newline:
            payload = b"\n" + payload
            self._needs_newline = False
        with open(self.path, "ab") as fh:
            fh.write(payload)
            fh.flush()
        tail.extend(entries)
        self._size = (self._size or 0) + len(payload)

    async def sync(self) -> None:
        """fsync the file so the turn survives power loss."""

        def _fsync() -> None:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

        await asyncio.to_thread(_fsync)


def _ends_without_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (never over an existing file) holding ``data``, fsynced."""
    with open(path, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while chunk := fh.read(_BLOCK):
            yield chunk


class FileTranscripts:
    """The folder of JSONL transcripts (SQLite mode); hands out one :class:`FileTranscript` per session id."""

    def __init__(self, folder: Path, *, max_open: int = 256) -> None:
        self.folder = folder
        self.max_open = max_open
        self._open: OrderedDict[str, FileTranscript] = OrderedDict()

    def _remember(self, session_id: str, transcript: FileTranscript) -> None:
        # Keep the most recently used transcripts (and their tails) in memory; a daemon
        # serving many users must not grow without bound. An evicted transcript is simply
        # re-opened (one backwards read of its tail) when its session speaks again.
        self._open[session_id] = transcript
        self._open.move_to_end(session_id)
        while len(self._open) > self.max_open:
            self._open.popitem(last=False)

    def path_for(self, session_id: str) -> Path:
        """Where the transcript of ``session_id`` lives."""
        return self.folder / f"{session_id}.jsonl"

    def where(self, session_id: str) -> str:
        """The transcript's file."""
        return str(self.path_for(session_id))

    async def flush(self) -> None:
        """Nothing waits: every append went to its file at once."""

    async def create(self, session_id: str, key: str, role: str) -> FileTranscript:
        """Start a new transcript file with its header line (fsynced)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        header = Header(session_id=session_id, key=key, role=role, created=utc_now())
        path = self.path_for(session_id)
        try:
            _write_new(path, header_line(header).encode("utf-8") + b"\n")
        except FileExistsError:
            raise SessionIdTaken(f"session {session_id} has a transcript already") from None
        transcript = FileTranscript(path, header)
        transcript._tail = deque(maxlen=TAIL_ENTRIES)
        transcript._size = path.stat().st_size
        self._remember(session_id, transcript)
        return transcript

    async def open(self, session_id: str) -> FileTranscript:
        """The transcript of an existing session; raises :class:`TranscriptError` if absent. (Its tail
        re-reads itself when another process wrote to the file.)"""
        transcript = self._open.get(session_id)
        if transcript is not None:
            self._open.move_to_end(session_id)
            return transcript
        path = self.path_for(session_id)
        if not path.exists():
            raise TranscriptError(f"no transcript file {path} for session {session_id}")
        transcript = FileTranscript(path, self._read_header(path))
        self._remember(session_id, transcript)
        return transcript

    async def entries(self, session_id: str) -> list[dict[str, Any]]:
        """Every readable event of the file (header excluded)."""
        path = self.path_for(session_id)
        if not path.exists():
            return []
        return await asyncio.to_thread(lambda: [e for e in iter_entries(path) if e.get("type") != "session"])

    async def tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` events, read from the end of the file (in a thread: the loop goes on meanwhile)."""
        path = self.path_for(session_id)
        return await asyncio.to_thread(read_tail, path, limit) if path.exists() else []

    async def last_active(self, session_id: str) -> datetime | None:
        """The file's modification time."""
        try:
            return datetime.fromtimestamp(self.path_for(session_id).stat().st_mtime, UTC)
        except OSError:
            return None

    async def lines(self, session_id: str) -> AsyncIterator[bytes]:
        """The file's bytes, as they are."""
        path = self.path_for(session_id)
        if not path.exists():
            raise TranscriptError(f"no transcript file {path} for session {session_id}")
        for chunk in _chunks(path):
            yield chunk

    @staticmethod
    def _read_header(path: Path) -> Header:
        with open(path, "rb") as fh:
            first = fh.readline()
        entry = _parse_line(first.rstrip(b"\n"), path, "header")
        return parse_header(entry, str(path), path.stem)

