"""The orchestrator: :class:`MeetingRun` holds one meeting's phases in order.

open the record → frame → rounds (peer review after round 1) → the chair's synthesis with
the challenger's review beside it → close the record. Every meeting ends with a stop reason
(completed, converged, budget, deadline, cancelled, error, or interrupted); this is the only module that
catches a meeting's exceptions, and a cancel that lands at any point still closes the record.

A meeting survives a restart (:mod:`board.room.meeting.resume`): a run whose state was restored from its
checkpoint (``s.resumed``) announces RESUMED with the phase it resumes at, skips what is finished (the
record is open, the framing, rounds, review, synthesis or objection that are stored) and keeps its clock:
the deadline counts from the meeting's start, not the resume. A run that Sabha suspends while stopping
(``s.suspended``) leaves the record running for the next start; a run whose lease another replica took
(:class:`~board.room.meeting.lease.MeetingTakenOver`) stops without writing anything more.
:meth:`MeetingRun.interrupt` ends one that waited too long to resume, as interrupted.

A run returns once its end is told to its displays; its bookkeeping subscribers (the decision in the members'
sessions, the review scheduled: :class:`board.room.subscribers.Bookkeeping`) finish after that, in the room's
background, and a durable mark (``meetings.bookkept_at``) says when they are done. The lease is kept until then.
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
from board.room.meeting.events import MeetingEventKind, MeetingResult, Stop, StopReason
from board.room.meeting.frame import run as frame
from board.room.meeting.lease import MeetingTakenOver
from board.room.meeting.limits import Limits
from board.room.meeting.minutes import close_record, open_record, reopen_record
from board.room.meeting.resume import age_s, resume_phase, save, settle_writes
from board.room.meeting.rounds import run_all
from board.room.meeting.state import MeetingState
from board.room.settings import MeetingSettings
from board.telemetry.spans import traced
from board.workspace.souls import AgentProfile

__all__ = ["MeetingRun"]

log = logging.getLogger("sabha.meeting")


async def _conclude(limits: Limits) -> Decision:
    """The chair's decision, and beside it the challenger's final objection (no call in sequence); each
    stored when it is written, neither asked again by a meeting resumed after it."""
    m, s = limits.m, limits.s

    async def drafted() -> Decision:
        if s.draft is None:
            s.draft = await decide(limits)
            await save(m, s)
        return s.draft

    async def objected() -> str | None:
        if not s.objected:
            s.objection, s.objected = await objection(limits), True
            await save(m, s)
        return s.objection

    challenging = not s.objected and bool(m.challenger) and m.challenger not in s.absent and limits.spare()
    s.pace.phase((s.draft is None) + challenging)  # the calls about to be asked side by side
    decision, said = await asyncio.gather(drafted(), objected())
    return await apply_objection(m, s, decision, said)


@dataclass(eq=False)
class MeetingRun:
    """One meeting: its context (fixed) and state (what it has said so far). ``await run.run()``.

    It is also the meeting's :class:`~board.agent.tools.SpendingLimit` (``over_budget`` / ``spend``),
    and reads what callers used to read off the old single class (``rounds``, ``models`` ...)."""

    m: MeetingContext
    s: MeetingState = field(default_factory=MeetingState)
    _closed: bool = field(default=False, init=False)  # its record closed: its end told, its bookkeeping to do

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
        """Open, frame and run the rounds (a resumed meeting: from its first unfinished phase); how they ended."""
        m, s = self.m, self.s
        if s.resumed:
            phase = resume_phase(s, m.settings)
            log.info("meeting %s: resumed at %s", m.id, phase)
            s.warnings.append(f"Sabha stopped during this meeting; it resumed at {phase} after the restart "
                              "(nothing finished before was asked again).")
            await m.emit(MeetingEventKind.RESUMED, s.current_round, role=m.chair.role, text=f"resumed at {phase}",
                         phase=phase)
        else:
            await open_record(m, s)
        if not s.agenda:
            if s.resumed:  # stopped before its framing was stored: maybe before its participants were
                await reopen_record(m)
            await frame(m, s, limits)
        stop = await run_all(limits)
        await settle_writes(m, s)  # every statement stored before the decision is asked for
        return stop

    @traced("meeting", lambda self: {"sabha.meeting.id": self.m.id, "sabha.meeting.resumed": self.s.resumed,
                                     "sabha.meeting.members": len(self.m.specialists)}, root=True)
    async def run(self) -> MeetingResult:
        """Hold the meeting to the end; always records a stop reason (unless Sabha suspends it while stopping,
        or another replica took it over: then the record stays running, for the next start or that replica)."""
        try:
            if self.m.lease is not None and not await self.m.lease.take():
                return self._gone("another replica holds its lease")
            return await self._run()
        except MeetingTakenOver as lost:
            return self._gone(str(lost))
        finally:
            self.s.recorded.set()  # no one waits for a record that will not come
            self.s.pace.end()  # its displays post freely now
            with contextlib.suppress(Exception):  # what the meeting emitted is told its displays before it returns
                await self.m.settled()
            if self.s.track is not None and not self.s.track.done():  # read for a synthesis that did not come
                self.s.track.cancel()
            await self._after()

    async def _after(self) -> None:
        """The meeting has returned or is about to: an ended one's bookkeeping finishes (in the room's background
        when it has one) and is marked done, then the lease goes; a suspended or lost one lets its lease go now
        (another replica need not wait for it)."""
        if not self._closed:
            await self._release()
        elif self.m.afterwards is not None:
            self.m.afterwards(self.m.id, self._bookkeep())
        else:
            await self._bookkeep()

    async def _bookkeep(self) -> None:
        """Until every subscriber (the bookkeeping ones too) has heard the end, then the durable mark that the end's
        bookkeeping ran (a start redoes it for a meeting without it: :mod:`board.room.subscribers`); the lease is
        kept until then, so no other replica redoes it meanwhile."""
        try:
            await self.m.herald.finished()
            await self.m.store.bookkept(self.m.id)
            log.info("meeting %s: its end's bookkeeping done", self.m.id)
        finally:
            await self._release()

    async def _release(self) -> None:
        if self.m.lease is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.m.lease.release())

    def _gone(self, why: str) -> MeetingResult:
        """This process stops working the meeting and writes nothing more (another replica runs it)."""
        log.warning("meeting %s: not run here any more (%s)", self.m.id, why)
        return MeetingResult(meeting_id=self.m.id, topic=self.m.topic, stop_reason=StopReason.INTERRUPTED,
                             decision=None, minutes="", cost_usd=self.s.spent_usd, rounds=len(self.s.rounds),
                             absent=dict(self.s.absent), error=why)

    async def _cancelled(self) -> None:
        """A cancel landed: /cancel (the record closes as cancelled) or Sabha stopping (it stays running)."""
        m, s = self.m, self.s
        if s.suspended:
            log.info("meeting %s: Sabha is stopping; the meeting stays running on record and resumes at the next "
                     "start (round %d)", m.id, s.current_round)
            return
        await asyncio.shield(close_record(m, s, StopReason.CANCELLED, None, "cancelled"))
        self._closed = True

    def _clock(self) -> None:
        """The deadline, measured from the meeting's start (a resumed meeting keeps its clock)."""
        m, s = self.m, self.s
        if s.resumed and s.started_at:
            s.deadline = time.monotonic() + m.settings.max_duration_s - age_s(s.started_at, m.clock.now())
        else:
            s.deadline = time.monotonic() + m.settings.max_duration_s
            s.started_at = datetime.now(UTC).isoformat(timespec="seconds")

    async def _run(self) -> MeetingResult:
        m, s, limits = self.m, self.s, self.limits
        self._clock()
        stop, error, decision = StopReason.COMPLETED, None, None
        try:
            # inside the try: a cancel (or /cancel) that lands while the meeting is being
            # recorded must still close it with a stop reason
            stop = await self._hold(limits)
        except (Stop, MeetingTakenOver, asyncio.CancelledError, Exception) as exc:  # noqa: BLE001 - _halted sorts them
            stop, error = await self._halted(exc)
        try:
            if any(s.rounds):  # nobody spoke: nothing to decide on, and nothing to invent
                if stop in (StopReason.BUDGET, StopReason.DEADLINE):
                    decision = best_effort(m, s, "")
                else:
                    decision = await _conclude(limits)
        except asyncio.CancelledError:
            await self._cancelled()
            raise
        result = await close_record(m, s, stop, decision, error)
        self._closed = True
        return result

    async def _halted(self, exc: BaseException) -> tuple[StopReason, str | None]:
        """How the rounds ended early (the stop reason and error); a cancel or a takeover goes on up."""
        m = self.m
        if isinstance(exc, Stop):
            log.info("meeting %s: stopping (%s: %s)", m.id, exc.reason, exc.detail)
            return exc.reason, exc.detail
        if isinstance(exc, MeetingTakenOver):
            raise exc
        if isinstance(exc, asyncio.CancelledError):
            await self._cancelled()
            raise exc
        log.error("meeting %s failed", m.id, exc_info=exc)  # record it, never leave a meeting open
        return StopReason.ERROR, f"{type(exc).__name__}: {exc}"

    async def interrupt(self, why: str) -> MeetingResult:
        """End a meeting that Sabha stopped during and that waited too long to resume: stop reason interrupted,
        the minutes say why, the ENDED event reaches its place. No model is asked anything."""
        self.s.warnings.append(why)
        log.warning("meeting %s: %s", self.m.id, why)
        try:
            result = await close_record(self.m, self.s, StopReason.INTERRUPTED, None, why)
            self._closed = True
            return result
        finally:
            self.s.recorded.set()
            self.s.pace.end()
            with contextlib.suppress(Exception):
                await self.m.settled()
            await self._after()
