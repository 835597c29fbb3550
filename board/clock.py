"""The one clock the whole board reads: what time it is, and waiting until a moment.

Everything that depends on the time of day or on a due moment (action items' due dates,
reminders, resolution requests, review meetings, "overdue" in ``/status``) asks a
:class:`Clock` instead of calling :func:`datetime.now` or sleeping, so tests can drive time
with a :class:`FakeClock` and never sleep for it. Times are aware datetimes in UTC.

:class:`SystemClock` is the real one. :class:`FakeClock` moves only when told
(:meth:`FakeClock.advance` / :meth:`FakeClock.set`) and wakes every
:meth:`Clock.sleep_until` whose moment has come.

A real ``sabha run`` under test reads a :class:`FileClock` instead (:func:`clock_from_env`):
``SABHA_TEST_CLOCK=<file>`` holding the epoch seconds it reads, so a test moves the daemon's
time by writing the file. It is refused unless ``SABHA_TEST_MODE=1`` is set too, and the
daemon says in its log that its time is a test's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "TEST_CLOCK_ENV", "TEST_MODE_ENV", "Clock", "ClockRefused", "FakeClock", "FileClock",
           "SystemClock", "clock_from_env", "utc"]

log = logging.getLogger("sabha.clock")

#: The environment variable naming a :class:`FileClock`'s file (tests only).
TEST_CLOCK_ENV = "SABHA_TEST_CLOCK"
#: Must be ``1`` for :data:`TEST_CLOCK_ENV` to be honoured.
TEST_MODE_ENV = "SABHA_TEST_MODE"


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


class ClockRefused(RuntimeError):
    """A test clock was asked for outside test mode; ``str()`` says what to do."""


class FileClock:
    """A clock whose time is the epoch seconds written in a file (a test's clock for a real
    daemon). The file is read at each :meth:`now`; :meth:`sleep_until` looks again every
    ``poll_s``. A file that cannot be read (being rewritten) keeps the last time read."""

    def __init__(self, path: Path, poll_s: float = 0.02) -> None:
        self.path = path
        self.poll_s = poll_s
        self._last = self._read() or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def _read(self) -> datetime | None:
        try:
            return datetime.fromtimestamp(float(self.path.read_text(encoding="utf-8").strip()), UTC)
        except (OSError, ValueError):
            return None

    def now(self) -> datetime:
        moment = self._read()
        if moment is not None and moment >= self._last:  # never backwards, like FakeClock
            self._last = moment
        return self._last

    async def sleep_until(self, moment: datetime) -> None:
        moment = utc(moment)
        while self.now() < moment:  # noqa: ASYNC110 - what changes is a file: it is polled
            await asyncio.sleep(self.poll_s)

    @staticmethod
    def write(path: Path, moment: datetime | float) -> None:
        """Set the time a :class:`FileClock` on ``path`` reads (atomically: a reader never sees half)."""
        seconds = moment if isinstance(moment, float | int) else utc(moment).timestamp()
        part = path.with_name(path.name + ".part")
        part.write_text(f"{seconds:.6f}\n", encoding="utf-8")
        part.replace(path)


def clock_from_env(environ: Mapping[str, str]) -> Clock:
    """The daemon's clock: the system's, or a test's :class:`FileClock` when ``SABHA_TEST_CLOCK``
    names a file and ``SABHA_TEST_MODE=1`` (else :class:`ClockRefused`)."""
    path = environ.get(TEST_CLOCK_ENV, "").strip()
    if not path:
        return SYSTEM_CLOCK
    if environ.get(TEST_MODE_ENV) != "1":
        raise ClockRefused(f"{TEST_CLOCK_ENV} is set but {TEST_MODE_ENV}=1 is not: a test clock is for tests only; "
                           f"unset {TEST_CLOCK_ENV} to run on the system clock")
    clock = FileClock(Path(path))
    log.warning("TEST MODE: the board's time is read from %s (%s), not the system clock", path,
                clock.now().isoformat(timespec="seconds"))
    return clock
