"""What follows a ruling: the follow-up meeting of a revisit, and no reminders for a veto's actions.

``/revisit <id> <reason>`` schedules the follow-up meeting as scheduled work
(:class:`board.schedule.WorkKind.FOLLOW_UP`, key ``follow_up:decision:<id>``, due at once), so it is
convened exactly once even across a restart or a kill (the schedule's claim-before-send rule):
:meth:`FollowUps.convene` is its handler. It convenes the meeting in the place of the original one
(same chat and topic: the channel shows it there), titled ``Revisit: <topic>``, with an agenda set in
advance that says what was decided and the owner's reason, quoted as data (:func:`follow_up_agenda`);
the chair does not reframe it. A meeting still running in that place makes the handler fail, so the
schedule tries again later (its retry waits). Once convened, the two meetings are linked
(:meth:`board.decisions.ratify.DecisionBook.link_follow_up`); a second run of the handler (after a crash)
finds the link and convenes nothing.

A veto drops the decision's open action items (:mod:`board.decisions.ratify`); :meth:`FollowUps.changed`
cancels their reminders (scheduled by :mod:`board.commands.followup` under the key
``reminder:action:<n>``), so none is sent for a dropped item.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board.clock import Clock
from board.decisions.ratify import DecisionBook, DecisionChange, DecisionRecord, Verdict
from board.envelope import Envelope
from board.schedule import NewWork, Place, Schedule, ScheduledWork, WorkKind
from board.schedule.report import TERMINAL
from board.workspace.quoting import FieldLimit, quote_field

if TYPE_CHECKING:
    from board.envelope import Reply
    from board.room.convene import BoardRoom

__all__ = ["FollowUps", "follow_up_agenda", "follow_up_key", "register", "reminder_key"]

log = logging.getLogger("sabha.decisions")


def follow_up_key(meeting_id: str) -> str:
    """The scheduled work that convenes the follow-up of decision ``meeting_id``."""
    return f"follow_up:decision:{meeting_id}"


def reminder_key(action_id: int) -> str:
    """The scheduled reminder of action item ``action_id`` (the key :mod:`board.commands.followup` uses)."""
    return f"reminder:action:{action_id}"


def follow_up_agenda(record: DecisionRecord, reason: str) -> str:
    """The agenda of the meeting that revisits ``record``: what was decided and why the owner sent it
    back (the reason is the owner's words, quoted as data)."""
    return "\n".join([
        f"Revisit the decision of meeting {record.meeting_id} on {quote_field(record.topic, FieldLimit.TEXT)}.",
        f"It recommended: {quote_field(record.recommendation, FieldLimit.TEXT)}.",
        f"The owner sent it back because: {quote_field(reason, FieldLimit.TEXT)}.",
        "Weigh that reason, then keep, change or replace the recommendation.",
    ])


def _is_group(record: DecisionRecord, place: Place, owner: Envelope) -> bool:
    """Whether the follow-up convenes in a group: as the meeting's place was recorded, whoever asks from
    where (a forum meeting's follow-up asked for in a direct chat is still a group meeting, in the group's
    memory scope). A meeting recorded before its place kept this: a group unless asked for from that
    very chat (never a direct chat's scope for a place that may be a group)."""
    if record.is_group is not None:
        return record.is_group
    if (owner.channel, owner.chat_id) == (place.channel, place.chat_id):
        return owner.is_group
    return True


@dataclass(eq=False)
class FollowUps:
    """Schedules and convenes follow-up meetings; cancels a veto's reminders. See the module docstring."""

    room: BoardRoom
    book: DecisionBook
    schedule: Schedule
    clock: Clock

    async def plan(self, record: DecisionRecord, reason: str, owner: Envelope) -> str:
        """Schedule the follow-up of ``record`` (now, in its meeting's place); the line that says so."""
        place = Place(record.channel, record.chat_id, record.thread_id) if record.channel and record.chat_id \
            else Place(owner.channel, owner.chat_id, owner.thread_id)
        await self.schedule.add(NewWork(
            WorkKind.FOLLOW_UP, key=follow_up_key(record.meeting_id), due_at=self.clock.now(), place=place,
            payload={"decision": record.meeting_id, "reason": reason, "by": owner.sender,
                     "by_name": owner.sender_name, "is_group": _is_group(record, place, owner)}))
        expected = (await self.room.estimate(agenda=reason)).summary()  # its agenda is set: no framing call
        if place.channel == TERMINAL:
            return (f"A follow-up meeting on \u201cRevisit: {record.topic}\u201d is scheduled with your reason on its "
                    "agenda; the first meeting ran in the terminal, so it convenes when `sabha chat` runs, and its "
                    f"statements and decision show there. {expected}")
        return (f"A follow-up meeting on \u201cRevisit: {record.topic}\u201d is convening with your reason on its "
                f"agenda; its statements and decision follow where the first meeting ran. {expected}")

    async def convene(self, work: ScheduledWork) -> Reply | None:
        """The FOLLOW_UP handler: start the follow-up meeting (once), link it; nothing to send itself."""
        from board.room.convene import MeetingInProgress

        meeting_id = str(work.payload.get("decision") or "")
        found = await self.book.find(meeting_id)
        record = found.record
        if record is None:
            log.warning("decision %s: its follow-up was due but the meeting is gone; nothing convened", meeting_id)
            return None
        if record.follow_up_id is not None:
            log.info("decision %s: follow-up %s was convened already", meeting_id, record.follow_up_id)
            return None
        envelope = Envelope(channel=work.place.channel, chat_id=work.place.chat_id, thread_id=work.place.thread_id,
                            text="", sender=str(work.payload.get("by") or "owner"),
                            sender_name=str(work.payload.get("by_name") or "") or None,
                            is_group=bool(work.payload.get("is_group")), is_owner=True,
                            received_at=self.clock.now())
        try:
            run = self.room.start(f"Revisit: {record.topic}", envelope=envelope,
                                  agenda=follow_up_agenda(record, str(work.payload.get("reason") or "")),
                                  revisit_of=meeting_id)  # on its row from the start: the link below may come first
        except MeetingInProgress as exc:
            raise RuntimeError(f"the follow-up of {meeting_id} waits: {exc}") from exc  # the schedule retries
        await self.room.on_record(run)
        await self.book.link_follow_up(meeting_id, run.id)
        log.info("decision %s: follow-up meeting %s convened (revisit)", meeting_id, run.id)
        return None

    async def changed(self, change: DecisionChange) -> None:
        """A veto: no reminders for the action items it dropped."""
        if change.record.verdict is not Verdict.VETOED:
            return
        for action_id in change.dropped:
            await self.schedule.cancel(reminder_key(action_id), f"decision {change.record.meeting_id} was vetoed")


def register(follow_ups: FollowUps) -> None:
    """Hook ``follow_ups`` up: the FOLLOW_UP handler and the veto listener."""
    follow_ups.schedule.register(WorkKind.FOLLOW_UP, follow_ups.convene)
    follow_ups.book.subscribe(follow_ups.changed)

