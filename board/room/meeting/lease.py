"""Which replica runs a meeting: the meeting's lease (``leases`` row ``meeting:<id>``) and its fence.

With replicas (several ``sabha run`` on one PostgreSQL) a meeting is run by one of them at a time. The replica
that starts (or resumes) a meeting takes its lease first (:meth:`MeetingLease.take`); its heartbeat renews every
lease it holds (:meth:`MeetingLeases.beat`, every ``lease_s / 3``, like the conversations'); when it dies the
lease lapses and another replica's takeover loop takes the meeting and resumes it
(:mod:`board.room.meeting.takeover`).

The fence: every phase a meeting writes (its checkpoint, each statement; :mod:`board.room.meeting.resume`) is a
conditional write that requires this holder's lease to stand (:meth:`MeetingLease.clause`). A replica cut off
longer than the lease finds its write refused, raises :class:`MeetingTakenOver` and stops working the meeting
without writing anything more: the replica that took it over writes that phase, once.

On SQLite one process works the state (a single daemon), so no lease is taken and nothing is fenced.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from board.storage import Leases

__all__ = ["MeetingLease", "MeetingLeases", "MeetingTakenOver", "lease_key"]

log = logging.getLogger("sabha.meeting")


def lease_key(meeting_id: str) -> str:
    """The ``leases`` key of a meeting."""
    return f"meeting:{meeting_id}"


class MeetingTakenOver(Exception):
    """This replica no longer holds the meeting's lease: another replica runs it now."""


@dataclass(frozen=True)
class MeetingLease:
    """One meeting's lease, as one replica holds it."""

    meeting_id: str
    leases: Leases

    @property
    def key(self) -> str:
        """Its ``leases`` key."""
        return lease_key(self.meeting_id)

    @property
    def holder(self) -> str:
        """This replica."""
        return self.leases.holder

    async def take(self) -> bool:
        """Take (or extend) the lease; False when another replica holds it and it has not lapsed."""
        return await self.leases.take(self.key)

    async def release(self) -> None:
        """Let it go (the meeting ended here, or Sabha stops: another replica may resume it at once)."""
        await self.leases.release(self.key)

    def clause(self) -> tuple[str, tuple[object, ...]]:
        """An SQL condition (and its parameters) true while this replica's lease on the meeting stands."""
        return ("EXISTS (SELECT 1 FROM leases WHERE key = ? AND holder = ? AND expires_at >= ?)",
                (self.key, self.holder, self.leases.clock.now().timestamp()))


class MeetingLeases:
    """The meeting leases of one replica: made per meeting, renewed together."""

    def __init__(self, leases: Leases) -> None:
        self.leases = leases

    @property
    def heartbeat_s(self) -> float:
        """How often :meth:`beat` runs."""
        return self.leases.heartbeat_s

    @property
    def lease_s(self) -> float:
        """How long a lease outlives a replica that stopped renewing it."""
        return self.leases.lease_s

    def of(self, meeting_id: str) -> MeetingLease:
        """Meeting ``meeting_id``'s lease for this replica."""
        return MeetingLease(meeting_id, self.leases)

    async def beat(self) -> set[str]:
        """Renew every meeting lease this replica holds; the ids of those it still holds."""
        kept = await self.leases.renew()
        return {key.removeprefix("meeting:") for key in kept if key.startswith("meeting:")}
