"""What a meeting is, fixed before it starts: :class:`MeetingContext` (frozen).

Who sits in it, how they are made to speak (and the outside tools its members may look things up
with), where it is recorded, its settings and the agenda given in advance (the roundtable's), and with
replicas the lease it runs under (:mod:`board.room.meeting.lease`).
Nothing here changes while the meeting runs; what changes lives in
:class:`~board.room.meeting.state.MeetingState`. :meth:`emit` hands a progress event to every
subscriber, each isolated (a broken display never breaks a meeting) and on a lane of its own (a slow one holds no
other back); events are told in order by the meeting's
:class:`~board.room.meeting.herald.Herald`, so neither a display nor the write an event shows holds the meeting up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from board.agent.outside import NO_OUTSIDE_TOOLS, OutsideTools
from board.agent.speaker import Speaker
from board.agent.tools import ToolContext
from board.clock import SYSTEM_CLOCK, Clock
from board.room.evidence import Evidence
from board.room.meeting.events import MeetingEvent, MeetingEventKind, Subscriber
from board.room.meeting.herald import Herald
from board.room.meeting.lease import MeetingLease
from board.room.settings import MeetingSettings
from board.room.store import MeetingStore
from board.workspace.souls import AgentProfile

__all__ = ["MeetingContext"]

log = logging.getLogger("sabha.meeting")


@dataclass(frozen=True, kw_only=True)
class MeetingContext:
    """One meeting's fixed inputs and collaborators."""

    id: str
    topic: str
    roster: str
    chair: AgentProfile
    specialists: Sequence[AgentProfile]
    speak: Speaker
    store: MeetingStore
    settings: MeetingSettings
    render_minutes: Callable[[dict[str, Any]], str]
    subscribers: Sequence[Subscriber]
    base_ctx: ToolContext
    resolve_role: Callable[[str], str | None]
    extra_owners: tuple[str, ...] = ()  # action-item owners beyond the roster (the roundtable's Director ...)
    models: dict[str, str] = field(default_factory=dict)  # role -> model, to show who spoke with which
    preset_agenda: str | None = None  # given in advance: the chair does not frame
    evidence: tuple[Evidence, ...] = ()  # the conversation's files on the agenda (board.room.evidence)
    revisit_of: str | None = None  # the decision this meeting revisits (recorded with the meeting)
    clock: Clock = SYSTEM_CLOCK  # the board's one clock: when predictions were made, what is recalled
    outside: OutsideTools = NO_OUTSIDE_TOOLS  # the roles' outside (MCP) tools, offered to members' statements
    outside_ready: Callable[[ToolContext], Awaitable[None]] | None = None  # until a role's servers have started
    lease: MeetingLease | None = None  # replicas: this replica's lease on the meeting, the fence of every phase written
    #: set when a control or a contribution for this meeting arrives on this replica (BoardRoom.nudged)
    wake: Callable[[], asyncio.Event] | None = None
    #: held in the daemon's background (BoardRoom.start): resumed after a stop. A meeting its caller runs (an MCP
    #: client's convene, the roundtable, ``sabha meeting``) is that caller's, and never resumed by another process.
    background: bool = False
    herald: Herald = field(default_factory=Herald)  # tells the subscribers, in order (board.room.meeting.herald)
    #: where the end's bookkeeping finishes once the meeting has returned (the room's background, drained at
    #: shutdown: BoardRoom.keep_books); None: the meeting awaits it before it returns (board.room.subscribers)
    afterwards: Callable[[str, Coroutine[Any, Any, None]], None] | None = None

    @property
    def profiles(self) -> dict[str, AgentProfile]:
        """Everyone in the room by role."""
        return {p.role: p for p in [self.chair, *self.specialists]}

    @property
    def challenger(self) -> str:
        """This meeting's challenger role ("" when none of its members is one)."""
        role = self.settings.challenger_for(self.roster)
        return role if role in {p.role for p in self.specialists} else ""

    def owners(self) -> list[str]:
        """Who may own an action item: the meeting's extra owners (first: the roundtable's Director,
        Builder ...), the chair and the specialists."""
        return [*self.extra_owners, self.chair.role, *[p.role for p in self.specialists]]

    async def emit(self, kind: MeetingEventKind, round_no: int, *, role: str | None = None, text: str = "",
                   after: asyncio.Future[Any] | None = None, **data: Any) -> None:
        """Queue the event for every subscriber, told in the order the meeting made its events (by the
        :class:`~board.room.meeting.herald.Herald`; the meeting does not wait for them), once ``after`` (the write
        it shows) is done. :meth:`settled` waits until all are told."""
        profile = self.profiles.get(role) if role else None
        event = MeetingEvent(
            kind=kind, meeting_id=self.id, topic=self.topic, origin=self.base_ctx.envelope,
            round=round_no or None, role=role,
            name=profile.name if profile else None, emoji=profile.emoji if profile else None, text=text, data=data,
        )
        self.herald.post(event, self.subscribers, self.tell, after)

    async def settled(self) -> None:
        """Until every event emitted so far has been told."""
        await self.herald.settle()

    async def tell(self, subscriber: Subscriber, event: MeetingEvent) -> None:
        """Tell ``subscriber`` ``event``, now; a failure is logged and skipped (a broken display must not break the
        meeting)."""
        try:
            await subscriber(event)
        except Exception:
            log.exception("meeting %s: subscriber failed on %s", self.id, event.kind)
