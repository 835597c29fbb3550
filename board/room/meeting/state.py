"""What a meeting has said and decided so far: :class:`MeetingState` (mutable).

Only the phases of this package write it. Each round appends one dict of statements and
one of stances (roster order); the scoreboard appends disagreements and consensus; the
limits add what was spent; the members' outside tool calls are counted and their results kept as evidence.
Everything here but ``recorded``, ``deadline``, the writes (``saving``, ``queued``, ``writes``, ``writer``,
``write_error``), ``track``, ``pace`` and ``suspended`` is kept in the meeting's checkpoint when a phase ends
(:mod:`board.room.meeting.resume`), so a meeting resumed after a restart has exactly this state back.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from board.room.decision import Decision, Stance
from board.room.meeting.events import ToolEvidence
from board.room.meeting.pace import Pace
from board.room.table import Contribution

__all__ = ["MeetingState"]


@dataclass(kw_only=True, eq=False)
class MeetingState:
    """Everything a meeting accumulates while it runs."""

    #: set once the meeting and its participants are on record (or it ended without getting there)
    recorded: asyncio.Event = field(default_factory=asyncio.Event)
    agenda: str = ""
    questions: dict[str, str] = field(default_factory=dict)
    rounds: list[dict[str, str]] = field(default_factory=list)
    stances: list[dict[str, Stance | None]] = field(default_factory=list)
    challenge_round: int | None = None  # asked for the case against
    peer_ranking: list[dict[str, Any]] = field(default_factory=list)
    spoke_with: dict[str, str] = field(default_factory=dict)  # role -> model that answered
    absent: dict[str, str] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    consensus: list[dict[str, Any]] = field(default_factory=list)
    spent_usd: float = 0.0
    current_round: int = 0
    warnings: list[str] = field(default_factory=list)  # shown in the minutes, e.g. an unenforced budget
    deadline: float = 0.0  # time.monotonic() after which no call starts
    started_at: str = ""
    tool_calls: int = 0  # outside (MCP) tool calls made so far (capped by ``settings.max_tool_calls``)
    cited: list[ToolEvidence] = field(default_factory=list)  # outside tool results used, in order
    # the owner at the table (board.room.table)
    contributions: list[Contribution] = field(default_factory=list)  # read so far, in the order they came
    extra_rounds: int = 0  # added by /extend
    wrap: bool = False  # /wrap: end after the round in progress
    # a meeting resumed after a restart (board.room.meeting.run): what its unfinished round already said
    resumed: bool = False
    partial: dict[str, tuple[str, Stance | None]] = field(default_factory=dict)
    # what a resumed meeting must not ask again (board.room.meeting.resume keeps them in its checkpoint)
    reviewed: bool = False  # the peer review ran (or was not due)
    draft: Decision | None = None  # the chair's synthesis, once it was written
    objected: bool = False  # the challenger's review ran; ``objection`` is what it said (None: nothing)
    objection: str | None = None
    saving: asyncio.Lock = field(default_factory=asyncio.Lock)  # one checkpoint write at a time, in order
    # the meeting's writes (board.room.meeting.resume): queued in order, stored by one writer task
    queued: list[Any] = field(default_factory=list)  # waiting for the writer
    writes: list[asyncio.Future[bool]] = field(default_factory=list)  # not looked at yet (resume.check_writes)
    writer: asyncio.Task[None] | None = None
    write_error: Exception | None = None  # a write failed: nothing after it is stored
    #: the members' track records for the synthesis, read while the chair frames (board.room.meeting.decide)
    track: asyncio.Task[str] | None = None
    #: whether it waits on its models now: when its displays post (board.room.meeting.pace)
    pace: Pace = field(default_factory=Pace)
    suspended: bool = False  # Sabha is stopping: the meeting stays running on record and resumes at the next start
