"""Slack's rows in the state db (migrations 1100, 1425): streamed answers' messages, threads' roles, ``/board`` echoes.

:class:`SlackDraftStore` (``slack_drafts``): a streamed answer's message is recorded *before* its first post
leaves (no ts yet) and with its ts as soon as Slack answers, so after a kill or a restart the same message is
edited into the answer (never a second answer beside a partial one). Killed between Slack posting it and the
ts being written, the ts is unknown: the answer then goes as a new message (the partial one stays; the log
says so). :class:`SlackThreadRoles` (``slack_thread_roles``): the advisor a thread of the board channel addressed
first, so its follow-ups go to them. :class:`SlackBoardEchoes` (``slack_board_echoes``): a ``/board`` in a channel,
recorded by its ``trigger_id`` before its echo is posted and with the echo's ts once Slack answers, so a command
that cannot be stored is never echoed and a repeated delivery of it reuses its echo (its thread) instead of
posting another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from board.storage import Database

__all__ = ["SlackBoardEchoes", "SlackDraftKey", "SlackDraftStore", "SlackStoredDraft", "SlackThreadRoles"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class SlackDraftKey:
    """Which answer a draft is: the conversation's chat id and the message it answers."""

    chat_id: str
    reply_to: str


@dataclass(frozen=True)
class SlackStoredDraft:
    """A draft as recorded: ``ts`` None while (or when) its first post's outcome is unknown."""

    ts: str | None


class SlackDraftStore:
    """The ``slack_drafts`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, key: SlackDraftKey) -> SlackStoredDraft | None:
        row = await self.db.fetchone("SELECT ts FROM slack_drafts WHERE chat_id = ? AND reply_to = ?",
                                     (key.chat_id, key.reply_to))
        return None if row is None else SlackStoredDraft(row["ts"])

    async def sending(self, key: SlackDraftKey) -> None:
        """The draft's first post is about to leave."""
        await self.db.execute("INSERT INTO slack_drafts (chat_id, reply_to, ts, created_at) VALUES (?, ?, NULL, ?) "
                              "ON CONFLICT (chat_id, reply_to) DO NOTHING", (key.chat_id, key.reply_to, _now()))

    async def placed(self, key: SlackDraftKey, ts: str) -> None:
        """Slack posted the draft as ``ts``."""
        await self.db.execute("INSERT INTO slack_drafts (chat_id, reply_to, ts, created_at) VALUES (?, ?, ?, ?) "
                              "ON CONFLICT (chat_id, reply_to) DO UPDATE SET ts = excluded.ts",
                              (key.chat_id, key.reply_to, ts, _now()))

    async def forget(self, key: SlackDraftKey) -> None:
        await self.db.execute("DELETE FROM slack_drafts WHERE chat_id = ? AND reply_to = ?",
                              (key.chat_id, key.reply_to))

    async def prune(self, keep: timedelta = timedelta(days=7)) -> None:
        """Forget drafts older than ``keep`` (as the inbox forgets its messages)."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="milliseconds")
        await self.db.execute("DELETE FROM slack_drafts WHERE created_at < ?", (cutoff,))


class SlackThreadRoles:
    """The ``slack_thread_roles`` table, read once at start and kept in memory."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._roles: dict[str, str] = {}

    async def load(self) -> None:
        rows = await self.db.fetchall("SELECT chat_id, role FROM slack_thread_roles")
        self._roles = {r["chat_id"]: r["role"] for r in rows}

    def role_of(self, chat_id: str) -> str | None:
        """The role the thread ``chat_id`` addressed first (None: the chair's)."""
        return self._roles.get(chat_id)

    async def remember(self, chat_id: str, role: str) -> None:
        """The thread ``chat_id`` is ``role``'s from now on (the first one named stays)."""
        if chat_id in self._roles:
            return
        self._roles[chat_id] = role
        await self.db.execute("INSERT INTO slack_thread_roles (chat_id, role, created_at) VALUES (?, ?, ?) "
                              "ON CONFLICT (chat_id) DO NOTHING", (chat_id, role, _now()))


class SlackBoardEchoes:
    """The ``slack_board_echoes`` table: a ``/board`` command's echo, keyed on the command's ``trigger_id``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, trigger_id: str, channel: str) -> str | None:
        """Record the command (nothing when it is recorded already); the ts of its echo when that was posted
        (None: post it). Raises the storage error when the state db cannot be written: then nothing is echoed."""
        await self.db.execute("INSERT INTO slack_board_echoes (trigger_id, channel_id, ts, created_at) "
                              "VALUES (?, ?, NULL, ?) ON CONFLICT (trigger_id) DO NOTHING",
                              (trigger_id, channel, _now()))
        row = await self.db.fetchone("SELECT ts FROM slack_board_echoes WHERE trigger_id = ?", (trigger_id,))
        return None if row is None or row["ts"] is None else str(row["ts"])

    async def posted(self, trigger_id: str, ts: str) -> None:
        """The command's echo is the message ``ts``."""
        await self.db.execute("UPDATE slack_board_echoes SET ts = ? WHERE trigger_id = ?", (ts, trigger_id))

    async def prune(self, keep: timedelta = timedelta(days=7)) -> None:
        """Forget commands older than ``keep`` (Slack does not deliver a command again after minutes)."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="milliseconds")
        await self.db.execute("DELETE FROM slack_board_echoes WHERE created_at < ?", (cutoff,))
