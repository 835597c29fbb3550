"""Action items' due dates and their reminders.

A decision's action items carry a due date as written ("by 2026-12-15", "in two weeks",
"friday"); once the decision is out, :meth:`Reminders.decided` reads each against the board's
clock (:mod:`board.schedule.dates`, in ``board.timezone``) and schedules one reminder per item
(:class:`board.schedule.WorkKind.REMINDER`, key ``reminder:action:<id>``: scheduling it again
changes nothing) in the place where the meeting ran: same channel, chat and Telegram topic.
At the due moment the owner is nudged there once (:meth:`Reminders.remind`): "⏰ Your reminder: the
Chair owes action #1 “...”, due ..." (:mod:`board.decisions.wording`: the owner is the person, the item's
role is who owes it; a reminder sent late says by how much), with the buttons Done (``/done <id>``) and
Snooze (``/snooze <id>``) and no second copy of them in the text: a channel without buttons (the
terminal, a WhatsApp template) shows them as the commands they send. ``/due`` moves the date and the reminder
with it, ``/snooze`` moves it by a length of time (a day by default), ``/done`` closes the item
and cancels its reminder. An item closed (or dropped by a veto) before its moment is not
reminded: the handler finds it closed and sends nothing.

:meth:`Reminders.sync` (at start) schedules what a crash between recording a decision and
scheduling its reminders left unscheduled, reading due dates relative to when the items were
recorded; a reminder already scheduled (or sent) is not touched.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Protocol

from board.clock import Clock, utc
from board.decisions.actions import ActionRow
from board.decisions.wording import Voice, due_words, owes
from board.envelope import Button, Reply
from board.schedule import NewWork, Place, Schedule, ScheduledWork, WorkKind, WorkStatus
from board.schedule.dates import DateProblem, When, describe, parse_duration, parse_when
from board.schedule.report import TERMINAL
from board.schedule.work import parse_stamp, stamp

__all__ = ["DEFAULT_SNOOZE", "ActionItems", "ActionProblem", "Changed", "Reminders", "reminder_key"]

log = logging.getLogger("sabha.reminders")

#: ``/snooze <n>`` without a length: a day.
DEFAULT_SNOOZE = timedelta(days=1)

class ActionItems(Protocol):
    """Where action items are kept (:class:`board.room.store.MeetingStore`)."""

    async def actions(self, *, include_done: bool = False, place: tuple[str, str] | None = None,
                      limit: int = 50, meeting_id: str | None = None, action_id: int | None = None,
                      ) -> list[ActionRow]: ...

    async def action(self, action_id: int, *, place: tuple[str, str] | None = None) -> ActionRow | None: ...

    async def set_due(self, action_id: int, due_at: str | None, due_text: str | None) -> bool: ...

    async def close_action(self, action_id: int, *, by: str | None = None,
                           place: tuple[str, str] | None = None) -> ActionRow | None: ...


class ActionProblem(ValueError):
    """Nothing was changed; ``str()`` says why and what to do (an unknown item, a closed one, a bad date)."""


@dataclass(frozen=True)
class Changed:
    """An item whose due date was set or moved: the row after the change and the new moment."""

    row: ActionRow
    when: When


def reminder_key(action_id: int) -> str:
    """The idempotency key of an action item's reminder."""
    return f"reminder:action:{action_id}"


class Reminders:
    """Due dates and reminders of action items; see the module docstring."""

    def __init__(self, store: ActionItems, schedule: Schedule, clock: Clock, zone: tzinfo = UTC, *,
                 voice: Voice | None = None) -> None:
        self.store = store
        self.schedule = schedule
        self.clock = clock
        self.zone = zone
        self.voice = voice
        schedule.register(WorkKind.REMINDER, self.remind)
        schedule.after_send(WorkKind.REMINDER, self.rearm)

    # -- scheduling ----------------------------------------------------------------------------

    def _place(self, row: ActionRow) -> Place:
        return Place(row.channel or "console", row.chat_id or "console", row.thread_id)

    def who(self, role: str) -> str:
        """Who owes an item of ``role``, in the board's words (``the Chair``, ``Research``)."""
        return owes(role, self.voice)

    def goes_to(self, row: ActionRow) -> str | None:
        """Where ``row``'s reminder goes, in words, when that is the terminal (only ``sabha chat``
        sends those); None for a chat a channel reaches."""
        if self._place(row).channel != TERMINAL:
            return None
        return "the terminal: its meeting was held there, so the reminder shows when `sabha chat` runs"

    async def arm(self, row: ActionRow) -> ScheduledWork | None:
        """Schedule the reminder of open item ``row`` at its due date (nothing without one)."""
        if row.due_at is None or row.status != "open":
            return None
        return await self.schedule.add(NewWork(WorkKind.REMINDER, reminder_key(row.id), parse_stamp(row.due_at),
                                               self._place(row), {"action": row.id}))

    async def _read_due(self, row: ActionRow, now: datetime) -> ActionRow:
        """``row`` with its written due date read at ``now`` and stored (as it was when it has none,
        or one that cannot be read: logged; ``/due`` sets it)."""
        if row.due_at is not None or not row.due_text:
            return row
        try:
            when = parse_when(row.due_text, now, self.zone)
        except DateProblem as problem:
            log.warning("action #%d (%s): its due date %r is not one I can read, so it has no reminder (%s); "
                        "the owner can set one with /due %d <when>", row.id, row.meeting_id, row.due_text, problem,
                        row.id)
            return row
        await self.store.set_due(row.id, stamp(when.at), row.due_text)
        log.info("action #%d is due %s (%r)", row.id, when.said, row.due_text)
        return _with_due(row, when.at, row.due_text)

    async def decided(self, meeting_id: str) -> list[ActionRow]:
        """A decision was recorded: read its items' due dates now and schedule their reminders. The items are
        dated side by side (each its own row and its own reminder key): their writes are handed to the db together,
        not one round trip after another; a meeting waits for this before it returns (``ToldFirst``)."""
        now = self.clock.now()

        async def dated(row: ActionRow) -> ActionRow:
            row = await self._read_due(row, now)
            await self.arm(row)
            return row

        return list(await asyncio.gather(*(dated(row) for row in await self.store.actions(meeting_id=meeting_id,
                                                                                          limit=100))))

    async def rearm(self, work: ScheduledWork) -> bool:
        """After reminder ``work`` went out (or may have): when its item was given a later date while
        it was being sent (a row being sent cannot move), its reminder is armed again there; True if so."""
        row = await self.store.action(int(work.payload.get("action", 0)))
        if row is None or row.status != "open" or row.due_at is None or parse_stamp(row.due_at) <= work.due_at:
            return False
        if await self.schedule.reschedule(reminder_key(row.id), parse_stamp(row.due_at)) is None:
            return False
        log.info("action #%d: its date moved while its reminder was being sent; reminding again %s", row.id,
                 describe(parse_stamp(row.due_at), self.zone))
        return True

    async def sync(self) -> int:
        """At start: every open item with a due date has its reminder (added if missing); how many were added."""
        added = 0
        for row in await self.store.actions(limit=100_000):
            if row.due_at is None and row.due_text:
                row = await self._read_due(row, _created(row) or self.clock.now())
            if row.due_at is None:
                continue
            existing = await self.schedule.get(reminder_key(row.id))
            if existing is None:
                await self.arm(row)
                added += 1
            elif existing.status == WorkStatus.DONE:  # moved while it was being sent, then a stop
                added += await self.rearm(existing)
        if added:
            log.info("reminders: %d action item(s) had no reminder yet; scheduled", added)
        return added

    # -- changing -------------------------------------------------------------------------------

    async def _open(self, action_id: int, place: tuple[str, str] | None) -> ActionRow:
        row = await self.store.action(action_id, place=place)
        if row is None:
            raise ActionProblem(f"No open action item #{action_id}{' here' if place else ''}; /actions lists them.")
        if row.status != "open":
            raise ActionProblem(f"No open action item #{action_id}: it is {row.status} already; nothing changed.")
        return row

    async def set_due(self, action_id: int, text: str, *, place: tuple[str, str] | None = None) -> Changed:
        """``/due <n> <when>``: give item ``action_id`` a due date and move its reminder there."""
        row = await self._open(action_id, place)
        try:
            when = parse_when(text, self.clock.now(), self.zone)
        except DateProblem as problem:
            raise ActionProblem(f"{problem} Nothing changed.") from problem
        return await self._move(row, when, text.strip())

    async def snooze(self, action_id: int, text: str = "", *, place: tuple[str, str] | None = None) -> Changed:
        """``/snooze <n> [length]``: the item's reminder again after ``text`` (a day by default), from now."""
        row = await self._open(action_id, place)
        try:
            length = parse_duration(text) if text.strip() else DEFAULT_SNOOZE
        except DateProblem as problem:
            raise ActionProblem(f"{problem}. Nothing changed.") from problem
        at = self.clock.now() + length
        return await self._move(row, When(at, describe(at, self.zone)), f"snoozed {_length(length)}")

    async def _move(self, row: ActionRow, when: When, text: str) -> Changed:
        if not await self.store.set_due(row.id, stamp(when.at), text):
            raise ActionProblem(f"Action item #{row.id} was closed meanwhile; nothing changed.")
        row = _with_due(row, when.at, text)
        moved = await self.schedule.reschedule(reminder_key(row.id), when.at)
        if moved is None and await self.schedule.get(reminder_key(row.id)) is None:
            await self.arm(row)
        elif moved is None:  # being sent this very moment: that one may arrive; :meth:`rearm` sets the next
            log.warning("action #%d: its reminder was being sent as the date moved; it may arrive now, and it is "
                        "armed again for the new date once that send is over", row.id)
        log.info("action #%d is now due %s", row.id, when.said)
        return Changed(row, when)

    async def done(self, action_id: int, *, by: str | None, place: tuple[str, str] | None = None) -> ActionRow:
        """``/done <n>``: close item ``action_id`` and cancel its reminder."""
        row = await self._open(action_id, place)
        closed = await self.store.close_action(action_id, by=by, place=place)
        if closed is None:
            raise ActionProblem(f"Action item #{action_id} was closed meanwhile; nothing changed.")
        await self.schedule.cancel(reminder_key(action_id), "the item is done")
        return row

    async def forget(self, action_ids: tuple[int, ...], why: str) -> None:
        """Items closed elsewhere (a veto dropped them): their reminders are cancelled."""
        for action_id in action_ids:
            await self.schedule.cancel(reminder_key(action_id), why)

    # -- the reminder ---------------------------------------------------------------------------

    async def remind(self, work: ScheduledWork) -> Reply | None:
        """The :data:`WorkKind.REMINDER` handler: the nudge, or None when the item is closed."""
        action_id = int(work.payload.get("action", 0))
        row = await self.store.action(action_id)
        if row is None or row.status != "open":
            log.info("reminder for action #%d: the item is %s; nothing sent", action_id,
                     "gone" if row is None else row.status)
            return None
        chair = self.voice("general") if self.voice else None
        due = due_words(work.due_at, self.clock.now(), self.zone)
        text = (f"\u23f0 Your reminder: {self.who(row.owner)} owes action #{row.id} \u201c{row.task}\u201d, {due}.\n"
                f"From meeting {row.meeting_id} \u201c{row.topic}\u201d.")
        return work.reply(text, role="general", name=chair[0] if chair else "Sabha", emoji=chair[1] if chair else "",
                          buttons=(Button("Done", f"/done {row.id}"), Button("Snooze", f"/snooze {row.id}")))


def _with_due(row: ActionRow, at: datetime, text: str | None) -> ActionRow:
    from dataclasses import replace

    return replace(row, due_at=stamp(at), due_text=text)


def _created(row: ActionRow) -> datetime | None:
    try:
        return utc(datetime.fromisoformat(row.created_at))
    except ValueError:
        return None


def _length(length: timedelta) -> str:
    seconds = int(length.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
