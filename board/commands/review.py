"""Reviews of decisions: ``/review <id> [when]`` and the review meetings (see
:mod:`board.decisions.recall.reviews`).

``/review <id> <when>`` schedules (or moves) the review of a decision (``+3d``, ``in 2 weeks``,
``2026-12-15``); ``/review <id>`` says what is scheduled and the verdicts so far. The ``review``
handler of the board's schedule convenes the review meeting when it is due; :func:`after_meeting`
(a meeting subscriber) records a review meeting's verdict when it ends, schedules the resolution
requests of predictions made in any meeting that ended, and, with
``board.meetings.review_after_days``, the review of a decision just made. It is bookkeeping
(:class:`board.room.subscribers.Bookkeeping`): done after the meeting returned, and what a stop cut short at the
next start, never twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, timedelta, tzinfo
from typing import TYPE_CHECKING

from board.agent.speaker import Ask
from board.agent.tools import ToolContext
from board.commands.host import CommandHost
from board.decisions.predictions.resolving import schedule_resolutions
from board.decisions.recall.reviews import (
    VERDICT_SCHEMA,
    ReviewRow,
    ReviewStore,
    WhenProblem,
    decision_under_review,
    parse_review_when,
    read_verdict,
    review_agenda,
    review_key,
    review_topic,
    schedule_review,
    verdict_message,
)
from board.envelope import Envelope, Reply
from board.llm.purpose import CallPurpose
from board.room.convene import BoardRoom, MeetingInProgress
from board.room.settings import MEETINGS_OFF, MeetingSettings
from board.room.subscribers import AGAIN, Bookkeeping
from board.routing.router import Route
from board.schedule import NewWork, Place, Schedule, ScheduledWork, WorkKind

if TYPE_CHECKING:  # the meeting machinery loads with the first meeting
    from board.room.meeting import MeetingEvent

__all__ = ["register"]

log = logging.getLogger("sabha.review")

USAGE = "Schedule a decision's review with /review <meeting id> <when> (+3d, in 2 weeks, friday, 2026-12-15)."


def register(host: CommandHost, room: BoardRoom, schedule: Schedule,
             settings: Callable[[], MeetingSettings], zone: tzinfo = UTC) -> None:
    """Add ``/review``, the review handler and the after-meeting follow-ups; ``zone``: the board's
    time zone (``board.timezone``), which review dates and resolve-by dates are read in."""
    db = room.store.db
    reviews = ReviewStore(db)

    async def review(envelope: Envelope, route: Route) -> str:
        words = route.text.split()
        if not words:
            return USAGE
        meeting = await room.store.get(words[0])
        if meeting is None or meeting.decision is None:
            return f"No decided meeting {words[0]!r}; /meetings lists them. {USAGE}"
        if len(words) == 1:
            return _review_state(meeting.id, await reviews.of_decision(meeting.id))
        try:
            due = parse_review_when(" ".join(words[1:]), schedule.clock.now(), zone)
        except WhenProblem as problem:
            return f"{problem}. Nothing scheduled."
        place = Place(envelope.channel, envelope.chat_id, envelope.thread_id)
        await schedule_review(schedule, db, meeting.id, due.at, place)
        return (f"The review of {meeting.id} (\u201c{meeting.topic}\u201d) is scheduled for "
                f"{due.said}: a short meeting on what happened, kept / reversed / "
                "superseded, recorded on the decision.")

    async def hold(work: ScheduledWork) -> Reply | None:
        if "verdict_of" in work.payload:  # the verdict, told where the review was held
            judged = await reviews.get(int(work.payload["verdict_of"]))
            return work.reply(_verdict_text(judged)) if judged is not None and judged.verdict else None
        decision_id = str(work.payload.get("decision", ""))
        pending = await reviews.pending(decision_id)
        if pending is None or pending.review_meeting_id is not None:  # judged, or already convened (a re-run)
            return None
        decided = await decision_under_review(db, decision_id)
        if decided is None:
            return None
        current = settings()
        if not current.enabled:
            return work.reply(f"The review of {decision_id} is due, but {MEETINGS_OFF}")
        envelope = Envelope(channel=work.place.channel, text="", sender="sabha", chat_id=work.place.chat_id,
                            thread_id=work.place.thread_id, sender_name="Sabha", is_owner=True)
        try:
            run = room.start(review_topic(decided), envelope=envelope, agenda=review_agenda(decided),
                             settings=replace(current, max_turns_per_agent=1, recall_decisions=0))
        except MeetingInProgress as busy:
            raise RuntimeError(f"the review waits: {busy}") from busy  # the schedule tries again later
        if not await reviews.held(pending.id, run.id):
            await room.cancel(run.id)
            return None
        expected = await room.estimate(settings=run.settings, agenda=run.m.preset_agenda)
        log.info("review of %s: meeting %s convened; %s", decision_id, run.id, expected.summary())
        return None

    async def after_meeting(event: MeetingEvent) -> None:
        """A meeting ended: resolution requests, a review meeting's verdict, the decision's review scheduled. Told
        again after a stop cut it short (``again``): only what is not done yet (no verdict asked twice, no review
        moved)."""
        if event.kind != "ended":  # MeetingEventKind.ENDED
            return
        again = bool(event.data.get(AGAIN))
        added = await schedule_resolutions(schedule, db, zone=zone)  # only those not scheduled yet
        if added:
            log.info("meeting %s: %d resolution request(s) scheduled", event.meeting_id, added)
        judged = await reviews.by_review_meeting(event.meeting_id)
        if judged is not None:
            if not (again and judged.verdict is not None):
                await _judge(room, reviews, event, judged.id, schedule)
            return
        await _review_later(room, schedule, event, settings().review_after_days, again=again)

    schedule.register(WorkKind.REVIEW, hold)
    room.subscribe(Bookkeeping(after_meeting))  # after the meeting returned; done again after a stop
    host.register_command("review", review, "/review <id> [when]: schedule a decision's review meeting",
                          owner_only=True)


async def _review_later(room: BoardRoom, schedule: Schedule, event: MeetingEvent, days: float, *,
                        again: bool) -> None:
    """Schedule the review of the decision ended meeting ``event`` took, ``days`` after it, where it was called
    (none when ``days`` is 0 or it took no decision); told ``again`` after a stop, a review already scheduled is
    left where it is."""
    origin = event.origin
    meeting = await room.store.get(event.meeting_id)
    if again and meeting is not None and await schedule.get(review_key(meeting.id)) is not None:
        return
    if days > 0 and origin is not None and meeting is not None and meeting.decision is not None:
        await schedule_review(schedule, room.store.db, meeting.id, schedule.clock.now() + timedelta(days=days),
                              Place(origin.channel, origin.chat_id, origin.thread_id))


async def _judge(room: BoardRoom, reviews: ReviewStore, event: MeetingEvent, review_id: int,
                 schedule: Schedule) -> None:
    """Ask the review meeting's chair for the verdict and record it on the decision."""
    meeting = await room.store.get(event.meeting_id)
    if meeting is None:
        return
    ask = Ask(role=meeting.chair, message=verdict_message(meeting.topic, meeting.decision, meeting.minutes),
              tools=(), response_schema=VERDICT_SCHEMA)
    ctx = ToolContext(role=meeting.chair, session_key="meeting", envelope=event.origin, meeting_id=meeting.id)
    try:
        said = await room.speaker(meeting.roster, purpose=CallPurpose.MEETING)(ask, ctx)
        verdict, summary = read_verdict(said.text)
    except Exception as exc:  # noqa: BLE001 - the review is recorded, unjudged, rather than lost
        log.warning("review meeting %s: the chair gave no verdict (%s)", meeting.id, exc)
        verdict, summary = "unclear", f"the chair could not be asked: {exc}"
    await reviews.judge(review_id, verdict, summary, schedule.clock.now())
    log.info("review meeting %s: verdict %s (%s)", meeting.id, verdict, summary)
    origin = event.origin
    if origin is not None:  # told once, where the review was held (scheduled work: exactly once)
        await schedule.add(NewWork(WorkKind.REVIEW, key=f"review:verdict:{review_id}", due_at=schedule.clock.now(),
                                   place=Place(origin.channel, origin.chat_id, origin.thread_id),
                                   payload={"verdict_of": review_id}))


def _verdict_text(review: ReviewRow) -> str:
    return (f"Review of decision {review.meeting_id} (meeting {review.review_meeting_id}): the decision is "
            f"{(review.verdict or 'unclear').upper()}. {review.summary or ''} It is recorded on the decision; "
            "later meetings on related topics will see it.").strip()


def _review_state(meeting_id: str, rows: list[ReviewRow]) -> str:
    if not rows:
        return f"No review of {meeting_id} yet. {USAGE}"
    lines = [f"Reviews of {meeting_id}:"]
    for row in rows:
        if row.verdict:
            lines.append(f"- {row.verdict} ({(row.reviewed_at or '')[:10]}, meeting {row.review_meeting_id}): "
                         f"{row.summary}")
        elif row.review_meeting_id:
            lines.append(f"- being held now (meeting {row.review_meeting_id})")
        else:
            lines.append(f"- scheduled for {row.due_at}")
    return "\n".join(lines)
