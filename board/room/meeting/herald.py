"""A meeting's events, told to its subscribers in the order the meeting made them: :class:`Herald`.

The meeting does not wait for its displays, nor for the write a shown event stands on: :meth:`Herald.post`
queues an event and returns; one task per meeting tells the subscribers, event after event, in order. An event
may wait for a write first (``after``): a statement is shown once it is stored
(:func:`board.room.meeting.resume.queue_statement`), so a channel never posts what a restart would not find. An
event whose write failed or was refused (the fence of a meeting another replica holds now) is not shown (logged);
the meeting itself learns of it at its next phase boundary. :meth:`Herald.settle` waits until everything queued
has been told (the meeting's end, before its result is returned).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from board.room.meeting.events import MeetingEvent

__all__ = ["Herald"]

log = logging.getLogger("sabha.meeting")

#: what tells the subscribers one event (:meth:`board.room.meeting.context.MeetingContext.tell`)
Tell = Callable[[MeetingEvent], Awaitable[None]]


class Herald:
    """One meeting's queue of events to tell, and the task telling them."""

    def __init__(self) -> None:
        self._queue: deque[tuple[MeetingEvent, asyncio.Future[object] | None, Tell]] = deque()
        self._task: asyncio.Task[None] | None = None

    def post(self, event: MeetingEvent, tell: Tell, after: asyncio.Future[object] | None = None) -> None:
        """Tell ``event`` (with ``tell``) after every event posted before it, and once ``after`` is done."""
        self._queue.append((event, after, tell))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"herald {event.meeting_id}")

    async def _run(self) -> None:
        while self._queue:
            event, after, tell = self._queue[0]
            try:
                if after is not None and not await _written(after, event):
                    continue
                await tell(event)
            finally:
                self._queue.popleft()

    async def settle(self) -> None:
        """Until every event posted so far has been told."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


async def _written(after: asyncio.Future[object], event: MeetingEvent) -> bool:
    """Whether the write ``event`` stands on went through (else it is not shown)."""
    await asyncio.wait([after])  # its outcome is read below; a cancel of the herald itself goes on up
    if after.cancelled() or after.exception() is not None or after.result() is False:
        why = "cancelled" if after.cancelled() else after.exception() or "refused: the meeting is not held here"
        log.warning("meeting %s: %s not shown: what it shows was not stored (%s)", event.meeting_id, event.kind, why)
        return False
    return True
