"""Standing meetings and roundtables: what a standing item (``/every``, ``sabha schedule``) of kind meeting or
roundtable does when it runs, and what an item's runs cost.

:meth:`StandingMeetings.run` holds the meeting as if the owner had called it in the item's place: the same
machinery as ``/meeting`` (:meth:`board.room.convene.BoardRoom.launch`: the meeting's caps, resumed after a
restart, posted by the channel's usual meeting views: statements, decision, minutes), so it returns None once
the meeting is under way. A roundtable is the seed-004 debate held as a meeting of the ``roundtable`` roster
chaired by the summarizer (as ``sabha roundtable --early-stop``): it ends with its summary, whose tasks are the
decision's action items, with owners (``/actions``). Before anything is spent the meeting's estimate
(:mod:`board.room.estimate`) is held against what today has spent of ``budget.daily_usd``: a run that would
pass it is skipped with one line saying why, and no model is called. A run while the item's previous meeting
still runs holds no second one.

Every model call of a run is tagged with the item in the ledger (:func:`board.spending.ledger.spending_for_run`:
the meeting's background task inherits the tag), and :meth:`StandingMeetings.month_cost` sums an item's runs
this calendar month (in ``board.timezone``), the calls of its meetings made after a restart resumed them
included (the ``standing_meetings`` table, migration 1226). :meth:`StandingMeetings.handle` is the handler of
:attr:`board.schedule.WorkKind.STANDING_MEETING` rows (payload ``kind``, ``topic``, ``item``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from typing import TYPE_CHECKING

from board.clock import Clock
from board.envelope import Envelope, Reply
from board.room.convene import SUMMARIZER, BoardRoom, MeetingInProgress
from board.room.settings import MEETINGS_OFF, MeetingSettings
from board.schedule.work import Place, ScheduledWork
from board.spending.budget import Budget
from board.spending.ledger import RunTag, spending_for_run, start_of_day
from board.workspace.quoting import plain_line

if TYPE_CHECKING:
    from board.room.estimate import Estimate

__all__ = ["GatheringKind", "StandingMeetings", "daily_budget_stop", "roundtable_settings"]

log = logging.getLogger("sabha.standing")

#: the seed's rounds of a roundtable debate (``RoundtableInput.max_rounds``' default)
ROUNDTABLE_ROUNDS = 3


class GatheringKind(StrEnum):
    """What a standing meeting item holds when it runs: a board meeting or a roundtable."""

    MEETING = "meeting"  # a board meeting of the board's roster, chaired by general
    ROUNDTABLE = "roundtable"  # the seed-004 debate (artist, business, tech), summarized into tasks


def roundtable_settings(board: MeetingSettings) -> MeetingSettings:
    """A roundtable held as a meeting: the board's caps (budget, duration), the seed's rounds, no challenger."""
    return replace(board, max_turns_per_agent=ROUNDTABLE_ROUNDS, critic_role="")


async def daily_budget_stop(budget: Budget, estimate: Estimate, now: datetime) -> str | None:
    """Why a meeting expected to cost ``estimate`` may not start today (``budget.daily_usd``: what today has
    spent plus the estimate would pass it), or None. With no daily budget, or an estimate that cannot be
    priced (its unpriced models' calls are not in it), nothing is held back here."""
    limit = budget.settings.daily_usd
    if limit is None:
        return None
    spent = await budget.ledger.spent(since=start_of_day(now))
    if spent + estimate.usd <= limit:
        return None
    return (f"it is expected to cost about ${estimate.usd:.2f} and today has spent ${spent:.2f} of the "
            f"${limit:g} daily budget (budget.daily_usd)")


def _label(item_id: int, kind: GatheringKind, topic: str, now: datetime) -> str:
    return f"#{item_id} {kind.value}: {plain_line(topic, 40)} ({now.astimezone(UTC):%Y-%m-%d %H:%M}Z)"


@dataclass(eq=False)
class StandingMeetings:
    """Runs standing meetings and roundtables; sums what each item's runs cost. See the module docstring."""

    room: BoardRoom
    budget: Budget  # its settings are the live ones (a reload replaces them); its ledger is the board's
    clock: Clock
    zone: tzinfo = UTC  # board.timezone: a calendar month starts at its midnight

    async def run(self, kind: str, topic: str, place: Place, *, item_id: int) -> Reply | None:
        """Hold standing item ``item_id``'s meeting or roundtable on ``topic`` in ``place``, now. Returns the one
        line to post there when it is not held (meetings off, over the daily budget, the place busy), else None:
        the meeting's own views post its statements, decision and minutes."""
        what = GatheringKind(kind)
        topic = " ".join(topic.split())
        if not self.room.meeting_settings.enabled:
            return _reply(place, f"The standing {what.value} #{item_id} is due, but {MEETINGS_OFF}")
        running = await self._still_running(item_id)
        if running is not None:
            log.warning("standing item #%d: its %s %s still runs; no second one is held", item_id, what.value, running)
            return None
        from board.room.roundtable import OWNERS, ROSTER, RoundtableInput, agenda_for  # with the first run

        roundtable = what is GatheringKind.ROUNDTABLE
        settings = roundtable_settings(self.room.meeting_settings) if roundtable else None
        chair = SUMMARIZER if roundtable else "general"
        try:
            agenda = agenda_for(RoundtableInput(prompt=topic)) if roundtable else None  # a blank topic: ValueError
            expected = await self.room.estimate(roster=ROSTER if roundtable else None, settings=settings,
                                                agenda=agenda, chair_role=chair)
        except ValueError as exc:  # no topic, a roster with no specialists
            return _reply(place, f"The standing {what.value} #{item_id} on \u201c{topic}\u201d could not be held: "
                                 f"{exc}")
        now = self.clock.now()
        stop = await daily_budget_stop(self.budget, expected, now)
        if stop is not None:
            log.warning("standing item #%d: %s skipped, nothing spent: %s", item_id, what.value, stop)
            return _reply(place, f"Skipped the standing {what.value} #{item_id} on \u201c{topic}\u201d: {stop}. "
                                 "Nothing was spent; it runs again at its next time.")
        envelope = Envelope(channel=place.channel, text="", sender="sabha", chat_id=place.chat_id,
                            thread_id=place.thread_id, sender_name="Sabha", is_owner=True, is_group=True,
                            received_at=now)  # a group's memory scope: never a direct chat's private facts
        tag = RunTag(item_id, _label(item_id, what, topic, now))
        try:
            run = self.room.prepare(topic, envelope=envelope, roster=ROSTER if roundtable else None,
                                    settings=settings, agenda=agenda, chair_role=chair,
                                    extra_owners=OWNERS if roundtable else ())
            with spending_for_run(tag):  # the meeting's task, created here, inherits the tag
                self.room.launch(run)
        except (MeetingInProgress, ValueError) as exc:
            return _reply(place, f"Skipped the standing {what.value} #{item_id} on \u201c{topic}\u201d: {exc}.")
        await self.room.store.db.execute(
            "INSERT INTO standing_meetings(meeting_id, item_id, kind, label, started_at) VALUES (?, ?, ?, ?, ?)",
            (run.id, item_id, what.value, tag.label, now.astimezone(UTC).isoformat(timespec="seconds")))
        await self.room.on_record(run)
        log.info("standing item #%d: %s %s held in %s; %s", item_id, what.value, run.id, place, expected.summary())
        return None

    async def handle(self, work: ScheduledWork) -> Reply | None:
        """The handler of a STANDING_MEETING row: :meth:`run` with its payload (``kind``, ``topic``, ``item``)."""
        payload = work.payload
        return await self.run(str(payload.get("kind") or GatheringKind.MEETING.value), str(payload.get("topic") or ""),
                              work.place, item_id=int(payload.get("item") or 0))

    async def month_cost(self, item_id: int) -> float:
        """USD the runs of standing item ``item_id`` spent on model calls this calendar month (board.timezone)."""
        local = self.clock.now().astimezone(self.zone)
        since = local.replace(day=1, hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)
        row = await self.room.store.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ? AND (schedule_item = ? OR "
            "(schedule_item IS NULL AND meeting_id IN (SELECT meeting_id FROM standing_meetings WHERE item_id = ?)))",
            (since.isoformat(timespec="seconds"), item_id, item_id))
        return float(row["usd"]) if row is not None else 0.0

    async def _still_running(self, item_id: int) -> str | None:
        """The id of item ``item_id``'s meeting still running here or on record (a run before a restart), or None."""
        here = set(self.room.running())
        rows = await self.room.store.db.fetchall(
            "SELECT s.meeting_id, m.status FROM standing_meetings s LEFT JOIN meetings m ON m.id = s.meeting_id "
            "WHERE s.item_id = ? ORDER BY s.started_at DESC LIMIT 5", (item_id,))
        return next((str(r["meeting_id"]) for r in rows if r["status"] == "running" or r["meeting_id"] in here), None)


def _reply(place: Place, text: str) -> Reply:
    return Reply(role="general", name="Sabha", emoji="", text=text, channel=place.channel, chat_id=place.chat_id,
                 thread_id=place.thread_id, kind="command")
