"""The orchestrator: :class:`MeetingRun` holds one meeting's phases in order.

open the record → frame → rounds (peer review after round 1) → the chair's synthesis with
the challenger's review beside it → close the record. Every meeting ends with a stop reason
(completed, converged, budget, deadline, cancelled or error); this is the only module that
catches a meeting's exceptions, and a cancel that lands at any point still closes the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from board.room.decision import Decision
from board.room.meeting.challenge import apply as apply_objection
from board.room.meeting.challenge import objection
from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import dissenters, models_differ, present
from board.room.meeting.decide import best_effort
from board.room.meeting.decide import run as decide
from board.room.meeting.events import MeetingResult, Stop, StopReason
from board.room.meeting.frame import run as frame
from board.room.meeting.limits import Limits
from board.room.meeting.minutes import close_record, open_record
from board.room.meeting.rounds import run_all
from board.room.meeting.state import MeetingState
from board.room.settings import MeetingSettings
from board.workspace.souls import AgentProfile

__all__ = ["MeetingRun"]

log = logging.getLogger("sabha.meeting")


async def _conclude(limits: Limits) -> Decision:
    """The chair's decision, and beside it the challenger's final objection (no call in sequence)."""
    decision, said = await asyncio.gather(decide(limits), objection(limits))
    return await apply_objection(limits.m, limits.s, decision, said)


@dataclass(eq=False)
class MeetingRun:
    """One meeting: its context (fixed) and state (what it has said so far). ``await run.run()``.

    It is also the meeting's :class:`~board.agent.tools.SpendingLimit` (``over_budget`` / ``spend``),
    and reads what callers used to read off the old single class (``rounds``, ``models`` ...)."""

    m: MeetingContext
    s: MeetingState = field(default_factory=MeetingState)

    @property
    def limits(self) -> Limits:
        """The meeting's deadline and budget."""
        return Limits(self.m, self.s)

    @property
    def id(self) -> str:
        """The meeting id."""
        return self.m.id

    @property
    def topic(self) -> str:
        """What the board decides."""
        return self.m.topic

    @property
    def specialists(self) -> Sequence[AgentProfile]:
        """Who speaks in the rounds."""
        return self.m.specialists

    @property
    def settings(self) -> MeetingSettings:
        """Its limits and options."""
        return self.m.settings

    @property
    def models(self) -> dict[str, str]:
        """role -> the model it was given."""
        return self.m.models

    @property
    def warnings(self) -> list[str]:
        """Shown in the minutes (the board adds its own before the start)."""
        return self.s.warnings

    @property
    def rounds(self) -> list[dict[str, str]]:
        """Statements by round, roster order."""
        return self.s.rounds

    @property
    def spoke_with(self) -> dict[str, str]:
        """role -> the model that answered."""
        return self.s.spoke_with

    @property
    def challenge_round(self) -> int | None:
        """The case-against round, if any."""
        return self.s.challenge_round

    @property
    def spent_usd(self) -> float:
        """What the meeting has cost so far."""
        return self.s.spent_usd

    @spent_usd.setter
    def spent_usd(self, usd: float) -> None:
        self.s.spent_usd = usd

    def over_budget(self, pending_usd: float = 0.0) -> str | None:
        """Why no further model call may start (``pending_usd``: spent by the exchange in progress)."""
        return self.limits.over_budget(pending_usd)

    def spend(self, usd: float) -> None:
        """Cost made inside an exchange that its own cost does not include (consultations)."""
        self.limits.spend(usd)

    def present(self) -> list[AgentProfile]:
        """Specialists still in the meeting."""
        return present(self.m, self.s)

    def dissenters(self) -> dict[str, str]:
        """Members who must appear in the dissent -> what they said."""
        return dissenters(self.m, self.s)

    def models_differ(self) -> bool:
        """True when members speak with different models."""
        return models_differ(self.m, self.s)

    async def recorded(self, timeout: float = 10.0) -> None:
        """Until the meeting is on record (its row and participants; or it ended before that), at most
        ``timeout`` s: a reply saying it started is then true for every listing, on every replica (a
        PostgreSQL pool may run a later statement before the meeting's own first insert)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.s.recorded.wait(), timeout)

    async def _hold(self, limits: Limits) -> StopReason:
        """Open, frame and run the rounds; how they ended."""
        await open_record(self.m, self.s)
        await frame(self.m, self.s, limits)
        return await run_all(limits)

    async def run(self) -> MeetingResult:
        """Hold the meeting to the end; always records a stop reason."""
        try:
            return await self._run()
        finally:
            self.s.recorded.set()  # no one waits for a record that will not come

    async def _run(self) -> MeetingResult:
        m, s, limits = self.m, self.s, self.limits
        s.deadline = time.monotonic() + m.settings.max_duration_s
        s.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        stop, error, decision = StopReason.COMPLETED, None, None
        try:
            # inside the try: a cancel (or /cancel) that lands while the meeting is being
            # recorded must still close it with a stop reason
            stop = await self._hold(limits)
        except Stop as halt:
            stop, error = halt.reason, halt.detail
            log.info("meeting %s: stopping (%s: %s)", m.id, halt.reason, halt.detail)
        except asyncio.CancelledError:
            await asyncio.shield(close_record(m, s, StopReason.CANCELLED, None, "cancelled"))
            raise
        except Exception as exc:  # record it, never leave a meeting open
            log.exception("meeting %s failed", m.id)
            stop, error = StopReason.ERROR, f"{type(exc).__name__}: {exc}"
        try:
            if any(s.rounds):  # nobody spoke: nothing to decide on, and nothing to invent
                if stop in (StopReason.BUDGET, StopReason.DEADLINE):
                    decision = best_effort(m, s, "")
                else:
                    decision = await _conclude(limits)
        except asyncio.CancelledError:
            await asyncio.shield(close_record(m, s, StopReason.CANCELLED, None, "cancelled"))
            raise
        return await close_record(m, s, stop, decision, error)
