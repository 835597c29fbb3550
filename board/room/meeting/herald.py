"""A meeting's events, told to its subscribers in the order the meeting made them: :class:`Herald`.

The meeting does not wait for its displays, nor for the write a shown event stands on: :meth:`Herald.post`
queues an event and returns; one task per meeting takes the events in order. An event may wait for a write first
(``after``): a statement is shown once it is stored (:func:`board.room.meeting.resume.queue_statement`), so a
channel never posts what a restart would not find. An event whose write failed or was refused (the fence of a
meeting another replica holds now) is not shown (logged); the meeting itself learns of it at its next phase
boundary.

Each subscriber has a lane of its own: it hears the meeting's events one after another, in the meeting's order,
but no subscriber waits for another. A slow one (the decision's record written to six sessions, a review
scheduled at the end) holds up neither the channels' views (the decision is posted at once) nor the other
bookkeeping (the end's is done beside the decision's, not after it). :meth:`Herald.settle` waits until everything
queued has been told to every subscriber but the bookkeeping ones (the meeting's end, before its result is
returned); :meth:`Herald.finished` waits for those too (the room, in the background, before it marks the meeting's
bookkeeping done).

A subscriber wrapped in :class:`board.room.subscribers.Bookkeeping` has a lane like any other, which
:meth:`Herald.settle` does not wait for.

A subscriber wrapped in :class:`board.room.subscribers.ToldFirst` is what the others' view stands on (a decision's
action items dated from what the chair wrote): it has a lane of its own, and each other subscriber's lane tells it
an event only once every told-first lane is done with that event. One wrapped in
:class:`board.room.subscribers.ToldAtOnce` (it shows only what the event carries) does not wait for them.
:meth:`Herald.settle` does not wait for a told-first lane itself, only for the displays' lanes (which wait for it
when they stand on it): a meeting whose displays all show what the events carry (a forum's Telegram view) returns
without waiting for its items' dating; :meth:`Herald.finished` waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from board.room.meeting.events import MeetingEvent, Subscriber
from board.room.subscribers import Bookkeeping, ToldAtOnce, ToldFirst

__all__ = ["Herald"]

log = logging.getLogger("sabha.meeting")

#: what tells one subscriber one event, a failure logged (:meth:`board.room.meeting.context.MeetingContext.tell`)
Tell = Callable[[Subscriber, MeetingEvent], Awaitable[None]]


@dataclass(frozen=True)
class _Told:
    """One event on a lane: what it waits for first (the told-first lanes done with it), and, on a told-first
    lane, the future set once this lane is done with it."""

    event: MeetingEvent
    waits: tuple[asyncio.Future[None], ...] = ()
    done: asyncio.Future[None] | None = None


@dataclass(eq=False)
class _Lane:
    """One subscriber's events still to tell, in order, and the task telling them."""

    subscriber: Subscriber
    events: deque[_Told] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None


class Herald:
    """One meeting's queue of events to tell, the task taking them in order, and a lane per subscriber."""

    def __init__(self) -> None:
        self._queue: deque[tuple[MeetingEvent, asyncio.Future[object] | None, Sequence[Subscriber], Tell]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._lanes: dict[int, _Lane] = {}

    def post(self, event: MeetingEvent, subscribers: Sequence[Subscriber], tell: Tell,
             after: asyncio.Future[object] | None = None) -> None:
        """Tell ``event`` to each of ``subscribers`` (with ``tell``) after every event posted before it, and once
        ``after`` is done."""
        self._queue.append((event, after, subscribers, tell))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"herald {event.meeting_id}")

    async def _run(self) -> None:
        while self._queue:
            event, after, subscribers, tell = self._queue[0]
            try:
                if after is not None and not await _written(after, event):
                    continue
                for subscriber in subscribers:
                    if isinstance(subscriber, ToldAtOnce):  # it reads nothing the told-first ones write
                        self._hand(subscriber, _Told(event), tell)
                first = tuple(self._first(subscriber, event, tell) for subscriber in subscribers
                              if isinstance(subscriber, ToldFirst))
                for subscriber in subscribers:
                    if not isinstance(subscriber, ToldFirst | ToldAtOnce):
                        self._hand(subscriber, _Told(event, first), tell)
            finally:
                self._queue.popleft()

    def _first(self, subscriber: Subscriber, event: MeetingEvent, tell: Tell) -> asyncio.Future[None]:
        """``event`` onto a told-first lane; the future set once that lane is done with it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._hand(subscriber, _Told(event, done=done), tell)
        return done

    def _hand(self, subscriber: Subscriber, told: _Told, tell: Tell) -> None:
        """``told`` onto ``subscriber``'s lane (its task started when the lane was idle)."""
        lane = self._lanes.get(id(subscriber))
        if lane is None or lane.subscriber is not subscriber:
            lane = self._lanes[id(subscriber)] = _Lane(subscriber)
        lane.events.append(told)
        if lane.task is None or lane.task.done():
            lane.task = asyncio.get_running_loop().create_task(_tell_in_order(lane, tell),
                                                               name=f"herald {told.event.meeting_id} lane")

    def _busy(self, everyone: bool) -> list[asyncio.Task[None]]:
        lanes = (lane for lane in self._lanes.values()
                 if everyone or not isinstance(lane.subscriber, Bookkeeping | ToldFirst))
        tasks = [self._task, *(lane.task for lane in lanes)]
        return [task for task in tasks if task is not None and not task.done()]

    async def settle(self) -> None:
        """Until every event posted so far has been told to every subscriber but the bookkeeping ones (and the
        told-first ones, waited for here only through the displays that stand on them)."""
        while busy := self._busy(False):
            for task in busy:
                await asyncio.shield(task)

    async def finished(self) -> None:
        """Until every event posted so far has been told to every subscriber, the bookkeeping ones included."""
        while busy := self._busy(True):
            for task in busy:
                await asyncio.shield(task)


async def _tell_in_order(lane: _Lane, tell: Tell) -> None:
    while lane.events:
        told = lane.events[0]
        try:
            if told.waits:  # the told-first lanes done with this event (a failure there is logged, not raised)
                await asyncio.wait(told.waits)
            await tell(lane.subscriber, told.event)
        finally:
            lane.events.popleft()
            if told.done is not None and not told.done.done():
                told.done.set_result(None)  # also when cancelled: nobody waits for a lane that stopped


async def _written(after: asyncio.Future[object], event: MeetingEvent) -> bool:
    """Whether the write ``event`` stands on went through (else it is not shown)."""
    await asyncio.wait([after])  # its outcome is read below; a cancel of the herald itself goes on up
    if after.cancelled() or after.exception() is not None or after.result() is False:
        why = "cancelled" if after.cancelled() else after.exception() or "refused: the meeting is not held here"
        log.warning("meeting %s: %s not shown: what it shows was not stored (%s)", event.meeting_id, event.kind, why)
        return False
    return True
