"""The values of scheduled work: what kind it is, where it goes, where it stands.

A :class:`NewWork` is what a caller schedules (kind, due moment, place, payload, idempotency
key); a :class:`ScheduledWork` is the stored row as the store hands it out (frozen: no SQLite
row crosses the store). Times are aware UTC datetimes; in the db they are fixed-width text
(:func:`stamp`) so they sort and compare as text on SQLite and map to ``timestamptz`` later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.clock import utc
from board.envelope import Button, Reply

__all__ = [
    "OPEN_STATUSES",
    "NewWork",
    "Outcome",
    "Place",
    "ScheduledWork",
    "WorkKind",
    "WorkStatus",
    "parse_stamp",
    "stamp",
]


class WorkKind(StrEnum):
    """What a row is for; each kind has one handler (:meth:`board.schedule.Schedule.register`).
    Extend it here when a new kind of scheduled work appears."""

    REMINDER = "reminder"  # an action item is due: nudge its owner (board.commands.followup)
    RESOLUTION = "resolution"  # a prediction's resolve-by date: ask the owner to resolve it
    REVIEW = "review"  # a decision's review_after: convene a review meeting
    FOLLOW_UP = "follow_up"  # a revisited decision: the follow-up meeting
    RETRY = "retry"  # something to try again later
    CONSENT = "consent"  # a tool call waits for the owner's Allow: the question, a notice (board.tools.consent)
    MEETING_START = "meeting_start"  # a meeting waits for the owner's Start: the estimate, its expiry (room)
    STANDING_MEETING = "standing_meeting"  # a standing item's meeting or roundtable, now (board.room.standing)
    STANDING = "standing"  # a run of a standing item (/every): brief, meeting, roundtable (board.schedule.standing)
    CONSOLIDATION = "consolidation"  # one person's facts tidied (board.memory.consolidation.run)


class WorkStatus(StrEnum):
    """Where a row stands. ``pending`` -> ``claimed`` (one runner holds it, nothing sent) ->
    ``sending`` (the request may leave from now on: never sent again) -> ``done``; or
    ``cancelled`` / ``failed``."""

    PENDING = "pending"
    CLAIMED = "claimed"
    SENDING = "sending"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


#: Rows that still have to happen.
OPEN_STATUSES = (WorkStatus.PENDING, WorkStatus.CLAIMED, WorkStatus.SENDING)


class Outcome(StrEnum):
    """How a row ended (the ``outcome`` column)."""

    SENT = "sent"  # the channel confirmed it
    MAY_HAVE_ARRIVED = "may_have_arrived"  # the request left and its answer is unknown: never sent again
    ACTED = "acted"  # the handler did the work itself (started a meeting), nothing to send
    NOTHING = "nothing"  # the handler found nothing left to do (the item was closed meanwhile)
    NOT_SENT = "not_sent"  # the service proved it was not posted (and the tries ran out)
    ERROR = "error"  # the handler failed (and the tries ran out)


@dataclass(frozen=True)
class Place:
    """Where scheduled work is sent: the channel, the chat, the topic (None: none)."""

    channel: str
    chat_id: str
    thread_id: int | None = None

    def __str__(self) -> str:
        return f"{self.channel} chat {self.chat_id}" + (f" topic {self.thread_id}" if self.thread_id else "")


@dataclass(frozen=True)
class NewWork:
    """Work to schedule. ``key`` makes it idempotent: adding the same key again changes nothing
    (use e.g. ``reminder:action:12``). ``payload`` holds the kind's fields (JSON-able values)."""

    kind: WorkKind
    key: str
    due_at: datetime
    place: Place
    payload: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.key.strip():
            raise ValueError("scheduled work needs a non-empty idempotency key")
        json.dumps(dict(self.payload))  # fail here, not in the store, when it is not JSON-able


@dataclass(frozen=True)
class ScheduledWork:
    """One stored row."""

    id: int
    key: str
    kind: WorkKind | str  # a kind this build does not know stays a str (its row waits, logged)
    due_at: datetime
    place: Place
    payload: Mapping[str, Any]
    status: WorkStatus
    attempts: int = 0
    held: str | None = None
    outcome: str | None = None
    detail: str | None = None
    claim: str | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None

    def reply(self, text: str, *, role: str = "general", name: str = "Sabha", emoji: str = "",
              buttons: tuple[Button, ...] = ()) -> Reply:
        """A reply to this work's place (same channel, chat and topic), with ``buttons``."""
        return Reply(role=role, name=name, emoji=emoji, text=text, channel=self.place.channel,
                     chat_id=self.place.chat_id, thread_id=self.place.thread_id, kind="command",
                     buttons=buttons)


def stamp(moment: datetime) -> str:
    """``moment`` as the db's fixed-width UTC text (sorts like the moments it stands for)."""
    return utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_stamp(text: str) -> datetime:
    """The moment :func:`stamp` wrote."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
