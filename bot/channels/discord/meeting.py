"""A board meeting called from Discord, in a thread of its own: its statements, the decision with its buttons, the
minutes, each posted exactly once across restarts.

:class:`DiscordMeetings` subscribes to the board's meeting events (:class:`board.room.meeting.MeetingEvent`) and
shows the meetings whose origin is a Discord conversation:

* **the thread**: the first post of a meeting opens a public thread ``🏛 <topic>`` under the channel the meeting
  was called in (:data:`OpenThread`: a question's thread is itself in a channel; the thread goes beside it), and
  the place it was called from gets one line pointing to it (``<#thread>``, a link in Discord). The thread is
  recorded as one of the meeting's places (:meth:`board.room.table.MeetingTable.add_place`), so what the owner
  writes there reaches the meeting. Where no thread can be opened (a DM, a forum post, a refusal) everything goes
  where the meeting was called;
* **in the thread**: an opening line with the agenda, each statement as it finishes (headed by the advisor and
  the round, split at Discord's 2,000 characters), a line for each contribution from elsewhere and each control
  applied (:mod:`bot.channels.meeting_lines`; one written in Discord is not echoed), the decision
  (:func:`board.room.render.format_decision`) with its Ratify / Veto / Revisit buttons under its last message
  (:func:`board.commands.decisions.decision_buttons`, as Discord components: a press is the presser's command,
  :mod:`.interactions`; once it is ruled on they say the verdict, :mod:`.verdicts`), then the minutes.

Every item is recorded (:class:`bot.channels.meeting_posts.MeetingPosts`, keyed by the meeting, this channel and
the place it was called from): ``sending`` as its request leaves (the delivery's progress, marked where the bytes
leave), ``sent`` with its message id once Discord answered; the thread itself is the item ``thread`` (its id as
the message id). A meeting that goes on after a restart (a ``resumed`` event) finds its thread again and posts,
in order, every stored statement and table line not posted yet; an item whose request may have left when Sabha
stopped is posted once more, headed as possibly repeated (never a third time); nothing ``sent`` is posted again.
A meeting that ended while its posts were still queued (a ``kill -9`` then) is told again at the next start
(:meth:`board.room.convene.BoardRoom.retell_ended`) and caught up the same way.
Posts are queued and sent by one worker, in order, so a slow Discord (a 429 waited out by discord.py) never slows
the meeting itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.render import format_decision
from board.room.table import PlaceKind
from bot.channels.discord.followups import split_reply
from bot.channels.meeting_lines import (
    contribution_item,
    contribution_line,
    control_item,
    control_line,
    echoed,
    table_events,
)
from bot.channels.meeting_posts import MeetingPosts, Posted, PostMark, retold
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

if TYPE_CHECKING:
    from board.room.convene import BoardRoom

__all__ = ["THREAD_NAME_CHARS", "ButtonsPosted", "DiscordMeetings", "OpenThread", "Post", "thread_title"]

log = logging.getLogger("sabha.discord")

CHANNEL = "discord"
#: Discord's longest thread name.
THREAD_NAME_CHARS = 100
THREAD_MARK = "🏛"
#: (channel id, text, progress, buttons under it) -> the posted message's id; raises SendFailed.
Post = Callable[[int, str, SendProgress | None, tuple[Button, ...]], Awaitable[int]]
#: (the conversation the meeting was called from, the thread's name) -> (the channel its posts go to: a new
#: thread, or the conversation itself when none can be opened; True when that is a new thread).
OpenThread = Callable[[str, str], Awaitable[tuple[int, bool]]]
#: (meeting id, channel id, message id): the message that carries the meeting's decision buttons
ButtonsPosted = Callable[[str, int, int], Awaitable[None]]


def _digest(text: str) -> str:
    """A stable key for a line that came without an id (the same after a restart)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def thread_title(topic: str) -> str:
    """``🏛 Should we open a Pune office?``, cut (with …) to Discord's 100 characters."""
    name = f"{THREAD_MARK} {' '.join(topic.split())}".strip()
    return name if len(name) <= THREAD_NAME_CHARS else name[:THREAD_NAME_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class _Item:
    """One post a meeting still has to make."""

    key: str  # its item in the posted record ("statement:2:finance", "decision" ...)
    text: str
    buttons: tuple[Button, ...] = ()
    again: bool = False  # its request may have left before a restart: posted once more, marked
    at_origin: bool = False  # posted where the meeting was called (the pointer to its thread), not in the thread


@dataclass
class _Meeting:
    """What the view knows of one meeting."""

    id: str
    topic: str
    origin: str  # the conversation's chat id (where it was called; the posted record's key)
    home: int | None = None  # the channel its posts go to (its thread), once known
    marks: dict[str, Posted] = field(default_factory=dict)
    loaded: bool = False
    queued: set[str] = field(default_factory=set)
    not_ours: bool = False  # told again after a start, never seen here (held where it had no Discord view)


class DiscordMeetings:
    """See the module docstring; pass it to ``BoardRoom.subscribe`` and :meth:`start` it."""

    def __init__(self, post: Post, open_thread: OpenThread, origin_channel: Callable[[str], Awaitable[int]], *,
                 record: MeetingPosts, room: BoardRoom | None = None,
                 label_for: Callable[[str], str] | None = None, texts: ChannelTexts | None = None,
                 buttons_posted: ButtonsPosted | None = None) -> None:
        self.post = post
        self.buttons_posted = buttons_posted  # the decision's buttons are on this message (their verdict, later)
        self.open_thread = open_thread
        self.origin_channel = origin_channel  # the channel of the conversation a meeting was called from
        self.record = record
        self.room = room
        self.label_for = label_for or (lambda role: role)
        self.again_heading = (texts or ChannelTexts()).possibly_repeated
        self.closed = False  # drained at shutdown: nothing more is taken
        self.posted = 0
        self._meetings: dict[str, _Meeting] = {}
        self._queue: asyncio.Queue[tuple[_Meeting, _Item]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def catches_up(self) -> bool:
        """It posts from its record (:class:`board.room.subscribers.CatchesUp`): told again at a start, a meeting
        that ended lately posts what a stop kept from it."""
        return self.room is not None

    def start(self) -> None:
        """Post from now on (what a meeting did before, a resumed one's catch-up included, was queued)."""
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="discord meetings")

    # -- events -> items --------------------------------------------------------------

    async def __call__(self, event: MeetingEvent) -> None:
        origin = event.origin
        if self.closed or origin is None or origin.channel != CHANNEL:
            return
        m = self._meetings.get(event.meeting_id)
        if m is None:
            m = self._meetings[event.meeting_id] = _Meeting(event.meeting_id, event.topic, origin.chat_id)
        try:
            if event.kind == MeetingEventKind.STARTED:  # told again after a start, it is caught up
                try:
                    await self.record.seen(m.id, m.origin)
                except Exception as exc:  # noqa: BLE001 - shown all the same; only a kill's catch-up misses it
                    log.warning("discord: meeting %s is not recorded as seen here (%s)", m.id, exc)
            elif retold(event) and not await self.record.of(m.id, m.origin):
                m.not_ours = True  # it ended before this start, never seen here: left alone
            if m.not_ours:
                if event.kind == MeetingEventKind.ENDED:
                    self._meetings.pop(m.id, None)
                return
            for item in await self._items(m, event):
                self._queue_item(m, item)
        except Exception:  # keep showing the rest of the meeting
            log.exception("discord: showing meeting %s event %s failed", event.meeting_id, event.kind)

    async def _items(self, m: _Meeting, e: MeetingEvent) -> list[_Item]:
        kind = e.kind
        if kind == MeetingEventKind.STARTED:
            return [_Item("opening", f"{THREAD_MARK} **Board meeting:** {e.topic}\nThe advisors speak in turn; the "
                                     "decision and its buttons come at the end.")]
        if kind == MeetingEventKind.RESUMED:
            return await self._catch_up(m)
        if kind == MeetingEventKind.AGENT_SPOKE and e.role:
            label = f"{e.emoji or ''} {e.name or self._label(e.role)}".strip()
            return self._statement(e.role, label, e.text, e.round or 1)
        if kind in (MeetingEventKind.CONTRIBUTION, MeetingEventKind.CONTROL):
            line = self._line(kind.value, e.data, e.text)
            return [] if line is None else [_Item(*line)]
        if kind == MeetingEventKind.DECISION:
            body = f"{THREAD_MARK} **Board decision** on \u201c{e.topic}\u201d\n\n{format_decision(e)}"
            return self._pieces("decision", body, decision_buttons(e.meeting_id))
        if kind == MeetingEventKind.ENDED:
            minutes = str(e.data.get("minutes") or "").strip()
            if minutes:
                return self._pieces("minutes", f"📝 **Minutes** ({e.meeting_id})\n\n{minutes}")
            if e.data.get("error"):
                return [_Item("ended", f"The meeting on \u201c{e.topic}\u201d ended without a decision "
                                       f"({e.data.get('stop_reason') or e.text}).")]
        return []

    def _statement(self, role: str, label: str, text: str, round_no: int) -> list[_Item]:
        return self._pieces(f"statement:{round_no}:{role}", f"**{label}** \u00b7 board meeting, round {round_no}\n"
                                                            f"{text.strip()}")

    @staticmethod
    def _pieces(key: str, body: str, buttons: tuple[Button, ...] = ()) -> list[_Item]:
        """``body`` as Discord messages; the first under ``key``, the next ``key#2`` ...; ``buttons`` under the last."""
        pieces = split_reply(body)
        return [_Item(key if i == 0 else f"{key}#{i + 1}", piece, buttons if i == len(pieces) - 1 else ())
                for i, piece in enumerate(pieces)]

    def _line(self, kind: str, data: dict[str, Any], text: str) -> tuple[str, str] | None:
        """(item, line) of a contribution or an applied control; None for a contribution written in Discord."""
        if kind == MeetingEventKind.CONTRIBUTION.value:
            if echoed(data, CHANNEL):
                return None
            line = contribution_line(data, text, label_for=self._label)
            return contribution_item(data) or f"contribution:{_digest(line)}", line
        line = control_line(data, text)
        return control_item(data) or f"control:{_digest(line)}", line

    async def _catch_up(self, m: _Meeting) -> list[_Item]:
        """A meeting resumed after a restart: its stored statements and table lines, in order (the worker skips
        what the record has as sent)."""
        if self.room is None:
            return []
        try:
            details = await self.room.store.details(m.id)
        except Exception:
            log.exception("discord: reading meeting %s to catch up failed", m.id)
            return []
        keyed: list[tuple[float, int, list[_Item]]] = []
        for i, row in enumerate(details.get("statements") or []):
            role, round_no = str(row["role"]), int(row["round"])
            keyed.append((float(round_no), i, self._statement(role, self._label(role), str(row["text"]), round_no)))
        for i, said in enumerate(table_events(details)):
            line = self._line(said.kind, said.data, said.text)
            if line is not None:
                at = said.round - 0.5 if said.kind == "contribution" else said.round + 0.5
                keyed.append((at, 10_000 + i, [_Item(*line)]))
        log.info("discord: meeting %s resumed: %d stored statement(s) looked at", m.id,
                 len(details.get("statements") or []))
        return [item for _, _, items in sorted(keyed, key=lambda k: (k[0], k[1])) for item in items]

    def _label(self, role: str) -> str:
        try:
            return self.label_for(role)
        except Exception:  # noqa: BLE001 - a missing soul must not hide the statement
            return role

    def _queue_item(self, m: _Meeting, item: _Item) -> None:
        if item.key in m.queued:
            return
        m.queued.add(item.key)
        self._queue.put_nowait((m, item))

    # -- the worker --------------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            m, item = await self._queue.get()
            try:
                await self._send(m, item)
            except SendFailed as exc:
                log.error("discord: the %s of meeting %s was not posted: %s", item.key, m.id, exc)
            except Exception:
                log.exception("discord: posting the %s of meeting %s failed", item.key, m.id)
            finally:
                self._queue.task_done()

    async def _load(self, m: _Meeting) -> None:
        if not m.loaded:
            m.marks = await self.record.of(m.id, m.origin)
            m.loaded = True

    async def _send(self, m: _Meeting, item: _Item) -> None:
        """Post one item into the meeting's thread, unless the record has it as sent."""
        await self._load(m)
        mark = m.marks.get(item.key)
        if mark is not None and mark.mark is PostMark.SENT:
            return
        if mark is not None and mark.mark is PostMark.SENDING:
            item = replace(item, again=True)
        home = await self._home(m)
        if item.at_origin:
            home = await self.origin_channel(m.origin)
        text = f"{self.again_heading}\n\n{item.text}" if item.again else item.text
        progress = self.record.progress(m.id, m.origin, item.key)
        try:
            message_id = await self.post(home, text, progress, item.buttons)
        except SendFailed as exc:
            if exc.outcome is not DeliveryOutcome.MAY_HAVE_ARRIVED or item.again:
                raise
            log.warning("discord: the %s of meeting %s may not have arrived (%s); posting it once more, marked as "
                        "possibly repeated", item.key, m.id, exc)
            await self._send(m, replace(item, again=True))
            return
        await self.record.sent(m.id, m.origin, item.key, message_id)
        m.marks[item.key] = Posted(item.key, PostMark.SENT, str(message_id))
        self.posted += 1
        if item.buttons and item.key.startswith("decision") and self.buttons_posted is not None:
            await self.buttons_posted(m.id, home, message_id)

    async def _home(self, m: _Meeting) -> int:
        """The meeting's thread: found in the record, or opened now (and recorded, and pointed to)."""
        if m.home is not None:
            return m.home
        thread = m.marks.get("thread")
        if thread is not None and thread.message_id:
            m.home = int(thread.message_id)
        else:
            home, opened = await self.open_thread(m.origin, thread_title(m.topic))
            await self.record.sent(m.id, m.origin, "thread", home)
            m.marks["thread"] = Posted("thread", PostMark.SENT, str(home))
            m.home = home
            if opened and self.room is not None:
                await self.room.table.add_place(m.id, CHANNEL, str(home), None, PlaceKind.THREAD)
        if m.home != await self.origin_channel(m.origin):  # a thread of its own: the place it was called from
            await self._send(m, _Item("pointer", f"{THREAD_MARK} The board meets on \u201c{m.topic}\u201d in "
                                                 f"<#{m.home}>", at_origin=True))  # points to it, first
        return m.home

    async def drain(self, timeout: float) -> None:
        """Post what is queued (up to ``timeout``), then stop."""
        self.closed = True
        if self._worker is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), timeout)
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        self._worker = None
