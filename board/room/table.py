"""The owner at the table: what people write into a running meeting, and what they tell it to do.

A meeting runs on one replica; the message that speaks to it may arrive at any replica, from any
surface (the meeting's Telegram topic, a WhatsApp chat, the web live page, ``sabha meeting`` in a
terminal). So everything goes through the state db, and nothing through memory:

- a :class:`Contribution` is stored when it arrives (before the channel is told we have it, as every
  message is) and read by the meeting before its next round, which quotes it to every member;
- a :class:`Control` (:class:`ControlKind`: wrap, pause, resume, extend, cancel) is stored likewise and
  applied by the meeting at its next phase boundary (``applied_at`` says when);
- :meth:`MeetingTable.add_place` records every place a meeting is shown in (the chat it was called
  from, the thread a channel opened for it), so :meth:`MeetingTable.meeting_at` finds the running
  meeting a message written there belongs to.

:class:`MeetingTable` is the store (SQLite and PostgreSQL alike); who may contribute, how a
contribution is quoted and how a control acts are decided by the meeting and the front door, not here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from board.conversation.transcripts import utc_now
from board.envelope import Envelope
from board.storage import Database

__all__ = ["Contribution", "Control", "ControlEvent", "ControlKind", "MeetingTable", "PlaceKind", "Written", "seated"]


class ControlKind(StrEnum):
    """What a person tells a running meeting to do (the commands of the same names)."""

    WRAP = "wrap"  # end after the current round and go to the decision
    PAUSE = "pause"  # no new round starts until resumed
    RESUME = "resume"
    EXTEND = "extend"  # one more round, within the caps
    CANCEL = "cancel"  # end now, no decision


class PlaceKind(StrEnum):
    """Why a meeting is shown in a place."""

    ORIGIN = "origin"  # the chat (topic) it was called from
    THREAD = "thread"  # a thread a channel opened for it (a forum topic of its own)


@dataclass(frozen=True)
class Contribution:
    """One thing a person wrote into a running meeting."""

    id: int
    meeting_id: str
    sender: str  # the channel's sender id, or the person; "owner" for the terminal and the owner's web page
    name: str  # how the members are told who said it: "the owner", or a participant's display name
    text: str
    via: str  # the channel it came from
    round: int  # the round running when it arrived (0: while framing)
    addressed: str | None  # the role it names, None when it is for everyone
    message_id: str | None
    created_at: str
    thread_id: str = ""  # the thread (forum topic) it was written in; "" for none


@dataclass(frozen=True)
class Control:
    """One command a person gave a running meeting."""

    id: int
    meeting_id: str
    kind: ControlKind
    by: str
    created_at: str
    applied_at: str | None


def _contribution(r: Any) -> Contribution:
    return Contribution(id=int(r["id"]), meeting_id=r["meeting_id"], sender=r["sender"], name=r["name"],
                        text=r["text"], via=r["via"], round=int(r["round"]), addressed=r["addressed"],
                        message_id=r["message_id"], created_at=r["created_at"], thread_id=r["thread_id"] or "")


def _control(r: Any) -> Control:
    return Control(id=int(r["id"]), meeting_id=r["meeting_id"], kind=ControlKind(r["kind"]), by=r["by_whom"],
                   created_at=r["created_at"], applied_at=r["applied_at"])


@dataclass(frozen=True)
class Written:
    """What someone writes into a running meeting, and where: the channel, its message id (the same message twice
    is one contribution) and the thread (forum topic) it was written in."""

    sender: str
    name: str
    text: str
    via: str
    message_id: str | None = None
    thread_id: str | None = None


@dataclass(frozen=True)
class ControlEvent:
    """The ``control`` event a meeting records with a control it acted on."""

    meeting_id: str
    role: str  # the chair's, who speaks for the meeting
    round: int | None
    data: dict[str, Any]


class MeetingTable:
    """Contributions, controls and places of meetings, in the state db (migration ``1000``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def contribute(self, meeting_id: str, written: Written, *, round_no: int,
                         addressed: str | None = None) -> Contribution:
        """Store a contribution; the same channel message twice is stored once (the first row is returned)."""
        w = written
        rows = await self.db.fetchall(
            "INSERT INTO meeting_contributions(meeting_id, sender, name, text, via, round, addressed, message_id, "
            "created_at, thread_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *",
            (meeting_id, w.sender, w.name, w.text, w.via, round_no, addressed, w.message_id, utc_now(),
             w.thread_id or None))
        if rows:
            return _contribution(rows[0])
        row = await self.db.fetchone(
            "SELECT * FROM meeting_contributions WHERE meeting_id = ? AND via = ? AND message_id = ?",
            (meeting_id, w.via, w.message_id))
        if row is None:  # pragma: no cover - the conflict was on this very key
            raise RuntimeError(f"contribution to {meeting_id} neither stored nor found")
        return _contribution(row)

    async def contributions(self, meeting_id: str, *, after: int = 0) -> list[Contribution]:
        """The meeting's contributions with an id above ``after``, in the order they came."""
        rows = await self.db.fetchall(
            "SELECT * FROM meeting_contributions WHERE meeting_id = ? AND id > ? ORDER BY id", (meeting_id, after))
        return [_contribution(r) for r in rows]

    async def control(self, meeting_id: str, kind: ControlKind, *, by: str) -> Control:
        """Store a control for the meeting to act on."""
        rows = await self.db.fetchall(
            "INSERT INTO meeting_controls(meeting_id, kind, by_whom, created_at) VALUES (?, ?, ?, ?) RETURNING *",
            (meeting_id, kind.value, by, utc_now()))
        return _control(rows[0])

    async def controls(self, meeting_id: str, *, pending_only: bool = True) -> list[Control]:
        """The meeting's controls in order (only those not applied yet, unless ``pending_only`` is false)."""
        rows = await self.db.fetchall(
            "SELECT * FROM meeting_controls WHERE meeting_id = ?"
            + (" AND applied_at IS NULL" if pending_only else "") + " ORDER BY id", (meeting_id,))
        return [_control(r) for r in rows]

    async def applied(self, control_id: int, *, event: ControlEvent,
                      fence: tuple[str, tuple[object, ...]] | None = None) -> bool:
        """The meeting acted on control ``control_id``: marked applied and its ``event`` recorded (what a resumed
        meeting reads the control's effect back from) in one transaction, only while ``fence`` (the meeting's
        lease) holds. False, with nothing written, when the fence does not hold or it was applied already."""
        condition, params = fence if fence is not None else ("1 = 1", ())
        async with self.db.transaction() as tx:
            rows = await tx.fetchall(
                f"UPDATE meeting_controls SET applied_at = ? WHERE id = ? AND applied_at IS NULL AND {condition} "
                "RETURNING id", (utc_now(), control_id, *params))
            if not rows:
                return False
            await tx.execute(
                "INSERT INTO meeting_events(meeting_id, kind, role, round, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (event.meeting_id, "control", event.role, event.round,
                 json.dumps(event.data, ensure_ascii=False), utc_now()))
        return True

    async def add_place(self, meeting_id: str, channel: str, chat_id: str, thread_id: int | str | None,
                        kind: PlaceKind) -> None:
        """The meeting is shown in this place (idempotent)."""
        await self.db.execute(
            "INSERT INTO meeting_places(meeting_id, channel, chat_id, thread_id, kind) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (meeting_id, channel, str(chat_id), "" if thread_id is None else str(thread_id), kind.value))

    async def places(self, meeting_id: str) -> list[tuple[str, str, str, PlaceKind]]:
        """(channel, chat id, thread id or "", kind) of every place the meeting is shown in."""
        rows = await self.db.fetchall(
            "SELECT channel, chat_id, thread_id, kind FROM meeting_places WHERE meeting_id = ? ORDER BY kind, channel",
            (meeting_id,))
        return [(r["channel"], r["chat_id"], r["thread_id"], PlaceKind(r["kind"])) for r in rows]

    async def meeting_at(self, channel: str, chat_id: str, thread_id: int | str | None) -> str | None:
        """The running meeting shown in this place (the newest, if several), or None."""
        row = await self.db.fetchone(
            "SELECT p.meeting_id FROM meeting_places p JOIN meetings m ON m.id = p.meeting_id "
            "WHERE p.channel = ? AND p.chat_id = ? AND p.thread_id = ? AND m.status = 'running' "
            "ORDER BY m.started_at DESC, p.meeting_id DESC LIMIT 1",
            (channel, str(chat_id), "" if thread_id is None else str(thread_id)))
        return None if row is None else str(row["meeting_id"])


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def seated(envelope: Envelope, participants: tuple[str, ...]) -> bool:
    """Whether ``envelope``'s sender sits at the table: the owner, or one ``participants`` names, by the
    channel's sender id (``43``), ``<channel>:<sender id>`` (``telegram:43``), a linked person
    (``person:2``, :mod:`board.people`) or a phone number (``+49 151 2345678``; WhatsApp's sender is the
    number's digits). A stranger of a channel open to anyone (``is_public``) never does."""
    if envelope.is_public:
        return False
    if envelope.is_owner:
        return True
    ids = {envelope.sender, f"{envelope.channel}:{envelope.sender}"}
    if envelope.person is not None:
        ids.add(envelope.person.key)
    for wanted in (p.strip() for p in participants):
        if wanted in ids:
            return True
        if (wanted.startswith("+") and envelope.channel == "whatsapp" and _digits(wanted)
                and _digits(wanted) == envelope.sender.lstrip("+")):  # a phone number names a WhatsApp sender
            return True
    return False
