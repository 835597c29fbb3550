"""Meetings in the state db: the meeting, its participants, statements (with stances), events,
decision and action items.

The tables come from the ``0100_meetings``, ``0102_stances_and_actions``, ``0801_action_items_due`` and
``1001_meeting_resume`` migrations. Writes happen as the meeting goes, so a crash mid-meeting leaves what
was said on record (the meeting stays ``running`` with no stop reason), with the checkpoint of its last
finished phase, from which the next start resumes it (:mod:`board.room.meeting.resume`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from board.conversation.transcripts import utc_now
from board.decisions.actions import ActionRow
from board.envelope import Envelope
from board.storage import Database, Tx

__all__ = ["ActionDraft", "Checkpoint", "Fence", "MeetingRow", "MeetingStore", "StatementRow"]

#: (task, owner) or (task, owner, due as written: "by 2026-12-15", "in two weeks", None)
ActionDraft = tuple[str, str] | tuple[str, str, str | None]
#: An SQL condition and its parameters a meeting's write requires (this replica's lease on it stands:
#: :meth:`board.room.meeting.lease.MeetingLease.clause`)
Fence = tuple[str, tuple[object, ...]]


@dataclass(frozen=True)
class Checkpoint:
    """A meeting's state to store with a write (:mod:`board.room.meeting.resume`), the fence it requires, and
    ``also``: more writes that commit with it (a statement's prediction)."""

    state: dict[str, Any]
    fence: Fence | None = None
    also: Callable[[Tx], Awaitable[None]] | None = None


@dataclass(frozen=True)
class StatementRow:
    """One member's statement in a round, as stored (``stance``: its stance as JSON-ready data)."""

    round: int
    role: str
    text: str
    model: str | None = None
    cost_usd: float = 0.0
    stance: dict[str, Any] | None = None


@dataclass(frozen=True)
class MeetingRow:
    """A meeting as stored."""

    id: str
    topic: str
    roster: str
    chair: str
    status: str
    stop_reason: str | None
    error: str | None
    agenda: str | None
    started_at: str
    ended_at: str | None
    cost_usd: float
    decision: dict[str, Any] | None
    minutes: str | None


class MeetingStore:
    """Reads and writes meeting records."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, meeting_id: str, topic: str, roster: str, chair: str, *,
                     place: Envelope | None = None, revisit_of: str | None = None,
                     resume: dict[str, Any] | None = None) -> None:
        """Record a meeting that is starting (whole even when the meeting is cancelled meanwhile: its
        stop reason is then written onto this row); ``place``: the message that called it (its channel,
        chat, topic, and whether that chat is a group), None for the terminal's ``sabha meeting``;
        ``resume``: what rebuilding it after a restart takes (:func:`board.room.meeting.resume.spec`)."""
        where = (place.channel, place.chat_id, place.thread_id, int(place.is_group)) if place else (None,) * 4
        await _whole(self.db.execute(
            "INSERT INTO meetings(id, topic, roster, chair, status, channel, chat_id, thread_id, is_group, "
            "started_at, revisit_of, resume) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
            (meeting_id, topic, roster, chair, *where, utc_now(), revisit_of, _json(resume)),
        ))

    async def checkpoint(self, meeting_id: str, state: dict[str, Any], *, fence: Fence | None = None) -> bool:
        """Store a running meeting's checkpoint (:mod:`board.room.meeting.resume`); False when ``fence`` (an SQL
        condition and its parameters: this replica's lease stands) does not hold, or the meeting ended."""
        async with self.db.transaction() as tx:
            return await _checkpoint(tx, meeting_id, state, fence)

    async def resumable(self, meeting_id: str | None = None) -> list[Any]:
        """The rows of meetings still ``running`` (of ``meeting_id`` only, if given), oldest first."""
        if meeting_id is not None:
            return await self.db.fetchall("SELECT * FROM meetings WHERE id = ? AND status = 'running'", (meeting_id,))
        return await self.db.fetchall(
            "SELECT * FROM meetings WHERE status = 'running' ORDER BY started_at, id")

    async def set_agenda(self, meeting_id: str, agenda: str) -> None:
        """Store the chair's agenda."""
        await self.db.execute("UPDATE meetings SET agenda = ? WHERE id = ?", (agenda, meeting_id))

    async def participant(self, meeting_id: str, role: str, status: str, reason: str | None = None) -> None:
        """Record (or update) a participant's attendance."""
        await self.db.execute(
            "INSERT INTO meeting_participants(meeting_id, role, status, reason) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(meeting_id, role) DO UPDATE SET status = excluded.status, reason = excluded.reason",
            (meeting_id, role, status, reason),
        )

    async def present(self, meeting_id: str, roles: Sequence[str]) -> None:
        """Record ``roles`` as present, in this order, with one statement (a meeting's opening)."""
        if not roles:
            return
        values = ", ".join("(?, ?, 'present', NULL)" for _ in roles)
        await self.db.execute(
            f"INSERT INTO meeting_participants(meeting_id, role, status, reason) VALUES {values} "
            "ON CONFLICT(meeting_id, role) DO UPDATE SET status = excluded.status, reason = excluded.reason",
            tuple(x for role in roles for x in (meeting_id, role)),
        )

    async def statement(self, meeting_id: str, round_no: int, role: str, text: str, *, model: str | None,
                        cost_usd: float, stance: dict[str, Any] | None = None,
                        checkpoint: Checkpoint | None = None) -> bool:
        """Record what a participant said in a round, and the stance it ended with; with ``checkpoint`` (the
        meeting's state with this statement in it) both in one transaction, so a restart finds either both or
        neither, and the checkpoint's ``also`` (the statement's prediction) in the same one. False (nothing
        written) when its fence does not hold or the meeting ended meanwhile."""
        said = StatementRow(round_no, role, text, model=model, cost_usd=cost_usd, stance=stance)
        return await self.statements(meeting_id, (said,), checkpoint=checkpoint)

    async def statements(self, meeting_id: str, said: Sequence[StatementRow], *,
                         checkpoint: Checkpoint | None = None) -> bool:
        """Record several statements (members who finished at about the same time) and the checkpoint that
        has them all in one transaction (a group commit: one INSERT for all of them, one transaction in all);
        False (nothing written) when the checkpoint's fence does not hold or the meeting ended meanwhile."""
        async with self.db.transaction() as tx:
            if checkpoint is not None and not await _checkpoint(tx, meeting_id, checkpoint.state, checkpoint.fence):
                return False
            now = utc_now()
            if said:  # one statement for all of them: one round trip to the db, not one per statement
                await tx.execute(
                    "INSERT INTO meeting_statements(meeting_id, round, role, text, model, cost_usd, created_at, "
                    "stance) VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * len(said)),
                    tuple(value for one in said for value in (
                        meeting_id, one.round, one.role, one.text, one.model, one.cost_usd, now,
                        json.dumps(one.stance, ensure_ascii=False) if one.stance is not None else None)),
                )
            if checkpoint is not None and checkpoint.also is not None:
                await checkpoint.also(tx)
        return True

    async def add_actions(self, meeting_id: str, items: Sequence[ActionDraft]) -> None:
        """Record a decision's action items (task, owner[, due as written]) as open; the due date
        is read and its reminder set by :mod:`board.decisions.reminders` once the decision is out."""
        if not items:
            return
        now = utc_now()
        rows = [(meeting_id, position, item[0], item[1], now, (item[2] if len(item) > 2 else None) or None)
                for position, item in enumerate(items, start=1)]
        await self.db.execute(  # one statement for all of them: one round trip, stored all or none
            "INSERT INTO action_items(meeting_id, position, task, owner, status, created_at, due_text) VALUES "
            + ", ".join(["(?, ?, ?, ?, 'open', ?, ?)"] * len(rows)), tuple(v for row in rows for v in row))

    async def actions(self, *, include_done: bool = False, place: tuple[str, str] | None = None,
                      limit: int = 50, meeting_id: str | None = None, action_id: int | None = None,
                      ) -> list[ActionRow]:
        """Action items across meetings, oldest first; only open ones unless ``include_done``; only
        those of meetings started from ``place`` (channel, chat id) if given (of ``meeting_id``,
        or the one ``action_id``)."""
        where: list[str] = []
        params: list[object] = []
        if not include_done:
            where.append("a.status = 'open'")
        if place is not None:
            where.append("m.channel = ? AND m.chat_id = ?")
            params += [place[0], place[1]]
        if meeting_id is not None:
            where.append("a.meeting_id = ?")
            params.append(meeting_id)
        if action_id is not None:
            where.append("a.id = ?")
            params.append(action_id)
        sql = ("SELECT a.*, m.topic, m.channel, m.chat_id, m.thread_id FROM action_items a "
               "JOIN meetings m ON m.id = a.meeting_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY a.created_at, a.id LIMIT ?")
        rows = await self.db.fetchall(sql, (*params, limit))
        return [ActionRow(id=r["id"], meeting_id=r["meeting_id"], topic=r["topic"], task=r["task"], owner=r["owner"],
                          status=r["status"], created_at=r["created_at"], done_at=r["done_at"], due_at=r["due_at"],
                          due_text=r["due_text"], channel=r["channel"], chat_id=r["chat_id"],
                          thread_id=r["thread_id"]) for r in rows]

    async def action(self, action_id: int, *, place: tuple[str, str] | None = None) -> ActionRow | None:
        """Action item ``action_id`` (open or not; of a meeting started from ``place`` if given)."""
        rows = await self.actions(include_done=True, place=place, action_id=action_id, limit=1)
        return rows[0] if rows else None

    async def set_due(self, action_id: int, due_at: str | None, due_text: str | None) -> bool:
        """Give open item ``action_id`` a due date (``due_at`` as :func:`board.schedule.work.stamp`
        writes it); False when it is not open."""
        rows = await self.db.fetchall(
            "UPDATE action_items SET due_at = ?, due_text = ? WHERE id = ? AND status = 'open' RETURNING id",
            (due_at, due_text, action_id))
        return bool(rows)

    async def due_by(self, moment: str, *, place: tuple[str, str] | None = None) -> list[ActionRow]:
        """Open items due at or before ``moment`` (overdue), most overdue first."""
        rows = [r for r in await self.actions(place=place, limit=10_000) if r.due_at is not None and r.due_at <= moment]
        return sorted(rows, key=lambda r: (r.due_at or "", r.id))

    async def close_action(self, action_id: int, *, by: str | None = None,
                           place: tuple[str, str] | None = None) -> ActionRow | None:
        """Mark an open action item done; None when there is no such open item (for ``place``)."""
        row = await self.action(action_id, place=place)
        if row is None or row.status != "open":
            return None
        closed = await self.db.fetchall("UPDATE action_items SET status = 'done', done_at = ?, done_by = ? "
                                        "WHERE id = ? AND status = 'open' RETURNING id", (utc_now(), by, action_id))
        return row if closed else None

    async def event(self, meeting_id: str, kind: str, role: str, data: dict[str, Any], round_no: int | None) -> None:
        """Record a disagreement, consensus or decision event."""
        await self.db.execute(
            "INSERT INTO meeting_events(meeting_id, kind, role, round, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (meeting_id, kind, role, round_no, json.dumps(data, ensure_ascii=False), utc_now()),
        )

    async def spent(self, meeting_id: str) -> float:
        """What the ledger says the meeting's model calls cost (a resumed meeting's spend: it has the calls that
        were paid for after the last checkpoint, which the checkpoint's figure lacks)."""
        row = await self.db.fetchone("SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE meeting_id = ?",
                                     (meeting_id,))
        return float(row["usd"]) if row else 0.0

    async def finish(self, meeting_id: str, *, stop_reason: str, cost_usd: float, decision: dict[str, Any] | None,
                     minutes: str | None, error: str | None = None) -> None:
        """Close a meeting with its stop reason, cost, decision and minutes."""
        await self.db.execute(
            "UPDATE meetings SET status = 'ended', stop_reason = ?, ended_at = ?, cost_usd = ?, decision = ?, "
            "minutes = ?, error = ? WHERE id = ?",
            (stop_reason, utc_now(), cost_usd, json.dumps(decision, ensure_ascii=False) if decision else None,
             minutes, error, meeting_id),
        )

    async def bookkept(self, meeting_id: str) -> None:
        """Mark ended meeting ``meeting_id``'s end bookkeeping done (:class:`board.room.subscribers.Bookkeeping`)."""
        await self.db.execute("UPDATE meetings SET bookkept_at = ? WHERE id = ? AND bookkept_at IS NULL",
                              (utc_now(), meeting_id))

    async def ended_since(self, since: str) -> list[Any]:
        """The rows of meetings that ended at ``since`` (ISO-8601 UTC, as their end was stamped) or later, in the
        order they ended."""
        return await self.db.fetchall("SELECT * FROM meetings WHERE ended_at >= ? AND status = 'ended' "
                                      "ORDER BY ended_at, id", (since,))

    async def not_bookkept(self) -> list[Any]:
        """The rows of ended meetings whose end bookkeeping is not marked done (a kill cut it short), oldest first."""
        return await self.db.fetchall("SELECT * FROM meetings WHERE status = 'ended' AND bookkept_at IS NULL "
                                      "ORDER BY started_at, id")

    async def present_roles(self, meeting_id: str) -> list[str]:
        """The roles recorded present at meeting ``meeting_id``, in the order they were recorded."""
        rows = await self.db.fetchall("SELECT role FROM meeting_participants WHERE meeting_id = ? AND status = "
                                      "'present' ORDER BY rowid", (meeting_id,))
        return [str(r["role"]) for r in rows]

    async def get(self, meeting_id: str) -> MeetingRow | None:
        """One meeting by id (a unique prefix of the id works too)."""
        row = await self.db.fetchone("SELECT * FROM meetings WHERE id = ?", (meeting_id,))
        if row is None:
            rows = await self.db.fetchall("SELECT * FROM meetings WHERE lower(id) LIKE lower(?) LIMIT 2",
                                          (meeting_id + "%",))
            row = rows[0] if len(rows) == 1 else None
        return _row(row) if row else None

    async def list(self, limit: int = 50, *, place: tuple[str, str] | None = None) -> list[MeetingRow]:
        """Recent meetings, newest first; only those started from ``place`` (channel, chat id) if given."""
        if place is None:
            rows = await self.db.fetchall(
                "SELECT * FROM meetings ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,))
        else:
            rows = await self.db.fetchall(
                "SELECT * FROM meetings WHERE channel = ? AND chat_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
                (place[0], place[1], limit))
        return [_row(r) for r in rows]

    async def details(self, meeting_id: str) -> dict[str, Any]:
        """Participants, statements and events of a meeting, for ``meetings show --json``."""
        participants = await self.db.fetchall(
            "SELECT role, status, reason FROM meeting_participants WHERE meeting_id = ? ORDER BY rowid", (meeting_id,))
        statements = await self.db.fetchall(
            "SELECT round, role, text, stance, model, cost_usd, created_at FROM meeting_statements "
            "WHERE meeting_id = ? ORDER BY round, id", (meeting_id,))
        events = await self.db.fetchall(
            "SELECT kind, role, round, data, created_at FROM meeting_events WHERE meeting_id = ? ORDER BY id",
            (meeting_id,))
        return {
            "participants": [dict(r) for r in participants],
            "statements": [{**dict(r), "stance": json.loads(r["stance"]) if r["stance"] else None}
                           for r in statements],
            "events": [{**dict(r), "data": json.loads(r["data"])} for r in events],
        }


def _json(value: dict[str, Any] | None) -> str | None:
    return json.dumps(value, ensure_ascii=False) if value is not None else None


async def _checkpoint(tx: Tx, meeting_id: str, state: dict[str, Any], fence: Fence | None) -> bool:
    condition, params = fence if fence is not None else ("1 = 1", ())
    rows = await tx.fetchall(
        f"UPDATE meetings SET checkpoint = ? WHERE id = ? AND status = 'running' AND {condition} RETURNING id",
        (_json(state), meeting_id, *params))
    return bool(rows)


async def _whole(write: Awaitable[None]) -> None:
    """Run ``write`` to its end even if the caller is cancelled meanwhile (PostgreSQL cancels a statement
    whose await is cancelled; SQLite's runs on in its thread), then let the cancel go on."""
    task = asyncio.ensure_future(write)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


def _row(row: Any) -> MeetingRow:
    return MeetingRow(
        id=row["id"], topic=row["topic"], roster=row["roster"], chair=row["chair"], status=row["status"],
        stop_reason=row["stop_reason"], error=row["error"], agenda=row["agenda"], started_at=row["started_at"],
        ended_at=row["ended_at"], cost_usd=float(row["cost_usd"] or 0),
        decision=json.loads(row["decision"]) if row["decision"] else None, minutes=row["minutes"],
    )
