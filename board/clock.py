"""The one clock the whole board reads: what time it is, and waiting until a moment.

Everything that depends on the time of day or on a due moment (action items' due dates,
reminders, resolution requests, review meetings, "overdue" in ``/status``) asks a
:class:`Clock` instead of calling :func:`datetime.now` or sleeping, so tests can drive time
with a :class:`FakeClock` and never sleep for it. Times are aware datetimes in UTC.

:class:`SystemClock` is the real one. :class:`FakeClock` moves only when told
(:meth:`FakeClock.advance` / :meth:`FakeClock.set`) and wakes every
:meth:`Clock.sleep_until` whose moment has come.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "FakeClock", "SystemClock", "utc"]


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (a naive one is taken to be UTC already)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class Clock(Protocol):
    """What time it is, and a way to wait for a moment."""

    def now(self) -> datetime:
        """The current time (aware, UTC)."""
        ...

    async def sleep_until(self, moment: datetime) -> None:
        """Return once :meth:`now` is at or past ``moment`` (at once if it already is)."""
        ...


class SystemClock:
    """The computer's clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, moment: datetime) -> None:
        # Re-checked after each sleep: the loop's monotonic clock and the wall clock may drift
        # apart (an NTP step, a suspended laptop), and the wall clock is the one due dates use.
        while True:
            left = (utc(moment) - self.now()).total_seconds()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 60.0))


SYSTEM_CLOCK = SystemClock()


class FakeClock:
    """A clock that moves only when a test moves it; sleepers wake when their moment is reached."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = utc(start) if start is not None else datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def set(self, moment: datetime) -> None:
        """Jump to ``moment`` (never backwards: a clock that runs back would re-run due work)."""
        moment = utc(moment)
        if moment < self._now:
            raise ValueError(f"a FakeClock does not run backwards ({moment} < {self._now})")
        self._now = moment
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()

    def advance(self, seconds: float = 0, **delta: float) -> datetime:
        """Move forward by ``seconds`` (and/or ``timedelta`` keywords); returns the new time."""
        self.set(self._now + timedelta(seconds=seconds, **delta))
        return self._now

    async def sleep_until(self, moment: datetime) -> None:
        moment = utc(moment)
        while self._now < moment:
            await self._moved.wait()
