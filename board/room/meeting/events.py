"""What a meeting reports and how it ends: values only, no I/O.

:class:`MeetingEvent` is what subscribers (channels, the terminal) see while a meeting
runs; :class:`MeetingResult` is what the caller gets back; :class:`StopReason` says why it
ended. :class:`Stop` is raised inside the package to end a meeting early (a deadline, a
budget, no quorum); only :mod:`board.room.meeting.run` catches it. :class:`ToolEvidence` is one
outside tool result a member used (:mod:`board.room.meeting.cited` records them).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
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
    "ToolEvidence",
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
    WRAPPED = "wrapped"  # /wrap: ended after the round in progress and went to the decision
    INTERRUPTED = "interrupted"  # stopped with Sabha and too old to resume (board.meetings.resume_within_s)


class MeetingEventKind(StrEnum):
    """What a :class:`MeetingEvent` reports."""

    STARTED = "started"
    FRAMED = "framed"
    SPEAKING = "speaking"  # a member started on its statement (channels show who is speaking)
    AGENT_SPOKE = "agent_spoke"
    ABSENT = "absent"
    DISAGREEMENT = "disagreement"
    CONSENSUS = "consensus"
    ROUND_DONE = "round_done"
    PEER_REVIEW = "peer_review"
    OBJECTION = "objection"
    DECISION = "decision"
    ENDED = "ended"
    CONTRIBUTION = "contribution"  # someone at the table wrote into the meeting (board.room.table)
    CONTROL = "control"  # paused, resumed, wrapping, extended (data: kind, by)
    RESUMED = "resumed"  # the meeting goes on after a restart (data: phase); finished phases are not re-emitted


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


@dataclass(frozen=True)
class ToolEvidence:
    """One outside tool result a member used in a meeting."""

    label: str  # server.tool, as it is cited: [git.git_log]
    arguments: str  # the arguments as the model sent them (compact JSON)
    ts: str  # when the call finished (UTC ISO)
    role: str
    round: int
    cited: bool  # the statement cites it as [label]
    excerpt: str = ""  # the start of the result, one harmless line

    @property
    def cite(self) -> str:
        """``[git.git_log]``."""
        return f"[{self.label}]"

    def data(self) -> dict[str, Any]:
        """As the ``evidence`` meeting event stores it."""
        return asdict(self)
