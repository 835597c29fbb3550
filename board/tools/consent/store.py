"""The consent tables (migration ``0910_tool_approvals``): one row per call that needed the owner's consent, the
tools the owner always allows, and where the owner was last seen on each channel.

A row moves by conditional updates only, so two answers (a press and a typed ``/deny``, two replicas) cannot
both win: asked -> answered (``allowed_once`` | ``always_allowed`` | ``denied`` | ``timed_out``) -> started
(written before the call is made) -> finished (``ok``, a summary). A row started and never finished is a call
that may have run before Sabha stopped: it is reported once (``reported_at``) and never made again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from board.agent.outside import ConsentAsk
from board.schedule.work import Place, stamp
from board.storage import Database, Row

__all__ = ["AlwaysAllowed", "Answer", "ApprovalRow", "ApprovalStore"]

_COLUMNS = ("id, key, server, tool, arguments, role, session_key, meeting_id, channel, chat_id, thread_id, asker, "
            "answer, answered_by, asked_at, started_at, finished_at, ok, summary, reported_at")


class Answer:
    """The values of the ``answer`` column (the owner's, or the clock's)."""

    ALLOWED_ONCE = "allowed_once"
    ALWAYS_ALLOWED = "always_allowed"
    DENIED = "denied"
    TIMED_OUT = "timed_out"
    RUNS = (ALLOWED_ONCE, ALWAYS_ALLOWED)


@dataclass(frozen=True)
class ApprovalRow:
    """One call that needed consent, as stored."""

    id: int
    key: str
    server: str
    tool: str
    arguments: Mapping[str, Any]
    role: str
    session_key: str
    meeting_id: str | None
    place: Place | None
    asker: str | None
    answer: str | None
    answered_by: str | None
    asked_at: str
    started_at: str | None
    finished_at: str | None
    ok: bool | None
    summary: str | None
    reported_at: str | None

    @property
    def label(self) -> str:
        """``server.tool``."""
        return f"{self.server}.{self.tool}"

    @property
    def may_have_run(self) -> bool:
        """Started and never finished: the call may have been made before Sabha stopped."""
        return self.started_at is not None and self.finished_at is None


@dataclass(frozen=True)
class AlwaysAllowed:
    """A tool the owner always allows."""

    server: str
    tool: str
    granted_by: str
    granted_at: str

    @property
    def label(self) -> str:
        """``server.tool``."""
        return f"{self.server}.{self.tool}"


def _row(r: Row) -> ApprovalRow:
    place = Place(str(r["channel"]), str(r["chat_id"]), None if r["thread_id"] is None else int(r["thread_id"])) \
        if r["channel"] is not None and r["chat_id"] is not None else None
    return ApprovalRow(
        id=int(r["id"]), key=str(r["key"]), server=str(r["server"]), tool=str(r["tool"]),
        arguments=json.loads(r["arguments"] or "{}"), role=str(r["role"]), session_key=str(r["session_key"]),
        meeting_id=r["meeting_id"], place=place, asker=r["asker"], answer=r["answer"], answered_by=r["answered_by"],
        asked_at=str(r["asked_at"]), started_at=r["started_at"], finished_at=r["finished_at"],
        ok=None if r["ok"] is None else bool(r["ok"]), summary=r["summary"], reported_at=r["reported_at"])


class ApprovalStore:
    """Reads and conditional writes of the consent tables; see the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _one(self, sql: str, params: tuple[Any, ...]) -> ApprovalRow | None:
        row = await self.db.fetchone(f"{sql} RETURNING {_COLUMNS}", params)
        return None if row is None else _row(row)

    # -- one call ------------------------------------------------------------------------------

    async def get(self, key: str) -> ApprovalRow | None:
        """The row of the call named ``key``."""
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM tool_approvals WHERE key = ?", (key,))
        return None if row is None else _row(row)

    async def number(self, number: int) -> ApprovalRow | None:
        """The row ``#number``."""
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM tool_approvals WHERE id = ?", (number,))
        return None if row is None else _row(row)

    async def asked(self, ask: ConsentAsk, place: Place | None, asker: str | None, now: datetime, *,
                    answer: str | None = None) -> ApprovalRow | None:
        """Record ``ask`` (None when its key is stored already). With ``answer`` (a tool always allowed) the
        row is answered and started in the same write: the call is recorded before it is made."""
        at = stamp(now)
        started = at if answer in Answer.RUNS else None
        return await self._one(
            "INSERT INTO tool_approvals (key, server, tool, arguments, role, session_key, meeting_id, channel, "
            "chat_id, thread_id, asker, answer, answered_by, asked_at, answered_at, started_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            (ask.key, ask.origin.server, ask.origin.tool,
             json.dumps(dict(ask.arguments), ensure_ascii=False, sort_keys=True, default=str), ask.role,
             ask.session_key, ask.meeting_id, place.channel if place else None, place.chat_id if place else None,
             place.thread_id if place else None, asker, answer, "always" if answer else None, at,
             at if answer else None, started))

    async def answer(self, number: int, answer: str, by: str, now: datetime) -> ApprovalRow | None:
        """Answer the waiting row ``#number``; None when it was answered already (or does not exist)."""
        return await self._one(
            "UPDATE tool_approvals SET answer = ?, answered_by = ?, answered_at = ? WHERE id = ? AND answer IS NULL",
            (answer, by, stamp(now), number))

    async def start(self, number: int, now: datetime) -> bool:
        """Mark the allowed row ``#number`` started (before the call is made); False when it was started already."""
        return await self._one(
            "UPDATE tool_approvals SET started_at = ? WHERE id = ? AND started_at IS NULL AND answer IN (?, ?)",
            (stamp(now), number, *Answer.RUNS)) is not None

    async def finish(self, number: int, *, ok: bool, summary: str, now: datetime) -> bool:
        """Record that the started call ``#number`` has run."""
        return await self._one(
            "UPDATE tool_approvals SET finished_at = ?, ok = ?, summary = ? WHERE id = ? AND started_at IS NOT NULL "
            "AND finished_at IS NULL", (stamp(now), int(ok), summary, number)) is not None

    async def reported(self, number: int, now: datetime) -> bool:
        """Mark that the owner was told call ``#number`` may have run; False when they were told already."""
        return await self._one("UPDATE tool_approvals SET reported_at = ? WHERE id = ? AND reported_at IS NULL",
                               (stamp(now), number)) is not None

    # -- lists -----------------------------------------------------------------------------------

    async def waiting(self, limit: int = 20) -> list[ApprovalRow]:
        """The calls waiting for an answer, newest first."""
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM tool_approvals WHERE answer IS NULL "
                                      "ORDER BY id DESC LIMIT ?", (limit,))
        return [_row(r) for r in rows]

    async def recent(self, limit: int = 20) -> list[ApprovalRow]:
        """The latest calls asked for, newest first."""
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM tool_approvals ORDER BY id DESC LIMIT ?", (limit,))
        return [_row(r) for r in rows]

    # -- always allowed ----------------------------------------------------------------------------

    async def is_always(self, server: str, tool: str) -> bool:
        """Whether the owner always allows ``server.tool``."""
        return await self.db.fetchone("SELECT 1 AS one FROM tool_always_allowed WHERE server = ? AND tool = ?",
                                      (server, tool)) is not None

    async def allow_always(self, server: str, tool: str, by: str, now: datetime) -> bool:
        """Always allow ``server.tool`` from now on; False when it was already."""
        return await self.db.fetchone(
            "INSERT INTO tool_always_allowed (server, tool, granted_by, granted_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (server, tool) DO NOTHING RETURNING server", (server, tool, by, stamp(now))) is not None

    async def revoke(self, server: str, tool: str) -> bool:
        """Ask again for ``server.tool`` from now on; False when it was not always allowed."""
        return await self.db.fetchone("DELETE FROM tool_always_allowed WHERE server = ? AND tool = ? RETURNING server",
                                      (server, tool)) is not None

    async def always(self) -> list[AlwaysAllowed]:
        """Every tool always allowed, by name."""
        rows = await self.db.fetchall("SELECT server, tool, granted_by, granted_at FROM tool_always_allowed "
                                      "ORDER BY server, tool")
        return [AlwaysAllowed(str(r["server"]), str(r["tool"]), str(r["granted_by"]), str(r["granted_at"]))
                for r in rows]

    # -- the owner's place ---------------------------------------------------------------------------

    async def seen_owner(self, place: Place, now: datetime) -> None:
        """The owner wrote from ``place`` (their own chat on its channel)."""
        await self.db.execute(
            "INSERT INTO tool_consent_places (channel, chat_id, thread_id, seen_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (channel) DO UPDATE SET chat_id = excluded.chat_id, thread_id = excluded.thread_id, "
            "seen_at = excluded.seen_at", (place.channel, place.chat_id, place.thread_id, stamp(now)))

    async def owner_place(self, channel: str) -> Place | None:
        """Where the owner was last seen on ``channel``."""
        row = await self.db.fetchone("SELECT chat_id, thread_id FROM tool_consent_places WHERE channel = ?",
                                     (channel,))
        if row is None:
            return None
        return Place(channel, str(row["chat_id"]), None if row["thread_id"] is None else int(row["thread_id"]))
