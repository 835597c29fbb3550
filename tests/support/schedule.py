"""Helpers for the scheduled-work suites: a schedule on a real state db and a fake clock, a
:class:`RecordingDeliver` that records what was sent (and can fail, or crash, on demand)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.clock import FakeClock
from board.db import StateDB
from board.envelope import Reply
from board.schedule import Delivered, Delivery, NewWork, Place, Schedule, ScheduledWork, WorkKind
from board.schedule.migrations import MIGRATIONS
from board.storage import Database

START = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
PLACE = Place("telegram", "-1001", 7)


async def open_schedule(where: Path | Database, clock: FakeClock | None = None,
                        ) -> tuple[Database, Schedule, FakeClock]:
    """A schedule and a fake clock at :data:`START`, on ``where``: the test's ``database`` (either backend)
    or a fresh SQLite state db under a folder."""
    clock = clock or FakeClock(START)
    db = await StateDB.open(where / "sabha.db", MIGRATIONS) if isinstance(where, Path) else where
    return db, Schedule(db, clock), clock


def work(key: str, *, seconds: float = 60, kind: WorkKind = WorkKind.REMINDER, place: Place = PLACE,
         clock: FakeClock | None = None, **payload: object) -> NewWork:
    """Work ``key`` due ``seconds`` after the clock's now (or :data:`START`)."""
    now = clock.now() if clock is not None else START
    return NewWork(kind, key, now + timedelta(seconds=seconds), place, payload)


@dataclass
class RecordingDeliver:
    """A :class:`board.schedule.Deliver` that records each reply it sends; ``script`` gives
    outcomes for the next calls (default: sent), ``crash_after_sending`` raises after marking
    "sending" (as a process dying with the request on the wire would leave it)."""

    sent: list[tuple[str, Reply]] = field(default_factory=list)
    script: list[Delivered] = field(default_factory=list)
    crash_after_sending: bool = False
    gate: asyncio.Event | None = None  # when set: wait for it before marking "sending"
    entered: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, work: ScheduledWork, reply: Reply, sending: Callable[[], Awaitable[None]],
                       ) -> Delivered:
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        result = self.script.pop(0) if self.script else Delivered(Delivery.SENT)
        if result.delivery is Delivery.WAIT:
            return result
        await sending()
        if self.crash_after_sending:
            raise asyncio.CancelledError  # the process is gone: nothing after this runs
        if result.delivery is Delivery.SENT:
            self.sent.append((work.key, reply))
        return result

    def keys(self) -> list[str]:
        """The keys sent, in order."""
        return [key for key, _ in self.sent]


async def nudge(work: ScheduledWork) -> Reply:
    """A handler: a reply naming the work's key."""
    return work.reply(f"reminder {work.key} {work.payload.get('n', '')}".strip())
