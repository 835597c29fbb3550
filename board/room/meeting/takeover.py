"""The daemon's loop that keeps meetings running across restarts and replicas.

At start every meeting still ``running`` on record is resumed (:meth:`board.room.convene.BoardRoom.resume_all`), and
the displays are told the end of each meeting that ended lately once more, to post what a stop kept them from
(:meth:`board.room.convene.BoardRoom.retell_ended`).
With replicas (``leases`` given: PostgreSQL) the loop then runs until the daemon stops: every heartbeat
(``lease_s / 3``) it renews this replica's meeting leases and lets go of a meeting whose lease another replica
took (this one was cut off longer than the lease); every lease period it looks for running meetings whose lease
lapsed (their replica died) and takes them over, resuming them the same way. On SQLite one process works the
state: the meetings are resumed once, at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from board.room.meeting.lease import MeetingLeases

__all__ = ["keep_running"]

log = logging.getLogger("sabha.meeting")


class _Room(Protocol):
    """What the loop uses of :class:`board.room.convene.BoardRoom`."""

    async def resume_all(self) -> list[str]: ...

    async def retell_ended(self) -> list[str]: ...

    def leased(self) -> list[str]: ...

    def let_go(self, meeting_id: str) -> bool: ...


async def _resume(room: _Room) -> None:
    try:
        resumed = await room.resume_all()
    except Exception:  # the state store is away: the next look tries again
        log.exception("meetings: looking for meetings to resume failed")
        return
    if resumed:
        log.info("meetings: resumed %d meeting(s) left running: %s", len(resumed), ", ".join(resumed))


async def _beat(room: _Room, leases: MeetingLeases) -> None:
    """Renew the leases held; stop working a meeting whose lease is not among them any more."""
    try:
        held = await leases.beat()
    except Exception as exc:  # noqa: BLE001 - an outage: the fence keeps a late write out
        log.warning("meetings: renewing the meeting leases failed (%s)", exc)
        return
    for meeting_id in room.leased():
        if meeting_id not in held and room.let_go(meeting_id):
            log.warning("meeting %s: its lease went to another replica; stopping it here (that replica resumes "
                        "it)", meeting_id)


async def keep_running(room: _Room, leases: MeetingLeases | None, stop: asyncio.Event) -> None:
    """See the module docstring; returns when ``stop`` is set (at once on SQLite, after the first resume)."""
    await _resume(room)
    try:
        await room.retell_ended()
    except Exception:  # the state store is away: nothing more is lost than without it
        log.exception("meetings: telling the displays the meetings that ended lately failed")
    if leases is None:
        return
    loop = asyncio.get_running_loop()
    look_at = loop.time() + leases.lease_s
    try:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), leases.heartbeat_s)
            if stop.is_set():
                break
            await _beat(room, leases)
            if loop.time() >= look_at:
                look_at = loop.time() + leases.lease_s
                await _resume(room)
    finally:
        with contextlib.suppress(Exception):
            await leases.close()
