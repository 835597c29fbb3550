"""Scheduled work: reminders, resolution requests, reviews and follow-ups, each a row in the
state db claimed before it is sent (the intake's durability rule, in time instead of on
receipt): exactly once across restarts and kill -9.

- :mod:`board.schedule.work`: the values (:class:`WorkKind`, :class:`NewWork`, :class:`ScheduledWork`, :class:`Place`);
- :mod:`board.schedule.store`: the ``scheduled_work`` table (migration 0800) and its conditional updates;
- :mod:`board.schedule.schedule`: :class:`Schedule` (``board.schedule``): add, cancel, reschedule, handlers per kind;
- :mod:`board.schedule.runner`: :class:`ScheduleRunner`, the loop the daemon starts with a :class:`Deliver`.

Use::

    from board.schedule import NewWork, Place, WorkKind
    board.schedule.register(WorkKind.REMINDER, remind)           # async (ScheduledWork) -> Reply | None
    await board.schedule.add(NewWork(WorkKind.REMINDER, key="reminder:action:12", due_at=when,
                                     place=Place("telegram", "-100123", 7), payload={"action": 12}))
"""

from board.schedule.runner import Deliver, Delivered, Delivery, RunnerSettings, ScheduleRunner, Withdrawn
from board.schedule.schedule import Schedule, WorkHandler
from board.schedule.store import WorkStore
from board.schedule.work import NewWork, Outcome, Place, ScheduledWork, WorkKind, WorkStatus

__all__ = [
    "Deliver",
    "Delivered",
    "Delivery",
    "NewWork",
    "Outcome",
    "Place",
    "RunnerSettings",
    "Schedule",
    "ScheduleRunner",
    "ScheduledWork",
    "Withdrawn",
    "WorkHandler",
    "WorkKind",
    "WorkStatus",
    "WorkStore",
]
