"""Board meetings as seen in Telegram.

:class:`MeetingView` subscribes to the board's meeting events
(:class:`board.room.meeting.MeetingEvent`) and shows the meetings that were called from
Telegram:

* in the board's forum: a status message in General, edited as the meeting progresses,
  each specialist's statement posted in that specialist's topic (in General when the role
  has no topic), and the decision and the minutes posted in General;
* in a private chat: the status message, the decision and the minutes in that chat.

The decision message carries the buttons Ratify / Veto / Revisit
(:func:`board.commands.decisions.decision_buttons`); the message that has them is told to
``posted`` (the channel records it, so the buttons can say the verdict later: :mod:`.buttons`).

The board's reply to ``/meeting`` ("Convening the board ...") comes first: while the channel
answers a message (:meth:`MeetingView.expect`), a meeting that message called waits with its
first post until the channel has delivered (or given up on) the reply
(:meth:`MeetingView.replied`), at most :data:`REPLY_FIRST_S` seconds; the meeting itself runs
on meanwhile. (The meeting task starts before the command's reply is sent, so
without this the status could arrive above the reply under load.)

A meeting's posts are queued and sent by one worker per meeting, in order, so a slow
Telegram (or a 429 pause) never slows the meeting itself. Everything is sent through
:class:`bot.channels.telegram.outbound.Outbound`, inside the chat's rate budget (about 20 messages
a minute for a whole forum), so posts come first and the status line makes do with what
is left:

* **Status edits never delay a post.** At most one edit is pending (the latest status
  wins); it is made only while the meeting has no post queued and the chat's budget can
  spare a token without touching the :data:`STATUS_RESERVE` kept for posts and with
  nobody else waiting (:meth:`.outbound.Outbound.edit_if_idle`), and at most once per
  ``status_interval`` seconds (3 by default). The final status edit is always made, last,
  after the decision and the minutes.
* **Shutdown keeps what matters.** Once the channel is stopping (:meth:`MeetingView.begin_stop`)
  an ended meeting's decision and minutes go out before anything else still queued for it,
  then the final status; statements still queued are dropped with a log line that says how
  many and that ``sabha meetings show <id>`` has them (the state db recorded them all).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent
from board.room.render import format_decision
from board.tasks import finish_tasks
from bot.channels.telegram.outbound import Outbound, Target, ThreadNotFound
from bot.channels.telegram.topics import Topics
from bot.intake.delivery import SendFailed

log = logging.getLogger("sabha.telegram.meeting")

STATUS_INTERVAL_S = 3.0
REPLY_FIRST_S = 5.0  # longest a meeting's first post waits for the reply to the message that called it
_REPLIES_KEPT = 256  # replies remembered for meetings not seen yet
STATUS_RESERVE = 3  # budget tokens a status edit leaves for the meeting's posts (capped below the chat's burst)
_IDLE_FLOOR_S = 0.05  # shortest wait before looking at the budget again


class StatusThrottle:
    """The status message's text: the latest state wins (one edit pending at most), and at
    most one edit per ``interval`` seconds. The meeting's worker decides when to edit."""

    def __init__(self, interval: float = STATUS_INTERVAL_S, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self.shown: str | None = None
        self.wanted: str | None = None
        self.last_edit: float | None = None
        self.edits = 0

    def shown_now(self, text: str) -> None:
        """The message was just sent with ``text`` (counts as an edit for the interval)."""
        self.shown = self.wanted = text
        self.last_edit = self.clock()

    def update(self, text: str) -> None:
        """The message should show ``text`` (replaces any edit still pending)."""
        self.wanted = text

    @property
    def pending(self) -> bool:
        """An edit is wanted."""
        return self.wanted is not None and self.wanted != self.shown

    def wait_s(self) -> float:
        """Seconds until the interval allows the next edit (0: now)."""
        if self.last_edit is None:
            return 0.0
        return max(0.0, self.last_edit + self.interval - self.clock())

    def edited(self, text: str) -> None:
        """An edit to ``text`` was made (or refused for good: not retried until the state changes)."""
        self.shown = text
        self.last_edit = self.clock()
        self.edits += 1


PostKind = Literal["status", "statement", "decision", "minutes"]


@dataclass(frozen=True)
class _Post:
    """One message a meeting still has to send."""

    kind: PostKind
    target: Target
    text: str = ""
    header: str = ""
    role: str | None = None
    buttons: tuple[Button, ...] = ()


#: (meeting id, chat id, message id): the message that carries the meeting's decision buttons
ButtonsPosted = Callable[[str, int, int], Awaitable[None]]


@dataclass
class _Meeting:
    """What the view knows about one meeting."""

    event: MeetingEvent
    home: Target  # where the status, decision and minutes go
    in_forum: bool
    posts: deque[_Post] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    current: _Post | None = None
    ended: bool = False
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

    @property
    def id(self) -> str:
        return self.event.meeting_id


class MeetingView:
    """Shows meetings called from Telegram; pass it to ``BoardRoom.subscribe``."""

    def __init__(self, outbound: Outbound, *, forum_id: int | None, topics: Topics | None,
                 status_interval: float = STATUS_INTERVAL_S,
                 label_for: Callable[[str], str] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 posted: ButtonsPosted | None = None) -> None:
        self.outbound = outbound
        self.posted = posted
        self.label_for = label_for or (lambda role: role)
        self.forum_id = forum_id
        self.topics = topics
        self.status_interval = status_interval
        self.clock = clock
        self.sleep = sleep
        self.stopping = False
        self._meetings: dict[str, _Meeting] = {}
        self._replied: dict[tuple[str, str], asyncio.Event] = {}  # (chat, message id) -> its reply was delivered
        self.shown = 0
        self.dropped = 0

    async def __call__(self, event: MeetingEvent) -> None:
        """The subscriber: record the event and queue its posts (returns at once)."""
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
        try:
            self._apply(meeting, event)
        except Exception:  # keep showing the rest of the meeting
            log.exception("telegram: showing meeting %s event %s failed", event.meeting_id, event.kind)
        meeting.wake.set()

    def expect(self, chat_id: str, message_id: str | None) -> None:
        """The channel is answering ``message_id`` in ``chat_id``: a meeting it calls waits for the reply."""
        if message_id is None or (chat_id, message_id) in self._replied:
            return
        self._replied[(chat_id, message_id)] = asyncio.Event()
        while len(self._replied) > _REPLIES_KEPT:
            del self._replied[next(iter(self._replied))]

    def replied(self, chat_id: str, message_id: str | None) -> None:
        """The channel delivered (or gave up on) its reply to ``message_id`` in ``chat_id``: a meeting
        that message called may post now."""
        event = self._replied.get((chat_id, message_id)) if message_id is not None else None
        if event is not None:
            event.set()

    async def _reply_first(self, m: _Meeting) -> None:
        """Wait (bounded) until the reply to the message that called the meeting is out (when one is
        being made: a meeting called otherwise posts at once)."""
        origin = m.event.origin
        event = self._replied.get((origin.chat_id, origin.message_id)) \
            if origin is not None and origin.message_id is not None else None
        if event is None or self.stopping:
            return
        try:
            await asyncio.wait_for(event.wait(), REPLY_FIRST_S)
        except TimeoutError:
            log.info("telegram: meeting %s posts before the reply to the message that called it (not out after "
                     "%.0f s)", m.id, REPLY_FIRST_S)

    def begin_stop(self) -> None:
        """Sabha is shutting down: decisions and minutes first, statements still queued are dropped."""
        self.stopping = True
        for meeting in self._meetings.values():
            meeting.wake.set()

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait up to ``timeout`` for the queued meeting output to be sent (at shutdown, after
        :meth:`begin_stop`: what matters first); cancel what is left, logging what was not posted."""
        await finish_tasks((m.worker for m in self._meetings.values() if m.worker is not None), timeout)

    # -- events -> state and posts -----------------------------------------------------

    def _apply(self, m: _Meeting, e: MeetingEvent) -> None:
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
            m.posts.append(_Post("status", m.home))
        elif e.kind == "framed":
            m.agenda = e.text
            m.phase = "round 1: specialists answer"
        elif e.kind == "agent_spoke" and e.role:
            if e.round:
                m.phase = f"round {e.round}: specialists answer"
            m.spoke[e.role] = m.spoke.get(e.role, 0) + 1
            if e.name:
                m.names[e.role] = f"{e.emoji or ''} {e.name}".strip()
            if m.in_forum:
                label = f"{e.emoji or ''} {e.name or e.role}".strip()
                m.posts.append(_Post("statement", m.home, e.text,
                                     f"{label} · board meeting, round {e.round or m.round}", e.role))
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
            m.posts.append(_Post("decision", m.home, format_decision(e), "🏛 Board decision",
                                 buttons=decision_buttons(e.meeting_id)))
        elif e.kind == "ended":
            reason = str(e.data.get("stop_reason") or e.text)
            m.phase = f"ended ({reason})" + (f": {e.data['error']}" if e.data.get("error") else "")
            minutes = str(e.data.get("minutes") or "").strip()
            if minutes:
                m.posts.append(_Post("minutes", m.home, minutes, "📝 Minutes"))
            m.ended = True
        if m.throttle is not None:
            m.throttle.update(self.status_text(m))

    # -- the worker --------------------------------------------------------------------

    async def _work(self, m: _Meeting) -> None:
        try:
            await self._reply_first(m)
            while True:
                m.wake.clear()
                post = self._next_post(m)
                if post is not None:
                    m.current = post
                    try:
                        await self._send_post(m, post)
                    except Exception:  # keep showing the rest of the meeting
                        log.exception("telegram: posting the %s of meeting %s failed", post.kind, m.id)
                    m.current = None
                    continue
                if m.ended:
                    break
                await self._idle(m)
            await self._final_status(m)
        except asyncio.CancelledError:
            self._report_cut(m)
            raise
        finally:
            self._meetings.pop(m.id, None)

    def _next_post(self, m: _Meeting) -> _Post | None:
        if not m.posts:
            return None
        if not (self.stopping and m.ended):
            return m.posts.popleft()
        for kind in ("status", "decision", "minutes"):
            for post in m.posts:
                if post.kind == kind:
                    m.posts.remove(post)
                    return post
        statements = sum(1 for p in m.posts if p.kind == "statement")
        m.posts.clear()
        if statements:
            self.dropped += statements
            log.warning("telegram: shutting down: %d statement(s) of meeting %s were not posted to Telegram "
                        "(the decision and minutes were posted first); `sabha meetings show %s` has them",
                        statements, m.id, m.id)
        return None

    def _report_cut(self, m: _Meeting) -> None:
        left = ([m.current] if m.current is not None else []) + list(m.posts)
        kinds: list[str] = [p.kind for p in left]
        if m.throttle is not None and m.throttle.pending:
            kinds.append("final status")
        if not kinds:
            return
        statements = kinds.count("statement")
        parts = ([f"{statements} statement(s)"] if statements else []) + [k for k in kinds if k != "statement"]
        self.dropped += statements
        log.warning("telegram: shutdown cut the output of meeting %s short: %s not posted to Telegram; "
                    "`sabha meetings show %s` has them", m.id, ", ".join(parts), m.id)

    async def _send_post(self, m: _Meeting, post: _Post) -> None:
        if post.kind == "status":
            await self._open_status(m)
        elif post.kind == "statement":
            await self._post_statement(m, post)
        elif post.kind == "decision" and post.buttons:
            await self._post_decision(m, post)
        else:
            await self._send(post.target, post.text, header=post.header)

    async def _idle(self, m: _Meeting) -> None:
        """Nothing to post: edit the status if it is due and the budget can spare it, else wait."""
        throttle = m.throttle
        if throttle is None or m.status_id is None or not throttle.pending:
            await self._wait(m, None, self.sleep)
            return
        due_in = throttle.wait_s()
        if due_in > 0:
            await self._wait(m, due_in, self.sleep)
            return
        text = throttle.wanted or ""
        done = await self.outbound.edit_if_idle(m.home, m.status_id, text, reserve=STATUS_RESERVE)
        if done is None:  # the budget is low or others are waiting: look again when it may have refilled
            flood = self.outbound.flood
            await self._wait(m, max(flood.spare_in(m.home.chat_id, STATUS_RESERVE), _IDLE_FLOOR_S), flood.sleep)
            return
        throttle.edited(text)

    @staticmethod
    async def _wait(m: _Meeting, timeout: float | None, sleep: Callable[[float], Awaitable[None]]) -> None:
        """Until the meeting has news (an event, or stopping) or ``timeout`` seconds passed."""
        waiter: asyncio.Future[Any] = asyncio.ensure_future(m.wake.wait())
        timer: asyncio.Future[Any] | None = asyncio.ensure_future(sleep(timeout)) if timeout is not None else None
        try:
            await asyncio.wait([f for f in (waiter, timer) if f is not None], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (waiter, timer):
                if future is not None and not future.done():
                    future.cancel()

    async def _final_status(self, m: _Meeting) -> None:
        """The last status edit: always made (after the posts), still at most one per interval."""
        throttle = m.throttle
        if throttle is None or m.status_id is None or not throttle.pending:
            return
        due_in = throttle.wait_s()
        if due_in > 0:
            await self.sleep(due_in)
        text = throttle.wanted or ""
        await self.outbound.edit(m.home, m.status_id, text)
        throttle.edited(text)

    async def _open_status(self, m: _Meeting) -> None:
        text = self.status_text(m)
        try:
            [first, *_] = await self.outbound.send(m.home, text)
        except SendFailed as exc:
            log.error("telegram: could not post the status of meeting %s: %s", m.id, exc)
            return
        m.status_id = first.message_id
        m.throttle = StatusThrottle(self.status_interval, clock=self.clock)
        m.throttle.shown_now(text)
        m.throttle.update(self.status_text(m))  # events that came while it was being sent

    async def _post_statement(self, m: _Meeting, post: _Post) -> None:
        thread = self.topics.thread_for(post.role or "") if self.topics else None
        target = Target(m.home.chat_id, thread)  # the role's topic (General when it has none)
        try:
            await self.outbound.send(target, post.text, header=post.header)
        except ThreadNotFound as exc:
            log.error("telegram: %s", exc)
            if self.topics is not None and post.role:
                await self.topics.forget(post.role)
            await self._send(target.general(), post.text, header=post.header)
        except SendFailed as exc:
            log.error("telegram: statement of %s in meeting %s not delivered: %s", post.role, m.id, exc)

    async def _post_decision(self, m: _Meeting, post: _Post) -> None:
        """The decision with its buttons under its last message, and that message told to ``posted``."""
        try:
            sent = await self.outbound.send(post.target, post.text, header=post.header, buttons=post.buttons)
        except SendFailed as exc:
            log.error("telegram: the decision of meeting %s was not delivered: %s", m.id, exc)
            return
        if sent and self.posted is not None:
            await self.posted(m.id, post.target.chat_id, sent[-1].message_id)

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

