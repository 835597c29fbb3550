"""Every meeting's events, numbered: what the live meeting page replays and follows.

:class:`MeetingFeed` is one more meeting subscriber (``BoardRoom.subscribe``): each event a
meeting emits gets the next sequence number *of that meeting* (1, 2, 3 ...: the SSE ``id``) and is
kept in the meeting's :class:`MeetingLog`, so a page opened halfway, or a stream that
reconnects with ``Last-Event-ID``, gets exactly the events after the ones it has: no gap, no
repeat. The logs of the last :data:`KEEP_MEETINGS` meetings stay in memory (a meeting older than
that, or from before this start, is rendered from the state db instead).

Live watchers are :class:`Listener` objects with a bounded queue. Handing an event to them never
waits: a watcher whose queue is full is marked :attr:`Listener.overflowed` and dropped (its
browser reconnects and replays from the log), so a slow browser never slows a meeting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

from board.room.meeting.events import MeetingEvent, MeetingEventKind

__all__ = ["KEEP_MEETINGS", "QUEUE_SIZE", "FeedEvent", "Listener", "MeetingFeed", "MeetingLog"]

KEEP_MEETINGS = 32
QUEUE_SIZE = 256
MAX_EVENTS = 5000  # per meeting: far above what a meeting says; past it the oldest are forgotten


@dataclass(frozen=True)
class FeedEvent:
    """A meeting event and its number within the meeting."""

    seq: int
    event: MeetingEvent


@dataclass(eq=False)
class Listener:
    """One live watcher of one meeting (an open SSE stream)."""

    queue: asyncio.Queue[FeedEvent | None] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    overflowed: bool = False  # dropped for a full queue (or the meeting left the feed): end the stream


@dataclass(eq=False)
class MeetingLog:
    """What one meeting said so far, and who is watching it."""

    meeting_id: str
    events: list[FeedEvent] = field(default_factory=list)
    listeners: set[Listener] = field(default_factory=set)
    last_seq: int = 0
    #: what the stream made of each event, by seq (the same for every watcher: rendered once, sent to all)
    frames: dict[int, bytes] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        """Whether the meeting's last event was its end."""
        return bool(self.events) and self.events[-1].event.kind == MeetingEventKind.ENDED

    def after(self, seq: int) -> list[FeedEvent]:
        """The events numbered above ``seq``, in order."""
        return [e for e in self.events if e.seq > seq]


class MeetingFeed:
    """See the module docstring; call it with each :class:`MeetingEvent` (it is a ``Subscriber``)."""

    def __init__(self, *, keep: int = KEEP_MEETINGS, queue_size: int = QUEUE_SIZE) -> None:
        self.keep = keep
        self.queue_size = queue_size
        self._logs: OrderedDict[str, MeetingLog] = OrderedDict()
        self.dropped = 0  # watchers dropped for a full queue, since start
        self.closed = False  # the daemon is stopping: every stream ends

    async def __call__(self, event: MeetingEvent) -> None:
        self.publish(event)

    def publish(self, event: MeetingEvent) -> FeedEvent:
        """Number ``event``, keep it, hand it to the meeting's watchers (never waiting)."""
        log = self._logs.get(event.meeting_id)
        if log is None:
            log = self._logs[event.meeting_id] = MeetingLog(event.meeting_id)
            while len(self._logs) > self.keep:
                _, old = self._logs.popitem(last=False)
                for listener in old.listeners:
                    listener.overflowed = True
        log.last_seq += 1
        item = FeedEvent(log.last_seq, event)
        log.events.append(item)
        if len(log.events) > MAX_EVENTS:
            del log.events[: len(log.events) - MAX_EVENTS]
            for seq in [s for s in log.frames if s < log.events[0].seq]:
                del log.frames[seq]
        for listener in list(log.listeners):
            try:
                listener.queue.put_nowait(item)
            except asyncio.QueueFull:
                listener.overflowed = True
                log.listeners.discard(listener)
                self.dropped += 1
        return item

    def close(self) -> None:
        """End every live stream (the daemon is stopping): each listener gets ``None``; streams that follow a
        meeting's record (:attr:`closed`) end at their next look."""
        self.closed = True
        for log in self._logs.values():
            for listener in log.listeners:
                try:
                    listener.queue.put_nowait(None)
                except asyncio.QueueFull:
                    listener.overflowed = True

    def log(self, meeting_id: str) -> MeetingLog | None:
        """The meeting's log, if it ran (or started) since this process started and is recent."""
        return self._logs.get(meeting_id)

    def watchers(self, meeting_id: str) -> int:
        """How many live watchers the meeting has."""
        log = self._logs.get(meeting_id)
        return len(log.listeners) if log else 0

    @contextlib.contextmanager
    def listen(self, meeting_id: str) -> Iterator[tuple[Listener, MeetingLog]]:
        """Watch a meeting: the listener (events from now on) and its log (the events so far)."""
        log = self._logs.get(meeting_id)
        if log is None:
            log = self._logs[meeting_id] = MeetingLog(meeting_id)
        listener = Listener(asyncio.Queue(self.queue_size))
        log.listeners.add(listener)
        try:
            yield listener, log
        finally:
            log.listeners.discard(listener)
