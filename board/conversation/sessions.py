"""Session keys and the key -> current session id index.

Keys (DESIGN.md): ``main`` (the owner with the general agent), ``board:<role>`` (the
owner with a role), ``board:<role>:g-<chat_id>`` (a group or forum topic),
``board:<role>:wa-<user>`` (a WhatsApp user), ``board:<role>:wa-g-<group_id>`` (a WhatsApp
group: under ``wa-`` like every WhatsApp conversation, so the channel's public spend counts
it), ``board:<role>:tg-<user_id>`` (another allowed Telegram user's DM). Each key points
at one current session id; ``reset`` starts a new id and archives the old transcript (the
file is kept).
"""

from __future__ import annotations

import builtins
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from board.conversation.transcripts import (
    SessionIdTaken,
    Transcript,
    TranscriptError,
    TranscriptStore,
    utc_now,
)
from board.roles import GENERAL
from board.storage import Database, DuplicateKey, Row
from board.storage.sql import RowJoin

__all__ = ["SessionRef", "Sessions", "Unread", "new_session_id", "role_of_key", "session_key"]

log = logging.getLogger("sabha.sessions")

_SAFE = re.compile(r"[^A-Za-z0-9_.@+-]")


def _safe(part: str) -> str:
    return _SAFE.sub("_", part)[:64]


def session_key(
    role: str,
    *,
    is_owner: bool,
    channel: str = "console",
    chat_id: str | None = None,
    user_id: str | None = None,
    is_group: bool = False,
) -> str:
    """The session key for a message to ``role``; see the module docstring."""
    if is_group and chat_id is not None:
        where = "wa-g" if channel == "whatsapp" else "g"
        return f"board:{role}:{where}-{_safe(str(chat_id))}"
    if channel == "whatsapp" and user_id is not None:
        return f"board:{role}:wa-{_safe(str(user_id))}"
    if is_owner:
        return "main" if role == GENERAL else f"board:{role}"
    if user_id is None:
        raise ValueError("a non-owner direct message needs a user id for its session key")
    prefix = "tg" if channel == "telegram" else _safe(channel)[:8]
    return f"board:{role}:{prefix}-{_safe(str(user_id))}"


def role_of_key(key: str) -> str:
    """The role a session key belongs to."""
    if key == "main":
        return GENERAL
    parts = key.split(":")
    if len(parts) >= 2 and parts[0] == "board":
        return parts[1]
    raise ValueError(f"{key!r} is not a session key (expected main or board:<role>[:...])")


def new_session_id(role: str) -> str:
    """A fresh, sortable, unique session id such as ``20261122T020430-finance-3fa9c1``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{_safe(role)}-{secrets.token_hex(3)}"


_DRAWS = 8  # new session ids tried before a collision is an error (each collides about once in 16 million)


@dataclass(frozen=True)
class SessionRef:
    """A row of the index: which session id a key points at."""

    key: str
    session_id: str
    role: str
    created_at: str
    archived_at: str | None


class Unread(Enum):
    """:meth:`Sessions.open` reads the live session itself (the caller did not read it in a statement of its own)."""

    UNREAD = "unread"


class Sessions:
    """The session index (state db) plus the transcripts it points at (files or rows)."""

    def __init__(self, db: Database, transcripts: TranscriptStore) -> None:
        self.db = db
        self.transcripts = transcripts

    async def current(self, key: str) -> SessionRef | None:
        """The live session of ``key``, or None if it has none yet."""
        row = await self.db.fetchone(
            "SELECT * FROM sessions WHERE key = ? AND archived_at IS NULL", (key,)
        )
        return _ref(row) if row else None

    @staticmethod
    def live_join(key: str) -> RowJoin:
        """The live session of ``key`` as a join another store's read carries (the turn's reads in one statement);
        :meth:`live_of` reads it back from that read's first row, and :meth:`open` takes it as ``live``."""
        return RowJoin(columns="live.session_id AS live_session_id, live.key AS live_key, live.role AS live_role, "
                               "live.created_at AS live_created_at",
                       join="LEFT JOIN sessions live ON live.key = ? AND live.archived_at IS NULL", params=(key,))

    @staticmethod
    def live_of(row: Row | None) -> SessionRef | None:
        """The live session a :meth:`live_join` read, from the carrying read's first row (None: it has none)."""
        if row is None or row["live_session_id"] is None:
            return None
        return SessionRef(key=row["live_key"], session_id=row["live_session_id"], role=row["live_role"],
                          created_at=row["live_created_at"], archived_at=None)

    async def open(self, key: str, role: str | None = None, *,
                   live: SessionRef | Unread | None = Unread.UNREAD) -> Transcript:
        """The live transcript of ``key``, creating the session on first use. ``live`` is the live session as read
        just now in another statement (:meth:`live_join`; None: there is none), so it is not read again."""
        ref = await self.current(key) if live is Unread.UNREAD else live
        if ref is not None:
            try:
                return await self.transcripts.open(ref.session_id)
            except TranscriptError as exc:
                # The file (or its rows) was deleted or its header is unreadable: archive the session and
                # start a new one rather than failing every later message to this key.
                log.warning("session %s: %s; starting a new session", key, exc)
                await self.db.execute(
                    "UPDATE sessions SET archived_at = ? WHERE session_id = ?", (utc_now(), ref.session_id)
                )
                role = role or ref.role
        role = role or role_of_key(key)
        transcript = await self._create(key, role)
        try:
            await self.db.execute(
                "INSERT INTO sessions(session_id, key, role, created_at) VALUES (?, ?, ?, ?)",
                (transcript.header.session_id, key, role, transcript.header.created),
            )
        except DuplicateKey:  # another process (a replica, `sabha ask`) started one for this key just now
            ref = await self.current(key)
            if ref is None:
                raise
            log.info("session %s: another process started %s at the same moment; continuing it", key, ref.session_id)
            return await self.transcripts.open(ref.session_id)
        return transcript

    async def _create(self, key: str, role: str) -> Transcript:
        """A new transcript for ``key`` under a fresh session id; an id drawn twice (its random part is short,
        and many sessions of one role may start in the same second) is drawn again."""
        for _ in range(_DRAWS - 1):
            try:
                return await self.transcripts.create(new_session_id(role), key, role)
            except SessionIdTaken as exc:
                log.info("session %s: %s; drawing another id", key, exc)
        return await self.transcripts.create(new_session_id(role), key, role)

    async def reset(self, key: str) -> tuple[SessionRef | None, Transcript]:
        """Archive the live session of ``key`` (its file stays) and start a new one."""
        old = await self.current(key)
        if old is not None:
            await self.db.execute(
                "UPDATE sessions SET archived_at = ? WHERE session_id = ?", (utc_now(), old.session_id)
            )
        transcript = await self.open(key, old.role if old else None)
        return old, transcript

    async def merge(self, old_key: str, new_key: str) -> builtins.list[SessionRef]:
        """Move every session of ``old_key`` under ``new_key`` (one person found under two keys);
        the sessions moved, as they were. When both keys have a live session, ``new_key``'s stays
        live and ``old_key``'s is archived: its transcript is kept and stays readable by its id."""
        if old_key == new_key:
            return []
        moved = await self.history_of(old_key)
        if not moved:
            return []
        keep_live = await self.current(new_key) is not None
        now = utc_now()

        async with self.db.transaction() as tx:  # one transaction: never two live sessions for a key
            if keep_live:
                await tx.execute("UPDATE sessions SET archived_at = ? WHERE key = ? AND archived_at IS NULL",
                                 (now, old_key))
            await tx.execute("UPDATE sessions SET key = ? WHERE key = ?", (new_key, old_key))
        log.info("sessions: %d session(s) of %s moved to %s%s", len(moved), old_key, new_key,
                 " (its live one archived: the other key's continues)" if keep_live else "")
        return moved

    async def keys(self) -> builtins.list[str]:
        """Every key that has or had a session."""
        return [str(r["key"]) for r in await self.db.fetchall("SELECT DISTINCT key FROM sessions")]

    async def find(self, session_id: str) -> SessionRef | None:
        """The index row of ``session_id`` (live or archived), if there is one."""
        row = await self.db.fetchone("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        return _ref(row) if row else None

    async def list(self, *, include_archived: bool = False) -> list[SessionRef]:
        """Sessions, newest first."""
        where = "" if include_archived else "WHERE archived_at IS NULL"
        rows = await self.db.fetchall(f"SELECT * FROM sessions {where} ORDER BY created_at DESC, key")
        return [_ref(r) for r in rows]

    async def history_of(self, key: str) -> builtins.list[SessionRef]:
        """Every session a key has had, newest first (archived ones included)."""
        rows = await self.db.fetchall(
            "SELECT * FROM sessions WHERE key = ? ORDER BY created_at DESC", (key,)
        )
        return [_ref(r) for r in rows]


def _ref(row: Row) -> SessionRef:
    return SessionRef(
        key=row["key"],
        session_id=row["session_id"],
        role=row["role"],
        created_at=row["created_at"],
        archived_at=row["archived_at"],
    )
