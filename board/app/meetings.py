"""What the board does when a meeting decides: :class:`DecisionTrail`, subscribed to the room when it is built.

A decided meeting leaves its record in the asking session (the chair's, where it was asked) and in
every participant's own session for that place, so later turns can answer from it (bookkeeping: written after the
meeting returned, again after a stop cut it short, never twice in one session); and its action items' due dates
are read and their reminders set.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board.agent.locks import SessionLocks
from board.conversation.sessions import Sessions
from board.roles import GENERAL
from board.routing.router import Router

if TYPE_CHECKING:  # a meeting's modules load with the first meeting
    from board.decisions.reminders import Reminders
    from board.room.meeting import MeetingEvent

__all__ = ["DecisionTrail"]

log = logging.getLogger("sabha.board")

#: a meeting's record told again after a stop is looked for among this many of a session's last meeting records
_LOOK_BACK = 50


@dataclass(frozen=True, kw_only=True)
class DecisionTrail:
    """The two subscribers a board's room is built with (:meth:`remember`, a
    :class:`~board.room.subscribers.Bookkeeping` one, and :meth:`follow`)."""

    router: Callable[[], Router]
    locks: SessionLocks
    sessions: Sessions
    reminders: Reminders

    async def remember(self, event: MeetingEvent) -> None:
        """A decided meeting's record, written to the chair's and each participant's session for that place."""
        from board.room.meeting import MeetingEventKind
        from board.room.record import MEETING_ENTRY, meeting_entry
        from board.room.subscribers import AGAIN

        origin, decision = event.origin, event.data.get("decision")
        if event.kind is not MeetingEventKind.DECISION or origin is None or not isinstance(decision, dict):
            return
        router = self.router()
        chair = event.role or GENERAL
        again = bool(event.data.get(AGAIN))  # told once more after a stop: a session that has it is left alone

        async def write(role: str) -> None:
            key = router.key_for(origin, role)
            try:
                async with self.locks.lock_for(key):
                    transcript = await self.sessions.open(key, role)
                    if again and any(e.get("meeting_id") == event.meeting_id
                                     for e in transcript.recent(_LOOK_BACK, types=(MEETING_ENTRY,))):
                        return
                    transcript.append(meeting_entry(event.meeting_id, event.topic, decision, chair=chair))
                    await transcript.sync()
            except Exception:  # the decision is recorded in the db either way
                log.exception("meeting %s: writing its record to %s failed", event.meeting_id, key)

        # a member of another roster has no session on this board; each session is its own (written side by side)
        await asyncio.gather(*(write(role) for role in dict.fromkeys([chair, *event.data.get("participants", [])])
                               if role in router.roles))

    async def follow(self, event: MeetingEvent) -> None:
        """A decision was recorded: its action items' due dates are read and their reminders set."""
        from board.room.meeting import MeetingEventKind

        if event.kind is MeetingEventKind.DECISION:
            await self.reminders.decided(event.meeting_id)
