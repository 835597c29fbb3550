"""One more round of a running meeting, priced before it is asked for: ``/extend`` and
``board.meetings.confirm_over_usd``.

Starting a meeting whose estimate is above ``confirm_over_usd`` waits for the owner's Start
(:mod:`board.room.pending`); an extension is held to the same rule. :func:`extension` works out what the
meeting is expected to cost with the rounds it holds now (its own rounds, the extra rounds applied and those
asked for and not applied yet) and one more (:meth:`BoardRoom.estimate
<board.room.convene.BoardRoom.estimate>`, the meeting's own roster and settings), and says whether that
is above the threshold. ``/extend`` then stores nothing and says so, with the estimate; the owner's
``/extend <id> confirm`` asks for the round anyway (:mod:`board.commands.controls`). The meeting still holds
every extension to ``max_extra_rounds``, its budget and its time when it applies it
(:mod:`board.room.meeting.seat`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from board.room.estimate import Estimate
from board.room.table import ControlKind

if TYPE_CHECKING:
    from board.room.convene import BoardRoom

__all__ = ["Extension", "extension"]


@dataclass(frozen=True)
class Extension:
    """What the meeting is expected to cost with one round more, and whether that waits for the owner's word."""

    meeting_id: str
    rounds: int  # the rounds it would hold with the extension
    estimate: Estimate
    threshold: float  # board.meetings.confirm_over_usd (0: never asks)

    @property
    def needs_owner(self) -> bool:
        """The estimate is above ``confirm_over_usd`` (or cannot be priced while it is set)."""
        return self.estimate.needs_start(self.threshold)

    def text(self) -> str:
        """What ``/extend`` answers when the extension waits for the owner's word."""
        return (f"One more round would make {self.meeting_id} a {self.rounds}-round meeting: "
                f"{self.estimate.summary()} That is above the ${self.threshold:g} set in "
                "board.meetings.confirm_over_usd, so the round is not asked for until the owner confirms with "
                f"/extend {self.meeting_id} confirm")


async def _extended(room: BoardRoom, meeting_id: str) -> int:
    """The extra rounds the meeting has (applied, not refused) or was asked for and has not looked at yet."""
    rows = await room.store.db.fetchall(
        "SELECT data FROM meeting_events WHERE meeting_id = ? AND kind = 'control'", (meeting_id,))
    applied = sum(1 for r in rows if (d := json.loads(r["data"])).get("kind") == ControlKind.EXTEND.value
                  and not d.get("refused"))
    waiting = [c for c in await room.table.controls(meeting_id) if c.kind is ControlKind.EXTEND]
    return applied + len(waiting)


async def extension(room: BoardRoom, meeting_id: str) -> Extension | None:
    """One more round of running meeting ``meeting_id``, priced; None when it is not on record."""
    from board.room.meeting.resume import Resumable, settings_of  # the meeting package loads with a meeting

    rows = await room.store.resumable(meeting_id)
    if not rows:
        return None
    held = Resumable.of(rows[0])
    settings = settings_of(held.spec.get("settings"), room.meeting_settings)
    rounds = settings.max_turns_per_agent + await _extended(room, meeting_id) + 1
    estimate = await room.estimate(roster=held.roster, settings=replace(settings, max_turns_per_agent=rounds),
                                   agenda=held.spec.get("preset_agenda"), chair_role=held.chair)
    return Extension(meeting_id, rounds, estimate, room.meeting_settings.confirm_over_usd)
