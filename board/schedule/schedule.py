"""The board's schedule: what callers use to add, cancel and move scheduled work, and the
handler registered for each :class:`~board.schedule.work.WorkKind`.

``board.schedule`` (a :class:`Schedule` on :class:`board.app.Board`) reads the board's
one clock. Adding or moving a row wakes the runner (:meth:`Schedule.wake`), so a reminder due in
five seconds does not wait behind one due tomorrow; and the runners of other processes too: on
PostgreSQL by ``NOTIFY``/``LISTEN`` (:meth:`Schedule.listening`, every replica), and through the hooks
of :meth:`Schedule.announce_to` (``sabha actions due`` on SQLite wakes the running daemon).
The runner itself (:mod:`board.schedule.runner`) is started by the daemon, which
supplies how replies reach a channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from board.clock import Clock, utc
from board.envelope import Reply
from board.schedule.store import WAKE_CHANNEL, WorkStore
from board.schedule.work import NewWork, Place, ScheduledWork, WorkKind

if TYPE_CHECKING:
    from board.storage import Database

__all__ = ["Schedule", "WorkHandler"]

log = logging.getLogger("sabha.schedule")

#: What runs when a row is due: the row -> the reply to send to its place (with buttons), or
#: None when the handler did the work itself (started a meeting) or found nothing left to do.
#: It may run again for the same row after a crash before sending, so it must not have side
#: effects that cannot be repeated (or must make them idempotent, e.g. keyed by ``work.key``).
WorkHandler = Callable[[ScheduledWork], Awaitable[Reply | None]]


class Schedule:
    """Scheduled work of one board; see the module docstring."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.store = WorkStore(db)
        self.clock = clock
        self._handlers: dict[str, WorkHandler] = {}
        self._wake = asyncio.Event()
        self._at_start: list[Callable[[], Awaitable[object]]] = []
        self._after_send: dict[str, Callable[[ScheduledWork], Awaitable[object]]] = {}
        self._held: set[tuple[str, str]] = set()  # (channel, chat) with rows waiting for the place
        self._announce: list[Callable[[], Awaitable[object]]] = []  # tell other processes (announce_to)

    # -- handlers -----------------------------------------------------------------------------

    def register(self, kind: WorkKind, handler: WorkHandler) -> None:
        """Make ``handler`` the one that runs due rows of ``kind`` (a second registration replaces it)."""
        if kind.value in self._handlers and self._handlers[kind.value] is not handler:
            log.warning("schedule: the handler for %s work is replaced", kind.value)
        self._handlers[kind.value] = handler

    def at_start(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work`` when the runner starts, after recovery and before the first due row (e.g.
        schedule what a crash between recording something and scheduling it left unscheduled)."""
        self._at_start.append(work)

    def after_send(self, kind: WorkKind, work: Callable[[ScheduledWork], Awaitable[object]]) -> None:
        """Run ``work`` with a row of ``kind`` once its send finished (sent, or "may have arrived"):
        e.g. a reminder snoozed while it was being sent (a row being sent cannot move) is armed
        again at its new date."""
        self._after_send[kind.value] = work

    async def sent(self, work: ScheduledWork) -> None:
        """What :meth:`after_send` asked for ``work``'s kind; a failure is logged."""
        follow = self._after_send.get(str(work.kind))
        if follow is None:
            return
        try:
            await follow(work)
        except Exception:
            log.exception("schedule: the step after sending %s failed", work.key)

    async def starting(self) -> None:
        """What :meth:`at_start` asked for; a failure is logged and the rest still runs."""
        for work in self._at_start:
            try:
                await work()
            except Exception:
                log.exception("schedule: a start-up step failed (%s)", getattr(work, "__qualname__", work))

    def handler(self, kind: WorkKind | str) -> WorkHandler | None:
        """The handler of ``kind`` (None: none registered in this build)."""
        return self._handlers.get(str(kind))

    # -- rows -----------------------------------------------------------------------------------

    async def add(self, work: NewWork) -> ScheduledWork:
        """Schedule ``work``; with a key already stored, the stored row (unchanged) is returned."""
        row, created = await self.store.add(work, self.clock.now())
        if created:
            log.info("schedule: %s %s due %s in %s", row.kind, row.key, row.due_at.isoformat(timespec="seconds"),
                     row.place)
            await self._changed()
        return row

    async def get(self, key: str) -> ScheduledWork | None:
        """The row of ``key``."""
        return await self.store.get(key)

    async def cancel(self, key: str, why: str | None = None) -> bool:
        """Cancel ``key`` unless it is already being sent (or over); whether it was cancelled."""
        row = await self.store.cancel(key, self.clock.now(), why)
        if row is not None:
            log.info("schedule: %s cancelled%s", key, f" ({why})" if why else "")
        return row is not None

    async def reschedule(self, key: str, due_at: datetime, payload: dict[str, Any] | None = None,
                         ) -> ScheduledWork | None:
        """Move ``key`` to ``due_at`` (snooze, a changed due date), arming it again if it was over;
        None when there is no such row or it is being sent right now."""
        row = await self.store.reschedule(key, utc(due_at), self.clock.now(), payload)
        if row is not None:
            log.info("schedule: %s moved to %s", key, row.due_at.isoformat(timespec="seconds"))
            await self._changed()
        return row

    def held(self, place: Place) -> None:
        """A row for ``place`` now waits for it (the runner says so): :meth:`waits_for` knows."""
        self._held.add((place.channel, place.chat_id))

    def waits_for(self, channel: str, chat_id: str) -> bool:
        """Whether rows wait for this chat (held by this process since its start): a cheap check
        the intake makes for every message before it asks the table (:meth:`release`)."""
        return (channel, chat_id) in self._held

    async def release(self, channel: str, chat_id: str | None = None) -> int:
        """Rows held waiting for ``channel`` (or one of its chats: a WhatsApp user whose window
        opened again) are due again; how many."""
        self._held = {(c, chat) for c, chat in self._held if c != channel or chat_id not in (None, chat)}
        count = await self.store.release_held(self.clock.now(), channel=channel, chat_id=chat_id)
        if count:
            log.info("schedule: %d waiting item(s) for %s%s due again", count, channel,
                     f" chat {chat_id}" if chat_id else "")
            await self._changed()
        return count

    # -- the runner's wake-up -------------------------------------------------------------------

    def announce_to(self, hook: Callable[[], Awaitable[object]]) -> None:
        """Also run ``hook`` whenever this process adds or moves a row: how a process without a runner (the
        CLI) wakes the one that has it (the daemon; ``bot.ops.wake``). A failing hook is logged, never raised:
        the change is stored, and the runner's own look at the table finds it anyway."""
        self._announce.append(hook)

    async def _changed(self) -> None:
        """A row was added or moved: wake this process's runner, and every other one."""
        self.wake()
        try:
            await self.store.announce()  # PostgreSQL: every replica's runner (LISTEN, :meth:`listening`)
        except Exception as exc:  # noqa: BLE001 - stored already; the runners look again anyway
            log.warning("schedule: could not announce the change to other processes (%s); they see it at their "
                        "next look at the table", exc)
        for hook in self._announce:
            try:
                await hook()
            except Exception as exc:  # noqa: BLE001 - as above
                log.warning("schedule: could not wake the runner of another process (%s); it sees the change at "
                            "its next look at the table", exc)

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[None]:
        """While the block runs, a row another process adds or moves wakes this runner: on PostgreSQL by
        ``LISTEN`` (:data:`WAKE_CHANNEL`); on SQLite the daemon's wake endpoint calls :meth:`wake`."""
        listen = getattr(self.store.db, "listening", None)
        if listen is None:
            yield
            return
        async with listen(WAKE_CHANNEL, self.wake):
            yield

    def wake(self) -> None:
        """Make the runner look at the table again (a row was added or moved)."""
        self._wake.set()

    async def woken(self) -> None:
        """Return once :meth:`wake` was called (since the last :meth:`rested`)."""
        await self._wake.wait()

    def rested(self) -> None:
        """The runner is about to look at the table: earlier wake-ups are served."""
        self._wake.clear()
