"""The loop that does scheduled work when it is due: claim, run the handler, deliver, record.

One pass (:meth:`ScheduleRunner.run_due`) claims due rows one at a time (a single conditional
``UPDATE``: :meth:`board.schedule.store.WorkStore.claim_due`), runs the row's handler and
hands its reply to the :class:`Deliver` the daemon supplies. Deliver calls ``sending()`` right
before the first request leaves (the channel's ``SendProgress.before_first_request``): that
marks the row ``sending``, durably, so a crash before it leaves the row to be done again and a
crash after it can only mean "may have arrived" (never sent twice). If the row was cancelled or
rescheduled meanwhile, ``sending()`` raises :class:`Withdrawn` and nothing leaves.

Between passes the runner waits on the board's clock for the next due row, or until a row is
added or moved (:meth:`board.schedule.Schedule.wake`: by this process, or by another one, which
announces it: PostgreSQL ``NOTIFY``, or the daemon's wake endpoint on SQLite), or until it is stopped;
and looks again every :attr:`RunnerSettings.recheck_s` anyway (a wake-up that was lost).

Outcomes: sent -> ``done``; the service proved it was not posted -> tried again later
(:attr:`RunnerSettings.retry_s`), ``failed`` after :attr:`RunnerSettings.max_attempts`; the
place cannot be reached now (its channel is not running, a WhatsApp window is closed) ->
pending, *held* with the reason (``sabha status`` shows it) until released or the next start;
a handler error -> tried again like a failed send; a kind with no handler -> held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from board.envelope import Reply
from board.schedule.schedule import Schedule
from board.schedule.work import Outcome, ScheduledWork, WorkStatus

__all__ = ["Deliver", "Delivered", "Delivery", "RunnerSettings", "ScheduleRunner", "Sending", "Withdrawn"]

log = logging.getLogger("sabha.schedule")


class Withdrawn(Exception):
    """The row was cancelled or rescheduled while claimed: nothing may be sent for this claim."""


class Delivery(StrEnum):
    """How handing a reply to its channel went."""

    SENT = "sent"
    MAY_HAVE_ARRIVED = "may_have_arrived"  # a request left, its answer was lost: never sent again
    NOT_SENT = "not_sent"  # proved not posted: may be tried again
    WAIT = "wait"  # the place cannot be reached now (nothing left): the row waits, ``detail`` says for what


@dataclass(frozen=True)
class Delivered:
    """What :class:`Deliver` reports. ``final``: a NOT_SENT that trying again cannot fix (a
    chat that does not exist)."""

    delivery: Delivery
    detail: str | None = None
    final: bool = False


class Deliver(Protocol):
    """How the daemon sends a scheduled reply: to ``work.place`` (the reply is addressed there),
    calling ``sending()`` right before the first request may leave (it raises
    :class:`Withdrawn` when nothing may be sent: let it propagate, nothing has left)."""

    async def __call__(self, work: ScheduledWork, reply: Reply, sending: Callable[[], Awaitable[None]],
                       ) -> Delivered: ...


class Sending:
    """The ``sending()`` a :class:`Deliver` gets for one row: calling it marks the row ``sending``
    (raising :class:`Withdrawn` when it is no longer this claim's); :meth:`refused` takes the mark
    back when the service answered that nothing was posted (a 429 to wait out), so a crash during
    the wait has the row done again instead of "may have arrived"."""

    def __init__(self, runner: ScheduleRunner, work: ScheduledWork) -> None:
        self.runner = runner
        self.work = work
        self.left = False  # marked sending: something may have left

    async def __call__(self) -> None:
        if not await self.runner.store.sending(self.work, self.runner.clock.now()):
            raise Withdrawn(f"{self.work.key} was cancelled or moved while it was about to be sent")
        self.left = True

    async def refused(self) -> None:
        """Nothing was posted: the row is claimed again (marked again before the retry leaves)."""
        if self.left and await self.runner.store.unsend(self.work, self.runner.clock.now()):
            self.left = False
            log.info("schedule: %s was not posted (the service refused it for now); it is sent again when "
                     "the retry leaves", self.work.key)


@dataclass(frozen=True)
class RunnerSettings:
    """How the runner retries: waits after the 1st, 2nd ... failed try (the last repeats)."""

    retry_s: tuple[float, ...] = (30.0, 120.0, 600.0, 3600.0)
    max_attempts: int = 6
    #: at most this long (real seconds) between looks at the table: work another process adds or moves
    #: wakes the runner at once (:meth:`Schedule.listening`, ``bot.ops.wake``); this bounds a lost wake-up
    recheck_s: float = 30.0
    #: only rows for these channels (None: all): ``sabha chat`` shows the terminal's, the daemon the rest
    channels: tuple[str, ...] | None = None
    #: replicas share the table (PostgreSQL): a runner touches the rows it holds every third of this
    #: (seconds), and a claim untouched this long is a dead runner's, taken back by whichever runner looks
    #: next. None (one daemon, SQLite): every claim found at start is this process's previous life's.
    claim_lease_s: float | None = None


class ScheduleRunner:
    """Runs the due work of ``schedule`` through ``deliver``; see the module docstring."""

    def __init__(self, schedule: Schedule, deliver: Deliver, settings: RunnerSettings | None = None) -> None:
        self.schedule = schedule
        self.store = schedule.store
        self.clock = schedule.clock
        self.deliver = deliver
        self.settings = settings or RunnerSettings()
        self.claim_prefix = secrets.token_hex(4)  # tells this runner's claims apart (replicas, later)
        self._claims = 0
        self.done = 0  # rows finished by this runner (any outcome)

    def _stale_before(self) -> datetime | None:
        lease = self.settings.claim_lease_s
        return None if lease is None else self.clock.now() - timedelta(seconds=lease)

    async def recover(self) -> None:
        """At start: what a crash or a stop left (see :meth:`WorkStore.recover`), logged."""
        found = await self.store.recover(self.clock.now(), self.settings.channels, stale_before=self._stale_before())
        self._recovered(found.redo, found.uncertain)

    async def reclaim_stale(self) -> None:
        """Replicas: take back the claims of a runner that died (untouched for the lease); see the store."""
        stale_before = self._stale_before()
        if stale_before is not None:
            self._recovered(*await self.store.reclaim(self.clock.now(), self.settings.channels,
                                                      stale_before=stale_before))

    @staticmethod
    def _recovered(redo: int, uncertain: tuple[ScheduledWork, ...]) -> None:
        if redo:
            log.info("schedule: %d item(s) claimed by a runner that stopped before sending them: doing them again",
                     redo)
        for row in uncertain:
            log.warning("schedule: %s %s was being sent when its runner stopped; it may have arrived, so it is not "
                        "sent again", row.kind, row.key)

    async def run(self, stop: asyncio.Event) -> None:
        """Recover, then do due work as it falls due, until ``stop`` is set."""
        await self.recover()
        await self.schedule.starting()
        log.info("schedule: runner started")
        async with self.schedule.listening():  # rows another process adds or moves wake it at once
            while not stop.is_set():
                self.schedule.rested()
                try:
                    await self.run_due(stop)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a storage hiccup: logged, tried again shortly
                    log.exception("schedule: a pass over due work failed; trying again in a moment")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), 5.0)
                    continue
                await self._wait(stop)
        log.info("schedule: runner stopped")

    async def _wait(self, stop: asyncio.Event) -> None:
        """Until the next row is due, a row is added or moved, or ``stop``."""
        due = await self.store.next_due(self.settings.channels)
        waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self.schedule.woken()),
                 asyncio.ensure_future(asyncio.sleep(self.settings.recheck_s))]
        if due is not None:
            waits.append(asyncio.ensure_future(self.clock.sleep_until(due)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
            await asyncio.gather(*waits, return_exceptions=True)

    async def run_due(self, stop: asyncio.Event | None = None) -> int:
        """Do every row due now, one at a time; how many were taken."""
        taken = 0
        await self.reclaim_stale()
        while stop is None or not stop.is_set():
            self._claims += 1
            work = await self.store.claim_due(self.clock.now(), f"{self.claim_prefix}-{self._claims}",
                                              self.settings.channels)
            if work is None:
                return taken
            taken += 1
            async with self._holding(work):
                await self.do(work)
        return taken

    @contextlib.asynccontextmanager
    async def _holding(self, work: ScheduledWork) -> AsyncIterator[None]:
        """While the block runs, touch ``work`` every third of the claim lease (replicas only), so no
        other runner takes it for a dead one's."""
        lease = self.settings.claim_lease_s
        if lease is None:
            yield
            return

        async def beat() -> None:
            while True:
                await asyncio.sleep(lease / 3)
                try:
                    if not await self.store.touch(work, self.clock.now()):
                        return  # no longer this claim's: the runner's next step finds that out
                except Exception:  # a storage hiccup: the next beat tries again
                    log.warning("schedule: could not renew the claim on %s", work.key, exc_info=True)

        beating = asyncio.ensure_future(beat())
        try:
            yield
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating

    async def do(self, work: ScheduledWork) -> None:
        """Run one claimed row to its outcome."""
        handler = self.schedule.handler(work.kind)
        if handler is None:
            reason = f"no handler for {work.kind!s} work in this Sabha"
            log.error("schedule: %s waits: %s", work.key, reason)
            await self.store.release_claim(work, self.clock.now(), held=reason)
            return
        try:
            reply = await handler(work)
        except asyncio.CancelledError:
            await asyncio.shield(self.store.release_claim(work, self.clock.now()))
            raise
        except Exception as exc:
            log.exception("schedule: the %s handler failed for %s", work.kind, work.key)
            await self._failed(work, Outcome.ERROR, f"{type(exc).__name__}: {exc}")
            return
        if reply is None:
            await self._finish(work, WorkStatus.DONE, Outcome.ACTED)
            return
        await self._send(work, reply)

    async def _send(self, work: ScheduledWork, reply: Reply) -> None:
        sending = Sending(self, work)
        try:
            result = await self.deliver(work, reply, sending)
        except Withdrawn as exc:
            log.info("schedule: %s", exc)
            return
        except asyncio.CancelledError:
            if not sending.left:
                await asyncio.shield(self.store.release_claim(work, self.clock.now()))
            raise
        except Exception as exc:  # a channel bug: the outcome is what matters
            log.exception("schedule: delivering %s failed", work.key)
            result = Delivered(Delivery.MAY_HAVE_ARRIVED if sending.left else Delivery.NOT_SENT,
                               f"{type(exc).__name__}: {exc}")
        await self._record(work, result, sending.left)

    async def _record(self, work: ScheduledWork, result: Delivered, left: bool) -> None:
        if result.delivery is Delivery.SENT:
            log.info("schedule: %s %s sent to %s", work.kind, work.key, work.place)
            await self._finish(work, WorkStatus.DONE, Outcome.SENT, result.detail)
        elif result.delivery is Delivery.WAIT:  # the channel vouches that nothing was posted
            log.warning("schedule: %s waits: %s", work.key, result.detail)
            if await self.store.release_claim(work, self.clock.now(), held=result.detail or "the place is unreachable"):
                self.schedule.held(work.place)
        elif result.delivery is Delivery.MAY_HAVE_ARRIVED or (left and result.delivery is not Delivery.NOT_SENT):
            log.warning("schedule: %s may have arrived (%s); it is not sent again", work.key, result.detail)
            await self._finish(work, WorkStatus.DONE, Outcome.MAY_HAVE_ARRIVED, result.detail)
        elif result.final:
            await self._finish(work, WorkStatus.FAILED, Outcome.NOT_SENT, result.detail)
        else:
            await self._failed(work, Outcome.NOT_SENT, result.detail)

    async def _failed(self, work: ScheduledWork, outcome: Outcome, detail: str | None) -> None:
        """A try failed with nothing sent: again later, or ``failed`` once the tries ran out."""
        attempts = work.attempts + 1
        if attempts >= self.settings.max_attempts:
            log.error("schedule: %s failed %d times, giving up: %s", work.key, attempts, detail)
            await self._finish(work, WorkStatus.FAILED, outcome, detail)
            return
        retry = self.settings.retry_s[min(attempts, len(self.settings.retry_s)) - 1]
        due = self.clock.now() + timedelta(seconds=retry)
        log.warning("schedule: %s not done (%s); trying again at %s", work.key, detail,
                    due.isoformat(timespec="seconds"))
        await self.store.release_claim(work, self.clock.now(), due_at=due, failed=True, detail=detail)

    async def _finish(self, work: ScheduledWork, status: WorkStatus, outcome: Outcome,
                      detail: str | None = None) -> None:
        if await self.store.finish(work, status, outcome, self.clock.now(), detail):
            self.done += 1
            if outcome in (Outcome.SENT, Outcome.MAY_HAVE_ARRIVED):
                await self.schedule.sent(work)
        else:
            log.info("schedule: %s changed while it ran (cancelled or moved); its new state stands", work.key)
