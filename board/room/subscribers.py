"""How a meeting's subscribers are told its events: :class:`ToldFirst` marks one every other subscriber waits for,
:class:`ToldAtOnce` one that need not wait for it, :class:`Bookkeeping` one the meeting's return does not wait for.

The herald (:mod:`board.room.meeting.herald`) gives each subscriber a lane of its own, so a slow one holds up no
other. A subscriber wrapped in :class:`ToldFirst` is what the others' view stands on (a decision's action items
dated from what the chair wrote, so no page shows a due date as unreadable while it is being read): each event is
told to it, and it is done, before any other subscriber (but a :class:`ToldAtOnce` one) hears that event. It has a
lane of its own: the meeting returns once its displays are told, waiting for it only through the displays that
stand on it; the mark that the end's bookkeeping ran waits for it.

A subscriber wrapped in :class:`ToldAtOnce` shows only what each event carries and reads nothing a
:class:`ToldFirst` one writes (the Telegram view posts the decision from the event: its items' due dates as the chair
wrote them): it is told each event as soon as it is the meeting's next, beside the :class:`ToldFirst` subscribers, not
after them, so what a user waits for (the decision's message) does not wait for the items' dating (a few db writes
per item). A stop between the two loses nothing: a start dates what is left (``Reminders.sync``).

A subscriber wrapped in :class:`Bookkeeping` keeps records after the fact (the decision written into the members'
sessions, the review scheduled): nobody looks at a meeting waiting for it, so the meeting returns once its displays
are told, and its bookkeeping finishes in the room's background. A durable mark (``meetings.bookkept_at``) is set
once every bookkeeping subscriber is done with the meeting's end; a start finds an ended meeting without it (a kill
cut its bookkeeping short) and tells its bookkeeping subscribers its end once more, with ``again`` in the event's
data: each then does only what is not done yet (:meth:`board.room.convene.BoardRoom.bookkeep_left`).

A display that posts from a record of what it posted (:class:`CatchesUp`: a channel's meeting view) is told, at a
start, the end of each meeting that ended lately once more (:meth:`board.room.convene.BoardRoom.retell_ended`): a
``kill -9`` between a meeting's end and its last post leaves nothing unposted, and nothing is posted twice.

Kept apart from the meeting package so building a board (``sabha ask`` included) does not import the meeting
engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from board.room.meeting.events import MeetingEvent, Subscriber

__all__ = ["AGAIN", "Bookkeeping", "CatchesUp", "ToldAtOnce", "ToldFirst"]

#: in the data of an event told once more to a bookkeeping subscriber after a start (do only what is not done)
AGAIN = "again"


@dataclass(frozen=True)
class ToldFirst:
    """A subscriber every other subscriber waits for, event by event (see the module docstring)."""

    subscriber: Subscriber

    async def __call__(self, event: MeetingEvent) -> None:
        await self.subscriber(event)


@dataclass(frozen=True)
class ToldAtOnce:
    """A display that shows only what each event carries: told each event without waiting for the :class:`ToldFirst`
    subscribers (see the module docstring). Subscribe one instance: its lane is kept by identity."""

    subscriber: Subscriber

    async def __call__(self, event: MeetingEvent) -> None:
        await self.subscriber(event)


@dataclass(frozen=True)
class Bookkeeping:
    """A subscriber keeping records after the fact: the meeting does not wait for it (see the module docstring).
    It must do nothing twice when told an event with :data:`AGAIN` in its data."""

    subscriber: Subscriber

    async def __call__(self, event: MeetingEvent) -> None:
        await self.subscriber(event)


@runtime_checkable
class CatchesUp(Protocol):
    """A display that records what it posted (a channel's meeting view: :mod:`bot.channels.meeting_posts`) and posts
    only what its record lacks. At a start it is told once more the end of each meeting that ended lately
    (:meth:`board.room.convene.BoardRoom.retell_ended`): RESUMED (``phase``: ``ended``), then DECISION when it
    decided and ENDED, :data:`AGAIN` in their data; a ``kill -9`` may have cut its posting of them short. Wrapped
    (:class:`ToldAtOnce` ...) or not."""

    def catches_up(self) -> bool:
        """Whether it keeps its record now (without one it would post everything again: not told)."""
        ...

    async def __call__(self, event: MeetingEvent) -> None: ...
