"""Board meetings as seen in Telegram.

:class:`MeetingView` subscribes to the board's meeting events
(:class:`board.meeting.MeetingEvent`) and shows the meetings that were called from
Telegram:

* in the board's forum: a status message in General, edited as the meeting progresses
  (at most one edit per ``status_interval`` seconds, 3 by default; the final state is
  always written), each specialist's statement posted in that specialist's topic (in
  General when the role has no topic), and the decision and the minutes posted in General;
* in a private chat: the status message, the decision and the minutes in that chat.

Events are queued per meeting and shown by one worker, in order, so a slow Telegram (or
a 429 pause) never slows the meeting itself. Everything is sent through
:class:`bot.channels.outbound.Outbound`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from board.meeting import MeetingEvent
from board.tasks import finish_tasks
from bot.channels.outbound import Outbound, SendFailed, Target, ThreadNotFound
from bot.channels.telegram_topics import Topics

log = logging.getLogger("sabha.telegram.meeting")

STATUS_INTERVAL_S = 3.0


class StatusThrottle:
    """Latest-wins edits of one message, at most one per ``interval`` seconds."""

    def __init__(
        self,
        edit: Callable[[str], Awaitable[Any]],
        interval: float = STATUS_INTERVAL_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._edit = edit
        self.interval = interval
        self.clock = clock
        self.sleep = sleep
        self.shown: str | None = None
        self.wanted: str | None = None
        self.last_edit: float | None = None
        self.edits = 0
        self._wake = asyncio.Event()
        self._closed = False
        self._task: asyncio.Task[None] | None = None

    def shown_now(self, text: str) -> None:
        """The message was just sent with ``text`` (counts as an edit for the interval)."""
        self.shown = self.wanted = text
        self.last_edit = self.clock()

    def update(self, text: str) -> None:
        """Ask for the message to show ``text`` (soon, within the interval)."""
        self.wanted = text
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="meeting status")
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.wanted is not None and self.wanted != self.shown:
                if self.last_edit is not None:
                    wait = self.last_edit + self.interval - self.clock()
                    if wait > 0:
                        await self.sleep(wait)
                text = self.wanted
                self.last_edit = self.clock()
                try:
                    await self._edit(text)
                except Exception:  # noqa: BLE001 - a status line must not stop the view
                    log.warning("meeting status edit failed", exc_info=True)
                self.shown = text
                self.edits += 1
            if self._closed:
                return

    async def close(self) -> None:
        """Write the last wanted text (respecting the interval) and stop."""
        self._closed = True
        if self._task is None:
            return
        self._wake.set()
        await self._task


@dataclass
class _Meeting:
    """What the view knows about one meeting."""

    event: MeetingEvent
    home: Target  # where the status, decision and minutes go
    in_forum: bool
    queue: asyncio.Queue[MeetingEvent] = field(default_factory=asyncio.Queue)
    participants: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    spoke: dict[str, int] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    round: int = 0
    disagreements: int = 0
    consensus: int = 0
    phase: str = "framing the agenda"
    agenda: str = ""
    status_id: int | None = None
    throttle: StatusThrottle | None = None
    worker: asyncio.Task[None] | None = None


class MeetingView:
    """Shows meetings called from Telegram; pass it to ``BoardRoom.subscribe``."""

    def __init__(self, outbound: Outbound, *, forum_id: int | None, topics: Topics | None,
                 status_interval: float = STATUS_INTERVAL_S,
                 label_for: Callable[[str], str] | None = None) -> None:
        self.outbound = outbound
        self.label_for = label_for or (lambda role: role)
        self.forum_id = forum_id
        self.topics = topics
        self.status_interval = status_interval
        self._meetings: dict[str, _Meeting] = {}
        self.shown = 0

    async def __call__(self, event: MeetingEvent) -> None:
        """The subscriber: queue the event for the meeting's worker (returns at once)."""
        origin = event.origin
        if origin is None or origin.channel != "telegram":
            return
        meeting = self._meetings.get(event.meeting_id)
        if meeting is None:
            chat_id = int(origin.chat_id)
            in_forum = self.forum_id is not None and chat_id == self.forum_id
            home = Target(chat_id) if in_forum or not origin.is_group else Target(chat_id, origin.thread_id)
            meeting = self._meetings[event.meeting_id] = _Meeting(event=event, home=home, in_forum=in_forum)
            meeting.worker = asyncio.create_task(self._work(meeting), name=f"meeting view {event.meeting_id}")
        meeting.queue.put_nowait(event)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for queued meeting output to be sent (cancel what is left after ``timeout``)."""
        await finish_tasks((m.worker for m in self._meetings.values() if m.worker is not None), timeout)

    # -- the worker ------------------------------------------------------------------

    async def _work(self, m: _Meeting) -> None:
        try:
            while True:
                event = await m.queue.get()
                try:
                    await self._show(m, event)
                except Exception:  # noqa: BLE001 - keep showing the rest of the meeting
                    log.exception("telegram: showing meeting %s event %s failed", event.meeting_id, event.kind)
                if event.kind == "ended":
                    break
        finally:
            if m.throttle is not None:
                with contextlib.suppress(Exception):
                    await m.throttle.close()
            self._meetings.pop(m.event.meeting_id, None)

    async def _show(self, m: _Meeting, e: MeetingEvent) -> None:
        self.shown += 1
        if e.round:
            m.round = max(m.round, e.round)
        if e.kind == "started":
            m.participants = list(e.data.get("participants") or [])
            for role in m.participants:
                try:
                    m.names[role] = self.label_for(role)
                except Exception:  # noqa: BLE001 - a missing soul must not hide the meeting
                    m.names[role] = role
            await self._open_status(m)
            return
        if e.kind == "framed":
            m.agenda = e.text
            m.phase = "round 1: specialists answer"
        elif e.kind == "agent_spoke" and e.role:
            if e.round:
                m.phase = f"round {e.round}: specialists answer"
            m.spoke[e.role] = m.spoke.get(e.role, 0) + 1
            if e.name:
                m.names[e.role] = f"{e.emoji or ''} {e.name}".strip()
            if m.in_forum:
                await self._post_statement(m, e)
        elif e.kind == "absent" and e.role:
            m.absent[e.role] = e.text
        elif e.kind == "disagreement":
            m.disagreements += 1
        elif e.kind == "consensus":
            m.consensus += 1
        elif e.kind == "round_done":
            m.phase = f"round {m.round} done"
        elif e.kind == "decision":
            m.phase = "decided"
            await self._send(m.home, format_decision(e), header="🏛 Board decision")
        elif e.kind == "ended":
            reason = str(e.data.get("stop_reason") or e.text)
            m.phase = f"ended ({reason})" + (f": {e.data['error']}" if e.data.get("error") else "")
            self._status(m)
            if m.throttle is not None:
                await m.throttle.close()
            minutes = str(e.data.get("minutes") or "").strip()
            if minutes:
                await self._send(m.home, minutes, header="📝 Minutes")
            return
        self._status(m)

    async def _open_status(self, m: _Meeting) -> None:
        text = self.status_text(m)
        try:
            [first, *_] = await self.outbound.send(m.home, text)
        except SendFailed as exc:
            log.error("telegram: could not post the status of meeting %s: %s", m.event.meeting_id, exc)
            return
        m.status_id = first.message_id
        m.throttle = StatusThrottle(lambda t: self.outbound.edit(m.home, first.message_id, t), self.status_interval)
        m.throttle.shown_now(text)

    def _status(self, m: _Meeting) -> None:
        if m.throttle is not None:
            m.throttle.update(self.status_text(m))

    async def _post_statement(self, m: _Meeting, e: MeetingEvent) -> None:
        label = f"{e.emoji or ''} {e.name or e.role}".strip()
        header = f"{label} · board meeting, round {e.round or m.round}"
        thread = self.topics.thread_for(e.role or "") if self.topics else None
        target = Target(m.home.chat_id, thread)
        try:
            await self.outbound.send(target, e.text, header=header)
        except ThreadNotFound as exc:
            log.error("telegram: %s", exc)
            if self.topics is not None and e.role:
                await self.topics.forget(e.role)
            await self._send(target.general(), e.text, header=header)
        except SendFailed as exc:
            log.error("telegram: statement of %s in meeting %s not delivered: %s", e.role, e.meeting_id, exc)

    async def _send(self, target: Target, text: str, *, header: str) -> None:
        try:
            await self.outbound.send(target, text, header=header)
        except SendFailed as exc:
            log.error("telegram: meeting output not delivered: %s", exc)

    # -- text ------------------------------------------------------------------------

    @staticmethod
    def status_text(m: _Meeting) -> str:
        """The status message's Markdown."""
        lines = [f"🏛 **Board meeting:** {m.event.topic}", f"Status: {m.phase}"]
        if m.round:
            lines.append(f"Round: {m.round}")
        marks = []
        for role in m.participants:
            label = m.names.get(role, role)
            if role in m.absent:
                marks.append(f"🚫 {label} (absent)")
            elif m.spoke.get(role):
                marks.append(f"✅ {label} ({m.spoke[role]})")
            else:
                marks.append(f"⏳ {label}")
        if marks:
            lines.append("")
            lines.extend(marks)
        if m.disagreements or m.consensus:
            lines.append("")
            lines.append(f"Disagreements: {m.disagreements} · Consensus points: {m.consensus}")
        return "\n".join(lines)


def format_decision(event: MeetingEvent) -> str:
    """A decision event as Markdown: recommendation, rationale, dissent, actions, questions."""
    d: dict[str, Any] = dict(event.data.get("decision") or {})
    parts = [f"**Recommendation:** {d.get('recommendation') or event.text}"]
    if d.get("rationale"):
        parts.append(f"**Why:** {d['rationale']}")
    if d.get("consensus_points"):
        parts.append("**Agreed:**\n" + "\n".join(f"- {p}" for p in d["consensus_points"]))
    if d.get("dissent"):
        parts.append("**Dissent:**\n" + "\n".join(f"- {x.get('who')}: {x.get('why')}" for x in d["dissent"]))
    if d.get("action_items"):
        parts.append("**Actions:**\n" + "\n".join(
            f"{i}. {a.get('task')} ({a.get('owner')})" for i, a in enumerate(d["action_items"], 1)))
    if d.get("open_questions"):
        parts.append("**Open questions:**\n" + "\n".join(f"- {q}" for q in d["open_questions"]))
    if d.get("best_effort"):
        parts.append("_(assembled by Sabha: the chair's decision could not be validated)_")
    return "\n\n".join(parts)
