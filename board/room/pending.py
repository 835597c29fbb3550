"""A meeting that waits for the owner's Start: above ``board.meetings.confirm_over_usd`` nothing is spent first.

When a meeting's estimate (:mod:`board.room.estimate`) is above the owner's threshold, the board
does not start it: :meth:`StartGate.park` stores the request (a ``meeting_starts`` row, migration 1030: it
outlives a restart) and schedules two pieces of work in its place (claimed before they are sent, like every
scheduled row): the estimate with a Start and a Cancel button now, and a line saying it expired a day later
if nobody pressed Start. A press is the command its button sends (``/start_meeting <n>``,
``/cancel_meeting <n>``; typed, they do the same), owner-only like ``/ratify``: a member's press is refused
with one line, a stranger's never gets past the access gate. :meth:`MeetingStarts.claim` moves a row from
waiting to started in one ``UPDATE ... WHERE status = 'waiting'``, so a second press (a retried callback, two
replicas) starts nothing twice; it says what became of the request instead.

:class:`StartRequest` is what is needed to start the meeting later, as the caller asked it (topic, roster,
rounds, agenda, evidence and the caller's envelope, so it is shown where it was called).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from board.clock import Clock
from board.conversation.transcripts import utc_now
from board.envelope import Button, Envelope, Reply
from board.media.attachment import MediaKind
from board.room.estimate import Estimate
from board.room.evidence import Evidence
from board.schedule import Schedule
from board.schedule.work import NewWork, Place, ScheduledWork, WorkKind, parse_stamp, stamp
from board.storage import Database

if TYPE_CHECKING:  # the meeting machinery loads with the first meeting
    from board.room.meeting.run import MeetingRun

__all__ = ["EXPIRE_AFTER", "MeetingCall", "MeetingStarts", "PendingStart", "StartGate", "StartRequest", "StartStatus",
           "start_buttons"]

log = logging.getLogger("sabha.meeting")

#: how long a meeting waits for Start before it expires (said in its place)
EXPIRE_AFTER = timedelta(days=1)
#: a Start's claim this old with no meeting behind it was cut off by a stop (starting takes milliseconds)
STUCK_CLAIM_S = 30.0


class StartStatus(StrEnum):
    """Where a waiting meeting stands."""

    WAITING = "waiting"  # for the owner's Start
    STARTED = "started"  # the owner pressed Start; ``meeting_id`` is the meeting
    CANCELLED = "cancelled"  # the owner pressed Cancel
    EXPIRED = "expired"  # nobody pressed Start within EXPIRE_AFTER


_ENVELOPE_FIELDS = ("channel", "chat_id", "thread_id", "sender", "sender_name", "is_group", "is_owner",
                    "is_public", "role_hint")


@dataclass(frozen=True)
class StartRequest:
    """A meeting as it was called, to start later: ``overrides`` are settings the caller changed (rounds, mode)."""

    topic: str
    envelope: Envelope | None = None
    roster: str | None = None
    agenda: str | None = None
    revisit_of: str | None = None
    evidence: tuple[Evidence, ...] = ()
    overrides: Mapping[str, int | float | bool | str] = field(default_factory=dict)

    def to_json(self) -> str:
        """The request as stored."""
        envelope = None if self.envelope is None else {f: getattr(self.envelope, f) for f in _ENVELOPE_FIELDS}
        return json.dumps({
            "topic": self.topic, "envelope": envelope, "roster": self.roster, "agenda": self.agenda,
            "revisit_of": self.revisit_of, "overrides": dict(self.overrides),
            "evidence": [{**asdict(e), "kind": e.kind.value} for e in self.evidence],
        }, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, now: datetime) -> StartRequest:
        """The stored request (its envelope received ``now``: when Start was pressed)."""
        data = json.loads(text)
        raw = data.get("envelope")
        envelope = None if raw is None else Envelope(text=f"/meeting {data['topic']}", received_at=now, **raw)
        evidence = tuple(Evidence(**{**e, "kind": MediaKind(e["kind"])}) for e in data.get("evidence") or ())
        return cls(topic=data["topic"], envelope=envelope, roster=data.get("roster"), agenda=data.get("agenda"),
                   revisit_of=data.get("revisit_of"), evidence=evidence, overrides=data.get("overrides") or {})


@dataclass(frozen=True)
class PendingStart:
    """One stored request for a Start."""

    id: int
    topic: str
    request: str  # StartRequest.to_json()
    place: Place
    estimate_usd: float
    estimate: str  # as it was said
    status: StartStatus
    created_at: str
    expires_at: str
    decided_by: str | None = None
    meeting_id: str | None = None


@dataclass(frozen=True)
class MeetingCall:
    """What calling a meeting did: its estimate, and the meeting started or the request waiting for Start."""

    estimate: Estimate
    run: MeetingRun | None = None
    waiting: PendingStart | None = None


def start_buttons(start_id: int) -> tuple[Button, ...]:
    """Start / Cancel under the estimate of waiting meeting ``start_id`` (each sends its command)."""
    return (Button("Start", f"/start_meeting {start_id}"), Button("Cancel", f"/cancel_meeting {start_id}"))


def _pending(r: Any) -> PendingStart:
    thread = r["thread_id"]
    return PendingStart(id=int(r["id"]), topic=r["topic"], request=r["request"],
                        place=Place(r["channel"], r["chat_id"], int(thread) if thread is not None else None),
                        estimate_usd=float(r["estimate_usd"]), estimate=r["estimate"], status=StartStatus(r["status"]),
                        created_at=r["created_at"], expires_at=r["expires_at"], decided_by=r["decided_by"],
                        meeting_id=r["meeting_id"])


class MeetingStarts:
    """The ``meeting_starts`` table (SQLite and PostgreSQL alike)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, request: StartRequest, place: Place, estimate: Estimate, *,
                  expires_at: datetime) -> PendingStart:
        """Store a request waiting for Start."""
        rows = await self.db.fetchall(
            "INSERT INTO meeting_starts(topic, request, channel, chat_id, thread_id, estimate_usd, estimate, status, "
            "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
            (request.topic, request.to_json(), place.channel, place.chat_id, place.thread_id, estimate.usd,
             estimate.text(), StartStatus.WAITING.value, utc_now(), stamp(expires_at)))
        return _pending(rows[0])

    async def get(self, start_id: int) -> PendingStart | None:
        """One request, or None."""
        row = await self.db.fetchone("SELECT * FROM meeting_starts WHERE id = ?", (start_id,))
        return None if row is None else _pending(row)

    async def latest(self, place: Place) -> PendingStart | None:
        """The newest request still waiting in ``place`` (channel and chat), or None."""
        row = await self.db.fetchone(
            "SELECT * FROM meeting_starts WHERE channel = ? AND chat_id = ? AND status = ? ORDER BY id DESC LIMIT 1",
            (place.channel, place.chat_id, StartStatus.WAITING.value))
        return None if row is None else _pending(row)

    async def settle(self, start_id: int, status: StartStatus, *, by: str) -> PendingStart | None:
        """Move a waiting request to ``status`` (once: None when it no longer waits)."""
        rows = await self.db.fetchall(
            "UPDATE meeting_starts SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = ? "
            "RETURNING *", (status.value, by, utc_now(), start_id, StartStatus.WAITING.value))
        return _pending(rows[0]) if rows else None

    async def claim(self, start_id: int, *, by: str) -> PendingStart | None:
        """Waiting -> started, once; None when it no longer waits (started, cancelled or expired)."""
        return await self.settle(start_id, StartStatus.STARTED, by=by)

    async def release(self, start_id: int) -> None:
        """A claimed request whose meeting could not start waits again."""
        await self.db.execute(
            "UPDATE meeting_starts SET status = ?, decided_by = NULL, decided_at = NULL WHERE id = ? AND status = ? "
            "AND meeting_id IS NULL", (StartStatus.WAITING.value, start_id, StartStatus.STARTED.value))

    async def take_back(self, start_id: int, *, older_than_s: float) -> bool:
        """A request claimed more than ``older_than_s`` ago whose meeting never began (Sabha stopped between the
        claim and the start: the start takes milliseconds) waits again; whether it did."""
        before = (datetime.now(UTC) - timedelta(seconds=older_than_s)).isoformat(timespec="seconds")
        rows = await self.db.fetchall(
            "UPDATE meeting_starts SET status = ?, decided_by = NULL, decided_at = NULL WHERE id = ? AND status = ? "
            "AND meeting_id IS NULL AND decided_at < ? RETURNING id",
            (StartStatus.WAITING.value, start_id, StartStatus.STARTED.value, before))
        return bool(rows)

    async def started(self, start_id: int, meeting_id: str) -> None:
        """The meeting a Start began."""
        await self.db.execute("UPDATE meeting_starts SET meeting_id = ? WHERE id = ?", (meeting_id, start_id))


#: the request -> the id of the meeting it started; raises when it cannot start now (one is running there)
Starter = Callable[[StartRequest], Awaitable[str]]


class StartGate:
    """Parks meetings that wait for Start and starts them on the owner's press; see the module docstring."""

    def __init__(self, db: Database, schedule: Schedule, clock: Clock, *, expire_after: timedelta = EXPIRE_AFTER):
        self.starts = MeetingStarts(db)
        self.schedule = schedule
        self.clock = clock
        self.expire_after = expire_after
        schedule.register(WorkKind.MEETING_START, self._post)

    async def park(self, request: StartRequest, estimate: Estimate, place: Place) -> PendingStart:
        """Store ``request`` and post its estimate with Start / Cancel in ``place``; it expires after a day."""
        now = self.clock.now()
        row = await self.starts.add(request, place, estimate, expires_at=now + self.expire_after)
        await self.schedule.add(NewWork(WorkKind.MEETING_START, f"meeting_start:ask:{row.id}", now, place,
                                        {"start": row.id, "post": "ask"}))
        await self.schedule.add(NewWork(WorkKind.MEETING_START, f"meeting_start:expire:{row.id}",
                                        parse_stamp(row.expires_at), place, {"start": row.id, "post": "expire"}))
        log.info("meeting request %d (%s) waits for the owner's Start: estimate $%.4f", row.id, request.topic,
                 estimate.usd)
        return row

    async def _post(self, work: ScheduledWork) -> Reply | None:
        row = await self.starts.get(int(work.payload.get("start") or 0))
        if row is None:
            return None
        if work.payload.get("post") == "ask":
            if row.status is not StartStatus.WAITING:
                return None  # pressed (or cancelled) before the question went out
            return work.reply(ask_text(row), buttons=start_buttons(row.id))
        expired = await self.starts.settle(row.id, StartStatus.EXPIRED, by="sabha")
        if expired is None:
            return None
        log.info("meeting request %d expired: no Start within %s", row.id, self.expire_after)
        return work.reply(f"Meeting request {row.id} (\u201c{row.topic}\u201d) expired: nobody pressed Start within "
                          f"{_span(self.expire_after)}; nothing was spent. Call it again with /meeting {row.topic}")

    async def press(self, start_id: int, *, by: str, start: Starter) -> str:
        """The owner pressed Start (or typed ``/start_meeting <n>``): start it once; what to say."""
        claimed = await self.starts.claim(start_id, by=by)
        if claimed is None and await self.starts.take_back(start_id, older_than_s=STUCK_CLAIM_S):
            log.warning("meeting request %d: a Start claimed it but its meeting never began (Sabha stopped in "
                        "between); starting it now", start_id)
            claimed = await self.starts.claim(start_id, by=by)
        if claimed is None:
            return await self._not_waiting(start_id)
        try:
            meeting_id = await start(StartRequest.from_json(claimed.request, now=self.clock.now()))
        except (RuntimeError, ValueError) as exc:  # a meeting running there, meetings off: it waits again, said why
            await self.starts.release(start_id)
            log.info("meeting request %d: Start pressed, not started (%s)", start_id, exc)
            return f"Meeting request {start_id} cannot start now: {exc}. It still waits; press Start again later."
        await self.starts.started(start_id, meeting_id)
        await self.schedule.cancel(f"meeting_start:expire:{start_id}", "started")
        log.info("meeting request %d: started by %s as meeting %s", start_id, by, meeting_id)
        return (f"Starting the board meeting on \u201c{claimed.topic}\u201d (meeting {meeting_id}). The decision will "
                "follow here; /cancel stops it.")

    async def cancel(self, start_id: int, *, by: str) -> str:
        """The owner pressed Cancel: it never starts."""
        cancelled = await self.starts.settle(start_id, StartStatus.CANCELLED, by=by)
        if cancelled is None:
            return await self._not_waiting(start_id)
        await self.schedule.cancel(f"meeting_start:expire:{start_id}", "cancelled")
        log.info("meeting request %d: cancelled by %s", start_id, by)
        return f"Meeting request {start_id} (\u201c{cancelled.topic}\u201d) is cancelled; nothing was spent."

    async def _not_waiting(self, start_id: int) -> str:
        row = await self.starts.get(start_id)
        if row is None:
            return f"There is no meeting request {start_id}; /meeting <topic> calls one."
        if row.status is StartStatus.STARTED and row.meeting_id is None:  # being started, or cut off by a stop
            return (f"Meeting request {start_id} is being started. If no meeting begins within "
                    f"{STUCK_CLAIM_S:g} seconds (Sabha stopped while starting it), press Start again.")
        if row.status is StartStatus.STARTED:
            return f"Meeting request {start_id} was already started as meeting {row.meeting_id}; nothing changed."
        return (f"Meeting request {start_id} is {row.status.value}; nothing changed. /meeting {row.topic} calls it "
                "again.")


def ask_text(row: PendingStart) -> str:
    """The question under which Start and Cancel are shown."""
    return (f"Meeting request {row.id}: \u201c{row.topic}\u201d waits for your Start (nothing is spent until then).\n"
            f"{row.estimate}\nStart it, or Cancel; it expires at "
            f"{parse_stamp(row.expires_at).astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC.")


def _span(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return "a day" if hours == 24 else f"{hours:g} hours"
