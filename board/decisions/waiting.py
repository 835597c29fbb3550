"""What waits for the owner, in at most two short lines: the summary ``sabha chat`` prints on opening.

A terminal chat that was closed for days would otherwise print every reminder and resolution request that
fell due meanwhile, one after another, before the person can type (seven of them were 35 lines). Instead
:func:`waiting_lines` says how many action items are overdue (the most overdue one named, and how late)
and how many fall due within a week, and how many predictions are ready to be checked, each with the
command that lists them. The chat marks the reminders and requests this summary stands for as delivered
(:class:`bot.scheduled.ConsoleDeliver`), so they are not printed after it either."""

from __future__ import annotations

from datetime import datetime, timedelta

from board.decisions.predictions.store import PredictionStore
from board.decisions.reminders import Reminders
from board.decisions.wording import plural
from board.schedule.dates import late_by
from board.schedule.work import parse_stamp

__all__ = ["SOON", "waiting_lines"]

#: "due this week": an open item due within this long from now
SOON = timedelta(days=7)


async def _action_lines(reminders: Reminders, now: datetime) -> list[str]:
    rows = [r for r in await reminders.store.actions(limit=100_000) if r.status == "open" and r.due_at]
    late = sorted((r for r in rows if parse_stamp(r.due_at or "") <= now), key=lambda r: (r.due_at or "", r.id))
    soon = [r for r in rows if now < parse_stamp(r.due_at or "") <= now + SOON]
    if not late and not soon:
        return []
    said = []
    if late:
        how_late = late_by(parse_stamp(late[0].due_at or ""), now) or "a moment"
        said.append(f"{plural(len(late), 'action')} {'is' if len(late) == 1 else 'are'} overdue "
                    f"(#{late[0].id} by {how_late})")
    if soon:
        said.append(f"{len(soon)} due this week" if late
                    else f"{plural(len(soon), 'action')} {'is' if len(soon) == 1 else 'are'} due this week")
    return [f"\u23f0 {', '.join(said)}: /actions lists {'it' if len(late) + len(soon) == 1 else 'them'}."]


async def _prediction_line(predictions: PredictionStore, now: datetime, reminders: Reminders) -> list[str]:
    today = now.astimezone(reminders.zone).date().isoformat()
    due = await predictions.due(today, limit=100_000)
    if not due:
        return []
    one = len(due) == 1
    return [f"\u23f0 {plural(len(due), 'prediction')} {'is' if one else 'are'} ready to check: /predictions "
            f"lists {'it' if one else 'them'}."]


async def waiting_lines(reminders: Reminders, predictions: PredictionStore, now: datetime) -> list[str]:
    """At most two lines, each short enough for an 80-column terminal: the overdue and soon-due action items
    (the most overdue one named), and the predictions due to be checked."""
    return [*await _action_lines(reminders, now), *await _prediction_line(predictions, now, reminders)]
