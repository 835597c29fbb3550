"""What a meeting reports and how it ends: values only, no I/O.

:class:`MeetingEvent` is what subscribers (channels, the terminal) see while a meeting
runs; :class:`MeetingResult` is what the caller gets back; :class:`StopReason` says why it
ended. :class:`Stop` is raised inside the package to end a meeting early (a deadline, a
budget, no quorum); only :mod:`board.room.meeting.run` catches it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.envelope import Envelope
from board.room.decision import Decision

__all__ = [
    "MeetingEvent",
    "MeetingEventKind",
    "MeetingResult",
    "Stop",
    "StopReason",
    "Subscriber",
    "new_meeting_id",
]


class StopReason(StrEnum):
    """Why a meeting ended."""

    COMPLETED = "completed"
    CONVERGED = "converged"
    BUDGET = "budget"
    DEADLINE = "deadline"
    CANCELLED = "cancelled"
    ERROR = "error"


class MeetingEventKind(StrEnum):
    """What a :class:`MeetingEvent` reports."""

    STARTED = "started"
    FRAMED = "framed"
    AGENT_SPOKE = "agent_spoke"
    ABSENT = "absent"
    DISAGREEMENT = "disagreement"
    CONSENSUS = "consensus"
    ROUND_DONE = "round_done"
    PEER_REVIEW = "peer_review"
    OBJECTION = "objection"
    DECISION = "decision"
    ENDED = "ended"


@dataclass(frozen=True)
class MeetingEvent:
    """A progress event channels can show."""

    kind: MeetingEventKind
    meeting_id: str
    topic: str
    origin: Envelope | None = None
    round: int | None = None
    role: str | None = None
    name: str | None = None
    emoji: str | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[MeetingEvent], Awaitable[None]]


@dataclass(frozen=True)
class MeetingResult:
    """The outcome: the decision (None only when the meeting could not reach one),
    the stop reason, the minutes and what it cost."""

    meeting_id: str
    topic: str
    stop_reason: StopReason
    decision: Decision | None
    minutes: str
    cost_usd: float
    rounds: int
    absent: dict[str, str]
    error: str | None = None


class Stop(Exception):
    """Ends the meeting early with ``reason`` (``detail`` goes into the record)."""

    def __init__(self, reason: StopReason, detail: str = "") -> None:
        super().__init__(detail or reason.value)
        self.reason = reason
        self.detail = detail


def new_meeting_id() -> str:
    """A sortable, unique meeting id such as ``m-20261122-0304-9f2c``."""
    return f"m-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
