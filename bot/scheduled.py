"""The daemon's side of scheduled work: delivering due replies through the running channels.

:class:`ChannelDeliver` is the :class:`board.schedule.Deliver` the daemon gives the board's
:class:`board.schedule.ScheduleRunner`: a due row's reply goes to the channel named by
``work.place.channel`` through its ordinary ``deliver(reply, progress)``, with the row marked
``sending`` in the progress's ``before_first_request`` (as the intake marks replies). A
channel that is not running here makes the row wait (held, with the reason ``sabha status``
shows) until the next start. A channel may have ``scheduled_delivery(work, reply, sending)``
of its own (WhatsApp: its 24-hour window and template messages, :data:`OWN_DELIVERY`); it is used
instead.

:class:`ScheduledWorkService` starts the runner with the daemon (for the channel packages' rows:
:data:`bot.channels.registry.PACKAGES`) and stops it before the channels stop. In ``sabha chat``
the same service runs for the terminal's rows (meetings held there): :class:`ConsoleDeliver`
prints a due reminder between the lines of the conversation; what fell due while no chat was open is
not printed one by one: the chat opens with a summary of at most three lines
(:mod:`board.decisions.waiting`), and the reminders and resolution requests due before that moment
(``summarised_before``) are recorded as delivered by it.

Replicas (several ``sabha run`` on one PostgreSQL) each run a runner on the same table: a row is
claimed by one of them only, and a replica that dies holding claims loses them to the others once
``replicas.lease_s`` passes without it touching them (:func:`claim_lease`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from board.app import Board
from board.envelope import Reply
from board.schedule import Delivered, Delivery, RunnerSettings, ScheduledWork, ScheduleRunner, WorkKind
from board.storage import Dialect
from bot.channels.base import Channel
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

__all__ = ["CONSOLE", "DEFAULT_LEASE_S", "OWN_DELIVERY", "SUMMARISED", "ChannelDeliver", "ConsoleDeliver",
           "ScheduledWorkService", "channel_names", "claim_lease"]

#: The channel name of the terminal (``sabha chat``, ``sabha ask``, ``sabha meeting``).
CONSOLE = "console"

log = logging.getLogger("sabha.schedule")

#: channel name -> the module whose ``scheduled_delivery(channel, work, reply, sending)`` it uses
OWN_DELIVERY = {"whatsapp": "bot.channels.whatsapp.templates"}

#: The kinds of the terminal's rows the chat's opening summary stands for (:class:`ConsoleDeliver`).
SUMMARISED = (WorkKind.REMINDER, WorkKind.RESOLUTION)

#: How long a stop waits for a scheduled delivery in flight before cancelling it.
STOP_GRACE_S = 10.0


class ChannelDeliver:
    """Scheduled replies through the daemon's channels; see the module docstring."""

    def __init__(self, channels: Sequence[Channel]) -> None:
        self.channels = {channel.name: channel for channel in channels}

    async def __call__(self, work: ScheduledWork, reply: Reply, sending: Callable[[], Awaitable[None]],
                       ) -> Delivered:
        channel = self.channels.get(work.place.channel)
        if channel is None:
            return Delivered(Delivery.WAIT, f"the {work.place.channel} channel is not running")
        module = OWN_DELIVERY.get(work.place.channel)
        if module is not None:
            own = importlib.import_module(module).scheduled_delivery
            result: Delivered = await own(channel, work, reply, sending)
            return result
        progress = SendProgress(before_first_request=sending, after_refusal=getattr(sending, "refused", None))
        try:
            await channel.deliver(reply, progress)
        except SendFailed as exc:
            if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED:
                return Delivered(Delivery.MAY_HAVE_ARRIVED, str(exc))
            return Delivered(Delivery.NOT_SENT, str(exc))
        return Delivered(Delivery.SENT, progress.note)


class ConsoleDeliver:
    """Scheduled replies of the terminal's place: printed by ``show`` (the chat's own printer); a
    :data:`SUMMARISED` row due at or before ``summarised_before`` (the moment the chat opened and printed its
    summary) is recorded as delivered by that summary and not printed."""

    def __init__(self, show: Callable[[Reply], None], summarised_before: datetime | None = None) -> None:
        self.show = show
        self.summarised_before = summarised_before

    async def __call__(self, work: ScheduledWork, reply: Reply, sending: Callable[[], Awaitable[None]],
                       ) -> Delivered:
        await sending()
        if self.summarised_before is not None and work.kind in SUMMARISED and work.due_at <= self.summarised_before:
            return Delivered(Delivery.SENT, "summarised when `sabha chat` opened")
        self.show(reply)
        return Delivered(Delivery.SENT)


def channel_names() -> tuple[str, ...]:
    """The channels the daemon may run (the registry's packages), whose rows its runner takes."""
    from bot.channels.registry import PACKAGES

    return tuple(package.rsplit(".", 1)[-1] for package in PACKAGES)


#: ``replicas.lease_s``'s default (bot/config/sections.py)
DEFAULT_LEASE_S = 15.0


def claim_lease(board: Board, lease_s: float) -> float | None:
    """How long a scheduled row's claim outlives a runner that stopped touching it: ``replicas.lease_s``
    where replicas may share the state (PostgreSQL); None on SQLite (one daemon: every claim found at
    start is its own previous life's, taken back at once)."""
    return lease_s if board.parts.db.dialect is Dialect.POSTGRES else None


class ScheduledWorkService:
    """The runner's task: :meth:`start` once the channels are up, :meth:`stop` before they stop (a
    delivery in flight gets :data:`STOP_GRACE_S`). ``deliver`` and ``channels``: another place than the
    daemon's channels (the terminal)."""

    def __init__(self, board: Board, channels: Sequence[Channel], *, deliver: Any = None,
                 only: tuple[str, ...] | None = None, lease_s: float = DEFAULT_LEASE_S,
                 recheck_s: float = RunnerSettings.recheck_s) -> None:
        self.board = board
        settings = RunnerSettings(channels=only if only is not None else channel_names(),
                                  claim_lease_s=claim_lease(board, lease_s), recheck_s=recheck_s)
        self.runner = ScheduleRunner(board.parts.schedule, deliver or ChannelDeliver(channels), settings)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start doing scheduled work."""
        self._task = asyncio.create_task(self.runner.run(self._stop), name="scheduled work")

    async def stop(self) -> None:
        """Stop after the item in hand (bounded); items not started stay for the next start."""
        self._stop.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), STOP_GRACE_S)
        except TimeoutError:
            log.warning("schedule: a scheduled delivery was still running after %.0f s; stopping it", STOP_GRACE_S)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        except Exception:
            log.exception("schedule: the runner failed")
        self._task = None
