"""Board meetings: the chair frames, specialists speak in rounds, the chair decides.

This package replaced the former ``board/room/meeting.py`` module (one class that did every
phase); its names stay available here, so callers are unchanged. One module per phase,
around one small orchestrator:

- :mod:`~board.room.meeting.events`: StopReason, MeetingEvent(Kind), MeetingResult, Stop (values only)
- :mod:`~board.room.meeting.context`: MeetingContext (frozen): who, how they speak, where it is recorded
- :mod:`~board.room.meeting.state`: MeetingState (mutable): what has been said so far
- :mod:`~board.room.meeting.limits`: deadline and budget, and the one way a meeting calls a model
- :mod:`~board.room.meeting.scoreboard`: disagreements and consensus, stated in a statement or by tool
- :mod:`~board.room.meeting.frame`: phase 1, the chair's agenda and questions
- :mod:`~board.room.meeting.rounds`: phase 2, the rounds and the stances
- :mod:`~board.room.meeting.review`: phase 2b, the anonymised peer review of round 1
- :mod:`~board.room.meeting.convergence`: pure reads: unanimity, convergence, consensus that holds, dissenters
- :mod:`~board.room.meeting.decide`: phase 3, the chair's synthesis, validated, dissent restored, best effort
- :mod:`~board.room.meeting.challenge`: phase 4, the challenger's final objection, beside the synthesis
- :mod:`~board.room.meeting.cited`: outside (MCP) tool results the members used: capped, recorded as evidence
- :mod:`~board.room.meeting.minutes`: the record opened and closed, the minutes rendered
- :mod:`~board.room.meeting.run`: MeetingRun, the phases in order and the stop reason
- :mod:`~board.room.meeting.resume`: the checkpoint of each finished phase, and where a restarted meeting resumes
- :mod:`~board.room.meeting.lease`: with replicas, the lease a meeting runs under and the fence of its writes
- :mod:`~board.room.meeting.takeover`: the daemon's loop: resume at start, take over a dead replica's meetings

Flow: the chair frames an agenda and a question per specialist; round 1, every specialist
answers independently (in parallel by default); rounds 2..N, each sees the agenda again, its
own earlier statements in full and the others' latest statements (abridged at sentence
boundaries that keep the conclusion and the stance) and must answer named points, stating
disagreements and consensus in the same answer. Every statement ends with a structured
:class:`~board.room.decision.Stance`; a statement without a valid one is asked for it once.
Convergence is computed from the members' own stances, never from a consensus someone logged
on others' behalf. When round 1 is unanimous, round 2 asks each member for the strongest case
against. With ``peer_review`` each member ranks the others' anonymised round-1 statements.

The decision is validated (see :mod:`board.room.decision`): every member whose final stance
is oppose, or who logged a disagreement of severity >= 3 and did not come round to support,
must be in the dissent with their own reasoning; if the chair still leaves one out, Sabha
adds it from their own words and says so. The roster's challenger reviews the record while
the chair writes the decision and may add a final objection, kept verbatim.

Limits come from :class:`MeetingSettings`: turns per agent, wall-clock duration and a budget
in USD checked before every model call; a meeting a stranger called is also held to their
daily limits (:mod:`board.spending.allowance`). A specialist that fails or times out is recorded absent
and the meeting goes on while a quorum is present. Every meeting ends with a ``stop_reason``.
Progress is published as :class:`MeetingEvent` objects to any subscriber.
"""

from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import abridge
from board.room.meeting.events import (
    MeetingEvent,
    MeetingEventKind,
    MeetingResult,
    StopReason,
    Subscriber,
    new_meeting_id,
)
from board.room.meeting.run import MeetingRun
from board.room.meeting.scoreboard import meeting_tools
from board.room.settings import DEFAULT_CHALLENGERS, MeetingSettings

__all__ = [
    "DEFAULT_CHALLENGERS",
    "MeetingContext",
    "MeetingEvent",
    "MeetingEventKind",
    "MeetingResult",
    "MeetingRun",
    "MeetingSettings",
    "StopReason",
    "Subscriber",
    "abridge",
    "meeting_tools",
    "new_meeting_id",
]
