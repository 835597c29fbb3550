"""What waits for the owner, in at most three lines: the summary ``sabha chat`` prints on opening.

A terminal chat that was closed for days would otherwise print every reminder and resolution request that
fell due meanwhile, one after another, before the person can type (seven of them were 35 lines). Instead
:func:`waiting_lines` says how many action items are overdue and how many fall due within a week (with
the most overdue one named), and how many predictions have reached their check-by date, each with the
command that lists them; the chat marks the reminders and requests this summary stands for as delivered
(:class:`bot.scheduled.ConsoleDeliver`), so they are not printed after it either.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from board.decisions.predictions.store import PredictionStore
from board.decisions.reminders import Reminders
from board.decisions.wording import plural
from board.schedule.dates import late_by
from board.schedule.work import parse_stamp
from board.workspace.quoting import plain_line

__all__ = ["SOON", "waiting_lines"]

#: "due this week": an open item due within this long from now
SOON = timedelta(days=7)
#: the most overdue item's task is cut to this many characters, so its line fits a terminal
TASK_CHARS = 60


async def _action_lines(reminders: Reminders, now: datetime) -> list[str]:
    rows = [r for r in await reminders.store.actions(limit=100_000) if r.status == "open" and r.due_at]
    late = sorted((r for r in rows if parse_stamp(r.due_at or "") <= now), key=lambda r: (r.due_at or "", r.id))
    soon = [r for r in rows if now < parse_stamp(r.due_at or "") <= now + SOON]
    if not late and not soon:
        return []
    counts = [f"{plural(len(late), 'action item')} {'is' if len(late) == 1 else 'are'} overdue"] if late else []
    if soon:
        counts.append(f"{len(soon)} {'is' if len(soon) == 1 else 'are'} due this week" if late
                      else f"{plural(len(soon), 'action item')} {'is' if len(soon) == 1 else 'are'} due this week")
    lines = [f"\u23f0 {' and '.join(counts)}: /actions lists {'it' if len(late) + len(soon) == 1 else 'them'}."]
    if late:
        first = late[0]
        how_late = late_by(parse_stamp(first.due_at or ""), now) or "a moment"
        lines.append(f"   The most overdue: #{first.id} \u201c{plain_line(first.task, TASK_CHARS)}\u201d "
                     f"({reminders.who(first.owner)} owes it), overdue by {how_late}.")
    return lines


async def _prediction_line(predictions: PredictionStore, now: datetime, reminders: Reminders) -> list[str]:
    today = now.astimezone(reminders.zone).date().isoformat()
    due = await predictions.due(today, limit=100_000)
    if not due:
        return []
    one = len(due) == 1
    return [f"\u23f0 {plural(len(due), 'prediction')} {'has' if one else 'have'} reached the date to check "
            f"{'it' if one else 'them'}: /predictions lists {'it' if one else 'them'}; /resolve <n> yes|no|unknown "
            "records how one turned out."]


async def waiting_lines(reminders: Reminders, predictions: PredictionStore, now: datetime) -> list[str]:
    """At most three lines: the overdue and soon-due action items, and the predictions due to be checked."""
    return [*await _action_lines(reminders, now), *await _prediction_line(predictions, now, reminders)]
