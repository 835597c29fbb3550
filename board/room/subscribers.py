"""How a meeting's subscribers are told its events: :class:`ToldFirst` marks one every other subscriber waits for.

The herald (:mod:`board.room.meeting.herald`) gives each subscriber a lane of its own, so a slow one holds up no
other. A subscriber wrapped in :class:`ToldFirst` is what the others' view stands on (a decision's action items
dated from what the chair wrote, so no page shows a due date as unreadable while it is being read): each event is
told to it, and it is done, before any other subscriber hears that event. Kept apart from the meeting package so
building a board (``sabha ask`` included) does not import the meeting engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.room.meeting.events import MeetingEvent, Subscriber

__all__ = ["ToldFirst"]


@dataclass(frozen=True)
class ToldFirst:
    """A subscriber every other subscriber waits for, event by event (see the module docstring)."""

    subscriber: Subscriber

    async def __call__(self, event: MeetingEvent) -> None:
        await self.subscriber(event)
