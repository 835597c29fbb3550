"""Standing work: what the owner set to happen on a rhythm (``/every monday 9am brief``), and each run of it
exactly once.

An item (:class:`board.schedule.standing_store.StandingItem`) is read by :func:`board.schedule.recurrence.read_every`
and kept with the place it was set in (channel, chat, topic or thread). Each run is a scheduled_work row
(:class:`board.schedule.WorkKind.STANDING`, key ``standing:<item>:<due stamp>``) claimed before it runs, like a
reminder: a restart, a kill -9 at the due moment, a replica dying or two replicas never run it twice nor skip
it. When a run is claimed its handler (:meth:`StandingWork.run`) first schedules the next occurrence (the same
key twice makes one row, so a run done again after a crash adds nothing), then does the work:

- a **brief** (:mod:`board.schedule.brief`): what changed since the last one, a model only when something did;
- a **meeting** or a **roundtable**: what :class:`MeetingRuns` (``board.room.standing``) does for it: the
  meeting's caps, its cost estimate, the line that says it was skipped over the daily budget.

What a run wrote is kept (``standing_runs``) before it is sent, so a run done again after a crash sends the
same words without paying a model twice. A run found more than :attr:`StandingSettings.catch_up_s` past its
moment (Sabha was down) is not done late: one line in its place says it was missed and when the next is.

Pause, resume and remove are the owner's (the commands check it); a pause cancels the pending run, a resume
schedules the next one from now.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from board.clock import Clock
from board.envelope import Reply
from board.schedule.brief import BriefWriter, brief_session, compose_brief, gather_facts
from board.schedule.dates import describe, span
from board.schedule.recurrence import StandingKind, read_every
from board.schedule.schedule import Schedule
from board.schedule.standing_store import ItemStatus, RunRecord, StandingItem, StandingStore
from board.schedule.work import OPEN_STATUSES, NewWork, Place, ScheduledWork, WorkKind, WorkStatus, stamp

__all__ = ["MeetingRuns", "StandingProblem", "StandingSettings", "StandingWork", "run_key"]

log = logging.getLogger("sabha.standing")


class MeetingRuns(Protocol):
    """What runs a standing meeting or roundtable (``board.room.standing.StandingMeetings``): what to post at
    ``place`` (the summary or decision, or the one line saying it was skipped), or None when the meeting's
    own views posted everything; and what an item's runs cost this month."""

    async def run(self, kind: str, topic: str, place: Place, *, item_id: int) -> Reply | None: ...

    async def month_cost(self, item_id: int) -> float: ...


class StandingProblem(ValueError):
    """Nothing was changed; ``str()`` says why and what to do (an unknown item, one already paused)."""


@dataclass(frozen=True)
class StandingSettings:
    """``schedule.catch_up_s``: a run missed while Sabha was down is done on start if it is at most this late,
    else reported as missed. ``daily_budget``: what a brief names as the budget (``budget.daily_usd``)."""

    catch_up_s: float = 3600.0
    daily_budget: float | None = None


def run_key(item_id: int, due_at: datetime) -> str:
    """The idempotency key of an item's run due at ``due_at``."""
    return f"standing:{item_id}:{stamp(due_at)}"


class StandingWork:
    """The standing items of one board; see the module docstring."""

    def __init__(self, schedule: Schedule, clock: Clock, writer: BriefWriter, *, zone: str = "UTC",
                 meetings: MeetingRuns | None = None, settings: StandingSettings | None = None,
                 voice: Callable[[str], tuple[str, str] | None] | None = None) -> None:
        self.schedule = schedule
        self.store = StandingStore(schedule.store.db)
        self.clock = clock
        self.writer = writer
        self.zone = zone
        self.meetings = meetings
        self.settings = settings or StandingSettings()
        self._voice = voice or (lambda _role: None)
        schedule.register(WorkKind.STANDING, self.run)
        schedule.at_start(self.sync)

    # -- the owner's verbs ------------------------------------------------------------------------

    async def add(self, phrase: str, place: Place, by: str) -> StandingItem:
        """Read ``phrase`` (what follows ``/every``), store the item and schedule its first run; a phrase that
        cannot be read raises :class:`board.schedule.recurrence.RecurrenceProblem` and nothing is stored."""
        now = self.clock.now()
        asked = read_every(phrase, now, self.zone)
        if asked.kind is not StandingKind.BRIEF and self.meetings is None:
            raise StandingProblem(f"Standing {asked.kind.value}s are not available in this Sabha; a brief is "
                                  "(e.g. /every monday 9am brief).")
        item = await self.store.add(kind=asked.kind, topic=asked.topic, recurrence=asked.recurrence,
                                    phrase=" ".join(phrase.split()), place=place, created_by=by, now=now)
        first = asked.recurrence.next_after(now)
        await self._schedule(item, first)
        log.info("standing: #%d %s set in %s by %s; first run %s", item.id, item.title(), place, by,
                 first.isoformat(timespec="seconds"))
        return (await self.store.get(item.id)) or item

    async def _known(self, item_id: int) -> StandingItem:
        item = await self.store.get(item_id)
        if item is None or item.status is ItemStatus.REMOVED:
            raise StandingProblem(f"There is no standing item #{item_id}; /standing lists them.")
        return item

    async def pause(self, item_id: int) -> StandingItem:
        """Pause an active item: its pending run is cancelled."""
        item = await self._known(item_id)
        paused = await self.store.set_status(item_id, ItemStatus.PAUSED, was=(ItemStatus.ACTIVE,),
                                             now=self.clock.now())
        if paused is None:
            raise StandingProblem(f"Standing item #{item_id} is {item.status.value} already; /standing resume "
                                  f"{item_id} starts it again.")
        await self._cancel_runs(item_id, "paused")
        log.info("standing: #%d paused", item_id)
        return paused

    async def resume(self, item_id: int) -> StandingItem:
        """Start a paused item again: its next run from now is scheduled."""
        item = await self._known(item_id)
        resumed = await self.store.set_status(item_id, ItemStatus.ACTIVE, was=(ItemStatus.PAUSED,),
                                              now=self.clock.now())
        if resumed is None:
            raise StandingProblem(f"Standing item #{item_id} is {item.status.value}, not paused.")
        await self._schedule(resumed, resumed.recurrence.next_after(self.clock.now()))
        log.info("standing: #%d resumed", item_id)
        return (await self.store.get(item_id)) or resumed

    async def remove(self, item_id: int) -> StandingItem:
        """Remove an item (kept in the db as removed, with its runs): its pending run is cancelled."""
        await self._known(item_id)
        removed = await self.store.set_status(item_id, ItemStatus.REMOVED,
                                              was=(ItemStatus.ACTIVE, ItemStatus.PAUSED), now=self.clock.now())
        if removed is None:
            raise StandingProblem(f"There is no standing item #{item_id}; /standing lists them.")
        await self._cancel_runs(item_id, "removed")
        log.info("standing: #%d removed", item_id)
        return removed

    async def items(self, place: tuple[str, str] | None = None) -> list[StandingItem]:
        return await self.store.items(place=place)

    async def month_cost(self, item: StandingItem) -> float:
        """What ``item``'s runs cost this month: its briefs' model calls, and its meetings'."""
        now = self.clock.now()
        row = await self.store.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS spent FROM llm_calls WHERE session_key = ? AND ts >= ?",
            (brief_session(item.id), f"{now:%Y-%m}-01"))
        spent = float(row["spent"]) if row is not None else 0.0
        if item.kind is not StandingKind.BRIEF and self.meetings is not None:
            spent += await self.meetings.month_cost(item.id)
        return spent

    # -- scheduling -----------------------------------------------------------------------------

    async def _schedule(self, item: StandingItem, due: datetime) -> ScheduledWork:
        """The run of ``item`` due at ``due`` (the same key twice makes one row; a cancelled one is armed again)."""
        row = await self.schedule.add(NewWork(WorkKind.STANDING, run_key(item.id, due), due, item.place,
                                              {"item": item.id}))
        if row.status is WorkStatus.CANCELLED:
            row = await self.schedule.reschedule(row.key, due) or row
        await self.store.move(item.id, due, self.clock.now())
        return row

    async def _cancel_runs(self, item_id: int, why: str) -> None:
        for row in await self.schedule.store.open_rows(kind=WorkKind.STANDING, limit=10_000):
            if row.payload.get("item") == item_id:
                await self.schedule.cancel(row.key, why)

    async def sync(self) -> int:
        """At start: every active item has its next run scheduled (a crash between storing an item and
        scheduling it left none); how many were scheduled."""
        open_items = {row.payload.get("item") for row in
                      await self.schedule.store.open_rows(kind=WorkKind.STANDING, limit=10_000)
                      if row.status in OPEN_STATUSES}
        count = 0
        for item in await self.store.items():
            if item.status is not ItemStatus.ACTIVE or item.id in open_items:
                continue
            due = item.next_at or item.recurrence.next_after(item.created_at)
            row = await self._schedule(item, due)
            if row.status not in OPEN_STATUSES:  # that run happened: the one after it
                await self._schedule(item, item.recurrence.next_after(max(due, self.clock.now())))
            count += 1
        if count:
            log.info("standing: %d item(s) had no run scheduled; scheduled now", count)
        return count

    # -- a run ----------------------------------------------------------------------------------

    def _reply(self, work: ScheduledWork, text: str) -> Reply:
        name, emoji = self._voice("general") or ("Sabha", "")
        return work.reply(text, role="general", name=name, emoji=emoji)

    async def run(self, work: ScheduledWork) -> Reply | None:
        """Run one claimed occurrence (the handler of :class:`WorkKind.STANDING` rows)."""
        item = await self.store.get(int(work.payload.get("item", 0)))
        if item is None or item.status is not ItemStatus.ACTIVE:
            log.info("standing: %s not run: its item is %s", work.key, "gone" if item is None else item.status.value)
            return None
        now = self.clock.now()
        log.info("standing: #%d run due %s claimed (%s)", item.id, work.due_at.isoformat(timespec="seconds"), work.key)
        following = item.recurrence.next_after(max(work.due_at, now))
        await self._schedule(item, following)
        done = await self.store.run_of(work.key)
        if done is not None:  # done again after a crash: what the first try wrote, unpaid
            log.info("standing: %s runs again after a stop; sending what it wrote", work.key)
            return self._reply(work, done.text) if done.text else None
        zone = item.recurrence.tz()
        late = now - work.due_at
        if late > timedelta(seconds=self.settings.catch_up_s):
            text = (f"Missed: {item.title()} was due {describe(work.due_at, zone)} while Sabha was not running "
                    f"({span(late)} ago, more than schedule.catch_up_s); the next run is {describe(following, zone)}.")
            log.warning("standing: #%d missed its run due %s (%s late)", item.id, work.due_at.isoformat(), span(late))
            await self.store.record_run(RunRecord(work.key, item.id, work.due_at, "missed", text, {}, 0), now)
            return self._reply(work, text)
        if item.kind is StandingKind.BRIEF:
            return await self._brief(item, work, now)
        return await self._meeting(item, work, now)

    async def _brief(self, item: StandingItem, work: ScheduledWork, now: datetime) -> Reply:
        zone = item.recurrence.tz()
        facts = await gather_facts(self.store.db, now, zone, daily_budget=self.settings.daily_budget)
        last = await self.store.previous(item.id, work.due_at)
        brief = await compose_brief(item.id, facts, last.facts if last else None, last.due_at if last else None,
                                    self.writer, zone)
        run = await self.store.record_run(RunRecord(work.key, item.id, work.due_at,
                                                    "wrote" if brief.changed else "nothing_new", brief.text,
                                                    brief.facts, brief.model_calls), now)
        log.info("standing: #%d brief due %s: %s (%d model call%s)", item.id, work.due_at.isoformat(),
                 "something changed" if brief.changed else "nothing new", brief.model_calls,
                 "" if brief.model_calls == 1 else "s")
        return self._reply(work, run.text)

    async def _meeting(self, item: StandingItem, work: ScheduledWork, now: datetime) -> Reply | None:
        if self.meetings is None:
            text = f"Standing {item.kind.value}s are not available in this Sabha; #{item.id} did not run."
            await self.store.record_run(RunRecord(work.key, item.id, work.due_at, "skipped", text, {}, 0), now)
            return self._reply(work, text)
        reply = await self.meetings.run(item.kind.value, item.topic, item.place, item_id=item.id)
        await self.store.record_run(RunRecord(work.key, item.id, work.due_at, "ran",
                                              reply.text if reply is not None else "", {}, 0), now)
        return reply
