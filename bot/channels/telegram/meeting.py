"""Board meetings as seen in Telegram.

:class:`MeetingView` subscribes to the board's meeting events
(:class:`board.room.meeting.MeetingEvent`) and shows the meetings that were called from
Telegram:

* in the board's forum: a topic of its own (``🏛 <topic>``, :mod:`.meeting_thread`) with the status message
  (edited as the meeting progresses), each statement as its own message in speaking order as each finishes, the
  decision and the minutes; the place it was called from and each speaking advisor's own topic get a one-line
  pointer to it (one per meeting per advisor). The topic is recorded as one of the meeting's places
  (:meth:`board.room.table.MeetingTable.add_place`, ``thread``), so what is written there finds the
  meeting. Without a forum, or when the topic cannot be created, everything goes where the meeting was called;
* in a private chat (or a group without topics): the same sequence in that chat.

What the people at the table wrote in from elsewhere and the controls the meeting applied are one line each in
the sequence, where the meeting took them in (:mod:`bot.channels.meeting_lines`: ``contribution:<id>`` and
``control:<id>`` in the posted record); a contribution written in Telegram is not echoed (it is there as the
person's own message); a pause shows on the status line until the meeting resumes.

While a member is speaking (``speaking`` events) the status line names who, and the meeting's place shows
"typing…" (``sendChatAction``, refreshed every few seconds, only while no post is queued: posts come first).

What is posted is recorded (:mod:`bot.channels.meeting_posts`: ``sending`` as each request starts to leave,
``sent`` once Telegram confirmed it). A meeting that goes on after a restart (a ``resumed`` event: its finished
phases are not announced again) is caught up from its record: its topic is found again (one whose creation a
stop cut short, which the Bot API cannot look up, is opened once more, named ``... (again)``), and every stored
statement (and the decision) not posted yet is posted in order before anything new; an item whose request may
have left when Sabha stopped is sent once more, headed as possibly repeated (whatever it is: a statement, a pointer,
the decision); nothing is posted twice. A meeting that ended while its posts were still queued (a ``kill -9``
then) is told again at the next start (:meth:`board.room.convene.BoardRoom.retell_ended`) and caught up the same
way; one whose output was all out is marked ``done`` in the record and is not touched again.

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
Telegram (or a 429 pause) never slows the meeting itself. Each post waits (at most :data:`QUIET_WAIT_S`) until
the meeting waits on its models (:meth:`board.room.convene.BoardRoom.quiet`): its few ms of CPU then never land
between two rounds, on the meeting's critical path. Everything is sent through
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
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.render import format_decision
from board.room.table import PlaceKind
from board.tasks import finish_tasks
from bot.channels.meeting_lines import (
    StoredTable,
    contribution_item,
    contribution_line,
    control_item,
    control_line,
    echoed,
)
from bot.channels.meeting_posts import MeetingPosts, Posted, PostMark, retold
from bot.channels.telegram.meeting_thread import (
    item_key,
    pointer_text,
    stored_sequence,
    stored_statements,
    thread_name,
    topic_link,
)
from bot.channels.telegram.outbound import TYPING_REFRESH_S, DeliveryUnknown, Outbound, Target, ThreadNotFound
from bot.channels.telegram.role_bots import RoleBots
from bot.channels.telegram.topics import Topics
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendFailed, SendProgress

if TYPE_CHECKING:
    from telegram import Message

    from board.room.convene import BoardRoom

__all__ = ["QUIET_WAIT_S", "REPLY_FIRST_S", "STATUS_INTERVAL_S", "STATUS_RESERVE", "ButtonsPosted", "MeetingView",
           "StatusThrottle"]

log = logging.getLogger("sabha.telegram.meeting")

STATUS_INTERVAL_S = 3.0
REPLY_FIRST_S = 5.0  # longest a meeting's first post waits for the reply to the message that called it
#: longest a post waits for its meeting to be waiting on its models (a paused one, one waiting on something else)
QUIET_WAIT_S = 1.0
_REPLIES_KEPT = 256  # replies remembered for meetings not seen yet
STATUS_RESERVE = 3  # budget tokens a status edit leaves for the meeting's posts (capped below the chat's burst)
_IDLE_FLOOR_S = 0.05  # shortest wait before looking at the budget again
#: the status line's phase while an applied control holds the meeting
_CONTROL_PHASES = {"pause": "paused: no new round until /resume", "resume": "resumed: the next round starts",
                   "wrap": "wrapping up: the chair decides after this round", "cancel": "cancelled"}
_MARKUP = re.compile(r"([\\`*_\[\]~|#>])")


def _as_data(text: str) -> str:
    """A user's words inside a Markdown post, shown as written (no formatting, no links)."""
    return _MARKUP.sub(r"\\\1", text)


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


PostKind = Literal["status", "statement", "pointer", "table", "decision", "minutes"]


@dataclass(frozen=True)
class _Post:
    """One message a meeting still has to send."""

    kind: PostKind
    target: Target
    text: str = ""
    header: str = ""
    role: str | None = None
    buttons: tuple[Button, ...] = ()
    item: str = ""  # its key in the posted record (bot.channels.meeting_posts); "" = not recorded
    again: bool = False  # it may have arrived before a restart: sent once more, headed as possibly repeated


#: (meeting id, chat id, message id): the message that carries the meeting's decision buttons
ButtonsPosted = Callable[[str, int, int], Awaitable[None]]


@dataclass
class _Meeting:
    """What the view knows about one meeting."""

    event: MeetingEvent
    home: Target  # where the status, statements, decision and minutes go (the meeting's topic in a forum)
    in_forum: bool
    origin: Target | None = None  # where it was called from, when its own topic is elsewhere (gets a pointer)
    thread: int | None = None  # its own forum topic
    resumed: bool = False  # it goes on after a restart: caught up from its record first
    marks: dict[str, Posted] = field(default_factory=dict)  # what was posted (bot.channels.meeting_posts)
    speaking: dict[str, str] = field(default_factory=dict)  # role -> label of who is speaking now
    typed_at: float | None = None
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
    retold: bool = False  # it ended before this start and is told again (retell_ended): caught up if begun here
    shown_before: bool = False  # told again, and its record says all of it was shown (or none of it was ours)

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
                 posted: ButtonsPosted | None = None, room: BoardRoom | None = None,
                 record: MeetingPosts | None = None, texts: ChannelTexts | None = None,
                 role_bots: RoleBots | None = None) -> None:
        self.outbound = outbound
        self.role_bots = role_bots  # a statement of a role with a bot of its own is sent by that bot
        self.room = room  # the meetings' records and places (None: no topic registered, no catch-up)
        self.record = record  # what was posted (None: nothing recorded)
        self.again_heading = (texts or ChannelTexts()).possibly_repeated
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

    def catches_up(self) -> bool:
        """It posts from its record (:class:`board.room.subscribers.CatchesUp`): told again at a start, the meetings
        that ended lately post what a stop kept from them."""
        return self.record is not None and self.room is not None

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
            meeting = self._meetings[event.meeting_id] = _Meeting(
                event=event, home=home, in_forum=in_forum, resumed=event.kind == MeetingEventKind.RESUMED,
                retold=retold(event), origin=Target(chat_id, origin.thread_id) if in_forum else None)
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
            if not m.resumed:
                m.posts.append(_Post("status", m.home, item="status"))
        elif e.kind == "framed":
            m.agenda = e.text
            m.phase = "round 1: specialists answer"
        elif e.kind == "speaking" and e.role:
            m.speaking[e.role] = f"{e.emoji or ''} {e.name or m.names.get(e.role) or e.role}".strip()
        elif e.kind == "agent_spoke" and e.role:
            if e.round:
                m.phase = f"round {e.round}: specialists answer"
            m.speaking.pop(e.role, None)
            m.spoke[e.role] = m.spoke.get(e.role, 0) + 1
            if e.name:
                m.names[e.role] = f"{e.emoji or ''} {e.name}".strip()
            label = f"{e.emoji or ''} {e.name or e.role}".strip()
            self._queue_statement(m, e.role, label, e.text, e.round or m.round)
        elif e.kind in ("contribution", "control"):
            self._queue_table(m, e.kind, e.data, e.text)
            if e.kind == "control" and not e.data.get("refused"):
                m.phase = _CONTROL_PHASES.get(str(e.data.get("control")), m.phase)
        elif e.kind == "absent" and e.role:
            m.speaking.pop(e.role, None)
            m.absent[e.role] = e.text
        elif e.kind == "disagreement":
            m.disagreements += 1
        elif e.kind == "consensus":
            m.consensus += 1
        elif e.kind == "round_done":
            m.phase = f"round {m.round} done"
            m.speaking.clear()
        elif e.kind == "decision":
            m.phase = "decided"
            m.speaking.clear()
            if not self._was_sent(m, "decision"):
                m.posts.append(self._decision_post(m, e))
        elif e.kind == "resumed":
            m.phase = f"resumed after a restart ({e.data.get('phase') or e.text or 'where it stopped'})"
        elif e.kind == "ended":
            reason = str(e.data.get("stop_reason") or e.text)
            m.phase = f"ended ({reason})" + (f": {e.data['error']}" if e.data.get("error") else "")
            m.speaking.clear()
            minutes = str(e.data.get("minutes") or "").strip()
            if minutes and not self._was_sent(m, "minutes"):
                m.posts.append(_Post("minutes", m.home, minutes, "📝 Minutes", item="minutes"))
            m.ended = True
        if m.throttle is not None:
            m.throttle.update(self.status_text(m))

    @staticmethod
    def _decision_post(m: _Meeting, e: MeetingEvent) -> _Post:
        return _Post("decision", m.home, format_decision(e), "🏛 Board decision",
                     buttons=decision_buttons(e.meeting_id), item="decision")

    def _queue_statement(self, m: _Meeting, role: str, label: str, text: str, round_no: int, *,
                         front: list[_Post] | None = None, again: bool = False) -> None:
        """A statement in the meeting's place, after a pointer in the speaker's own topic the first time (both
        skipped when the posted record has them, or they are queued already)."""
        posts = front if front is not None else m.posts
        queued = {p.item for p in m.posts} | {p.item for p in posts}
        thread = self.topics.thread_for(role) if m.in_forum and self.topics is not None else None
        pointer = item_key("pointer", role)
        called_there = m.origin is not None and m.origin.topic == thread  # that topic has the pointer already
        if thread is not None and not called_there and pointer not in queued and not self._was_sent(m, pointer):
            posts.append(_Post("pointer", Target(m.home.chat_id, thread), role=role, item=pointer))
        item = item_key("statement", role, round_no)
        if item in queued or self._was_sent(m, item):
            return
        posts.append(_Post("statement", m.home, text, f"{label} · board meeting, round {round_no}", role,
                           item=item, again=again or self._may_have_left(m, item)))

    def _queue_table(self, m: _Meeting, kind: str, data: dict[str, Any], text: str, *,
                     front: list[_Post] | None = None) -> None:
        """A contribution or an applied control as one line in the meeting's place (:mod:`..meeting_lines`);
        a contribution written in its topic is there already as the person's own message: not echoed (one written
        in General, the meeting's origin, is)."""
        if kind == "contribution":
            if echoed(data, "telegram", "" if m.home.thread_id is None else str(m.home.thread_id)):
                return
            item, line = contribution_item(data), contribution_line(data, text, label_for=self._label, quote=_as_data)
        else:
            item, line = control_item(data), control_line(data, text, quote=_as_data)
        posts = front if front is not None else m.posts
        if item and (item in {p.item for p in m.posts} | {p.item for p in posts} or self._was_sent(m, item)):
            return
        posts.append(_Post("table", m.home, line, item=item, again=bool(item) and self._may_have_left(m, item)))

    @staticmethod
    def _was_sent(m: _Meeting, item: str) -> bool:
        mark = m.marks.get(item)
        return mark is not None and mark.mark is PostMark.SENT

    @staticmethod
    def _may_have_left(m: _Meeting, item: str) -> bool:
        mark = m.marks.get(item)
        return mark is not None and mark.mark is PostMark.SENDING

    # -- the worker --------------------------------------------------------------------

    async def _work(self, m: _Meeting) -> None:
        try:
            if self.record is not None and not m.resumed:  # told again after a start, it is caught up
                try:
                    await self.record.seen(m.id, m.home.chat_id)
                except Exception as exc:  # noqa: BLE001 - shown all the same; only a kill's catch-up misses it
                    log.warning("telegram: meeting %s is not recorded as seen here (%s)", m.id, exc)
            await self._reply_first(m)
            await self._prepare(m)
            while True:
                m.wake.clear()
                post = self._next_post(m)
                if post is not None:
                    if self.room is not None and not self.stopping:  # posted while the meeting waits on its models
                        await self.room.quiet(m.id, at_most=QUIET_WAIT_S)
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
            await self._shown(m)
        except asyncio.CancelledError:
            self._report_cut(m)
            raise
        finally:
            self._meetings.pop(m.id, None)

    async def _shown(self, m: _Meeting) -> None:
        """Its output is all out (or given up on, logged): marked ``done`` in the posted record, so a start that
        tells it again (:meth:`board.room.convene.BoardRoom.retell_ended`) shows nothing of it twice."""
        if self.record is None or m.shown_before or not m.ended:
            return
        try:
            await self.record.sent(m.id, m.home.chat_id, "done", None)
        except Exception as exc:  # noqa: BLE001 - told again at a start, it only edits its status once more
            log.warning("telegram: meeting %s is not marked as all shown (%s)", m.id, exc)

    async def _prepare(self, m: _Meeting) -> None:
        """Before the first post: what was posted already, the meeting's own topic, and (resumed) the catch-up."""
        try:
            if self.record is not None:
                m.marks = await self.record.of(m.id, m.home.chat_id)
                if m.retold and (self._was_sent(m, "done") or not m.marks):  # all of it shown, or it was never
                    m.shown_before = m.ended = True  # seen here (held where Telegram had no view): left alone
                    m.posts.clear()
                    if m.marks:
                        log.info("telegram: meeting %s was all shown before this start; nothing of it is posted "
                                 "again", m.id)
                    return
            if m.in_forum:
                await self._open_thread(m)
            if m.resumed:
                await self._catch_up(m)
        except Exception:  # show the rest of the meeting where it was called
            log.exception("telegram: preparing the thread of meeting %s failed", m.id)

    async def _open_thread(self, m: _Meeting) -> None:
        """The meeting's own forum topic: the one recorded (a resumed meeting's), else created now and recorded;
        registered as the meeting's ``thread`` place. When it cannot be created the meeting posts in General.

        A topic whose creation was cut short by a stop (marked ``sending``, no id: Telegram may have made it, and the
        Bot API cannot list a forum's topics to find it) is opened once more, named as opened again
        (:func:`.meeting_thread.thread_name`), with a log line naming the one that may be left empty; when that
        second creation was cut short too the meeting is shown in General: never a third topic."""
        chat = m.home.chat_id
        mark = m.marks.get("thread")
        thread = int(mark.message_id) if mark is not None and mark.mark is PostMark.SENT and mark.message_id else None
        if thread is None:
            item, name = "thread", thread_name(m.event.topic)
            if self._may_have_left(m, "thread"):
                if self._may_have_left(m, "thread:again"):
                    log.error("telegram: meeting %s: Sabha stopped twice while Telegram was creating its topic %r "
                              "(each may exist, empty: delete them by hand); it is shown in General instead",
                              m.id, name)
                    return
                item, name = "thread:again", thread_name(m.event.topic, again=True)
                log.warning("telegram: meeting %s: Sabha stopped while Telegram was creating its topic %r (it may "
                            "exist: the Bot API cannot list topics to find it); opening another, named %r; if "
                            "the first one is there, empty, in chat %s, delete it by hand",
                            m.id, thread_name(m.event.topic), name, chat)
            progress = self.record.progress(m.id, chat, item) if self.record is not None else None
            try:
                thread = await self.outbound.open_topic(chat, name, progress=progress)
            except SendFailed as exc:
                log.error("telegram: could not open a topic for meeting %s (%s); it is shown in General instead",
                          m.id, exc)
                return
            if self.record is not None:
                await self.record.sent(m.id, chat, "thread", thread)
                if item != "thread":
                    await self.record.sent(m.id, chat, item, thread)
            m.marks["thread"] = Posted("thread", PostMark.SENT, str(thread))
            log.info("telegram: meeting %s has its own topic %d in chat %s", m.id, thread, chat)
        m.thread = thread
        if self.room is not None:
            try:  # what is written there finds the meeting (board.room.table)
                await self.room.table.add_place(m.id, "telegram", str(chat), thread, PlaceKind.THREAD)
            except Exception as exc:  # noqa: BLE001 - the meeting is still shown there
                log.warning("telegram: topic %d of meeting %s is not recorded as its place (%s): messages written "
                            "there are not taken as contributions", thread, m.id, exc)
        m.home = Target(chat, thread)
        if m.origin is not None and m.origin.topic != thread and not self._was_sent(m, "pointer:origin"):
            pointer = _Post("pointer", m.origin, item="pointer:origin")  # after the status: it links to the topic
            m.posts.insert(1 if m.posts and m.posts[0].kind == "status" else 0, pointer)

    async def _catch_up(self, m: _Meeting) -> None:
        """A meeting resumed after a restart: the status found again (or posted), then every stored statement
        (and a stored decision) not posted yet, in order, before what the meeting says from now on."""
        if self.room is None:
            return
        details = await self.room.store.details(m.id)
        row = await self.room.store.get(m.id)
        front: list[_Post] = []
        if not m.participants:
            m.participants = [str(p["role"]) for p in details.get("participants") or []
                              if p.get("status") == "present" or p.get("role")]
            for role in m.participants:
                m.names.setdefault(role, self._label(role))
        status = m.marks.get("status")
        if status is not None and status.mark is PostMark.SENT and status.message_id:
            m.status_id = int(status.message_id)
            m.throttle = StatusThrottle(self.status_interval, clock=self.clock)
            m.throttle.shown_now("")
            m.throttle.update(self.status_text(m))
        else:
            front.append(_Post("status", m.home, item="status", again=status is not None))
        statements = stored_statements(details, self._label)
        for said in stored_sequence(statements, details):
            if isinstance(said, StoredTable):
                self._queue_table(m, said.kind, said.data, said.text, front=front)
                continue
            m.spoke[said.role] = m.spoke.get(said.role, 0) + 1
            m.round = max(m.round, said.round)
            self._queue_statement(m, said.role, said.label, said.text, said.round, front=front)
        if row is not None and row.decision and not self._was_sent(m, "decision") \
                and all(p.item != "decision" for p in m.posts):
            front.append(self._decision_post(m, MeetingEvent(MeetingEventKind.DECISION, m.id, row.topic,
                                                             data={"decision": row.decision})))
        m.posts.extendleft(reversed(front))
        log.info("telegram: meeting %s resumed: %d stored statement(s), %d item(s) to post now", m.id,
                 len(statements), len(front))

    def _label(self, role: str) -> str:
        try:
            return self.label_for(role)
        except Exception:  # noqa: BLE001 - a missing soul must not hide the meeting
            return role

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
                        "(the decision and minutes were posted first); `sabha meetings show %s` has them (a meeting "
                        "that goes on after the restart posts them first)", statements, m.id, m.id)
        return None

    def _report_cut(self, m: _Meeting) -> None:
        left = ([m.current] if m.current is not None else []) + list(m.posts)
        kinds: list[str] = [p.kind for p in left]
        if m.throttle is not None and m.throttle.pending:
            kinds.append("final status")
        if not kinds:
            return
        statements, pointers = kinds.count("statement"), kinds.count("pointer")
        parts = ([f"{statements} statement(s)"] if statements else []) + (
            [f"{pointers} pointer(s) to its topic"] if pointers else []) + [
            k for k in kinds if k not in ("statement", "pointer")]
        self.dropped += statements
        log.warning("telegram: shutdown cut the output of meeting %s short: %s not posted to Telegram; "
                    "`sabha meetings show %s` has them, and the next start posts them (first, if the meeting goes on)",
                    m.id, ", ".join(parts), m.id)

    async def _send_post(self, m: _Meeting, post: _Post) -> None:
        if m.shown_before or (post.item and self._was_sent(m, post.item)):
            return
        if post.item and not post.again and self._may_have_left(m, post.item):
            # its request was out when Sabha stopped: once more, headed as possibly repeated, whatever the item
            # (a post queued from an event that came before the record was read could not know)
            log.warning("telegram: the %s of meeting %s may have arrived before Sabha stopped; sending it once more, "
                        "marked as possibly repeated", post.item, m.id)
            post = replace(post, again=True)
        if post.kind == "status":
            await self._open_status(m, post)
        elif post.kind == "statement":
            await self._post_statement(m, post)
        elif post.kind == "pointer":
            await self._post_pointer(m, post)
        elif post.kind == "decision" and post.buttons:
            await self._post_decision(m, post)
        else:
            try:
                await self._post(m, post, m.home)
            except SendFailed as exc:
                log.error("telegram: meeting output not delivered: %s", exc)

    async def _post(self, m: _Meeting, post: _Post, target: Target, text: str | None = None) -> list[Message]:
        """Send one item to ``target``, its request marked in the posted record as it leaves and the item recorded
        as sent once it is. When it may or may not have arrived it is sent once more at once, headed as possibly
        repeated (the intake's rule for replies). Raises :class:`SendFailed`."""
        body, header = (post.text if text is None else text), post.header
        if post.again:  # the line first, above the item's own header
            body = f"{self.again_heading}\n\n" + (f"**{header}**\n\n" if header else "") + body
            header = ""
        progress: SendProgress | None = None
        if self.record is not None and post.item:
            progress = self.record.progress(m.id, m.home.chat_id, post.item)
        try:
            sent = await self._send_as(post, target, body, header, progress)
        except DeliveryUnknown as exc:
            if post.again or not post.item:
                raise
            log.warning("telegram: the %s of meeting %s may not have arrived (%s); sending it once more, marked as "
                        "possibly repeated", post.item, m.id, exc)
            return await self._post(m, replace(post, again=True), target, text)
        first = sent[0].message_id if sent else None
        if self.record is not None and post.item:
            await self.record.sent(m.id, m.home.chat_id, post.item, first)
        if post.item:
            m.marks[post.item] = Posted(post.item, PostMark.SENT, None if first is None else str(first))
        return sent

    async def _idle(self, m: _Meeting) -> None:
        """Nothing to post: show who is speaking (typing), edit the status if it is due and the budget can spare
        it, else wait."""
        typing_in = self._typing_due_in(m)
        if typing_in == 0:
            m.typed_at = self.clock()
            await self.outbound.typing(m.home)
            return
        throttle = m.throttle
        if throttle is None or m.status_id is None or not throttle.pending:
            await self._wait(m, typing_in, self.sleep)
            return
        due_in = throttle.wait_s()
        if due_in > 0:
            await self._wait(m, due_in if typing_in is None else min(due_in, typing_in), self.sleep)
            return
        text = throttle.wanted or ""
        done = await self.outbound.edit_if_idle(m.home, m.status_id, text, reserve=STATUS_RESERVE)
        if done is None:  # the budget is low or others are waiting: look again when it may have refilled
            flood = self.outbound.flood
            await self._wait(m, max(flood.spare_in(m.home.chat_id, STATUS_RESERVE), _IDLE_FLOOR_S), flood.sleep)
            return
        throttle.edited(text)

    def _typing_due_in(self, m: _Meeting) -> float | None:
        """Seconds until "typing…" is due again in the meeting's place (None: nobody is speaking, or the chat is
        paused by flood control: posts first)."""
        if not m.speaking or m.ended or self.outbound.flood.paused_for(m.home.chat_id) > 0:
            return None
        if m.typed_at is None:
            return 0.0
        return max(0.0, m.typed_at + TYPING_REFRESH_S - self.clock())

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

    async def _open_status(self, m: _Meeting, post: _Post) -> None:
        text = self.status_text(m)
        try:
            [first, *_] = await self._post(m, post, m.home, text)
        except SendFailed as exc:
            log.error("telegram: could not post the status of meeting %s: %s", m.id, exc)
            return
        m.status_id = first.message_id
        m.throttle = StatusThrottle(self.status_interval, clock=self.clock)
        m.throttle.shown_now(text)
        m.throttle.update(self.status_text(m))  # events that came while it was being sent

    async def _send_as(self, post: _Post, target: Target, body: str, header: str,
                       progress: SendProgress | None) -> list[Message]:
        """A statement in the forum from its role's own bot when it has one (the main bot when it has none, or
        Telegram refuses it: :mod:`.role_bots`); everything else from the main bot."""
        bots = self.role_bots
        if bots is None or post.kind != "statement" or target.chat_id != self.forum_id or not bots.sends_as(post.role):
            return await self.outbound.send(target, body, header=header, progress=progress, buttons=post.buttons)
        try:
            return await bots.outbound_for(post.role).send(target, body, header=header, progress=progress)
        except SendFailed as exc:
            if not await bots.on_failure(post.role, exc):
                raise
        return await self.outbound.send(target, body, header=header, progress=progress)

    async def _post_statement(self, m: _Meeting, post: _Post) -> None:
        """A statement in the meeting's place (its topic; General if that topic was deleted meanwhile)."""
        try:
            await self._post(m, post, m.home)
        except ThreadNotFound as exc:
            log.error("telegram: the topic of meeting %s is gone (%s); its posts go to General from now on", m.id, exc)
            m.home, m.thread = m.home.general(), None
            try:
                await self._post(m, post, m.home)
            except SendFailed as again:
                log.error("telegram: statement of %s in meeting %s not delivered: %s", post.role, m.id, again)
        except SendFailed as exc:
            log.error("telegram: statement of %s in meeting %s not delivered: %s", post.role, m.id, exc)

    async def _post_pointer(self, m: _Meeting, post: _Post) -> None:
        """One line in an advisor's topic (or where the meeting was called) pointing to the meeting's topic."""
        if m.thread is None:
            return
        text = pointer_text(m.event.topic, topic_link(m.home.chat_id, m.thread))
        try:
            await self._post(m, post, post.target, text)
        except ThreadNotFound as exc:
            log.error("telegram: %s", exc)
            if self.topics is not None and post.role:
                await self.topics.forget(post.role)
        except SendFailed as exc:
            log.error("telegram: the pointer to meeting %s in %s's topic was not delivered: %s", m.id, post.role, exc)

    async def _post_decision(self, m: _Meeting, post: _Post) -> None:
        """The decision with its buttons under its last message, and that message told to ``posted``."""
        try:
            sent = await self._post(m, post, m.home)
        except SendFailed as exc:
            log.error("telegram: the decision of meeting %s was not delivered: %s", m.id, exc)
            return
        if sent and self.posted is not None:
            await self.posted(m.id, m.home.chat_id, sent[-1].message_id)

    # -- text ------------------------------------------------------------------------

    @staticmethod
    def status_text(m: _Meeting) -> str:
        """The status message's Markdown."""
        lines = [f"🏛 **Board meeting:** {m.event.topic}", f"Status: {m.phase}"]
        if m.round:
            lines.append(f"Round: {m.round}")
        if m.speaking:
            lines.append(f"Speaking: {', '.join(m.speaking.values())}")
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

