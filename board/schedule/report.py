"""Scheduled work in words, for ``/status`` and ``sabha status``: how much is pending, the
next item, what waits and for what (a channel not running, a closed WhatsApp window, the
terminal's rows that only ``sabha chat`` sends), the latest failures, and the standing work (``/every``) with
each item's next run in its own zone and what it cost this month (:func:`standing_lines`). A list shows the first
few rows and says how many more there are and where to see them; a row past its moment says how
late it is ("overdue by 2 days")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from board.schedule.dates import describe, late_by
from board.schedule.standing_store import ItemStatus, StandingItem, StandingStore
from board.schedule.store import WorkStore
from board.schedule.work import ScheduledWork, WorkStatus

__all__ = ["TERMINAL", "WAITS_FOR_CHAT", "month_spent", "standing_lines", "status_lines"]

#: the place of the terminal's meetings and chats: its rows are done by ``sabha chat``, not the daemon
TERMINAL = "console"
WAITS_FOR_CHAT = "waits for `sabha chat`"
#: where the rows a list leaves out are seen in full
SEE_ALL = "`sabha actions` and `sabha predictions list` show them"


def _due(row: ScheduledWork, now: datetime | None) -> str:
    late = late_by(row.due_at, now) if now is not None else None
    return f"due {row.due_at.isoformat(timespec='seconds')}" + (f", overdue by {late}" if late else "")


def _listed(rows: Sequence[ScheduledWork], limit: int, now: datetime | None, why: str | None) -> list[str]:
    """The first ``limit`` rows, one a line, and how many more (``why``: what each waits for; None: its own)."""
    lines = [f"    {r.kind} {r.key} ({_due(r, now)}): {why or r.held}" for r in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"    and {len(rows) - limit} more ({SEE_ALL})")
    return lines


async def status_lines(store: WorkStore, *, limit: int = 5, now: datetime | None = None) -> list[str]:
    """The lines; see the module docstring (``now``: the board's time, to say which rows are late)."""
    rows = await store.open_rows(limit=500)
    if not rows:
        lines = ["Scheduled: nothing pending"]
    else:
        head = rows[0]
        lines = [f"Scheduled: {len(rows)} pending; next: {head.kind} {head.key} ({_due(head, now)}) in {head.place}"
                 f"{f' ({WAITS_FOR_CHAT})' if head.place.channel == TERMINAL else ''}"]
    terminal = [r for r in rows if r.place.channel == TERMINAL and not r.held]
    if terminal:
        lines.append(f"  for the terminal ({len(terminal)}): each {WAITS_FOR_CHAT} (the daemon does not send it)")
        lines += _listed(terminal, limit, now, WAITS_FOR_CHAT)
    held = [r for r in rows if r.held]
    if held:
        lines.append(f"  waiting ({len(held)}):")
        lines += _listed(held, limit, now, None)
    failed = await store.recent(statuses=(WorkStatus.FAILED,), limit=limit)
    if failed:
        lines.append("  failed:")
        lines += [f"    {r.kind} {r.key}: {r.detail or r.outcome}" for r in failed]
    return lines + await standing_lines(StandingStore(store.db), limit=limit * 2, now=now)


async def month_spent(store: StandingStore, item: StandingItem, now: datetime) -> float:
    """USD the runs of ``item`` spent on model calls in ``now``'s calendar month (in the item's zone): every call
    of a run is tagged with its item in the ledger (``llm_calls.schedule_item``), a brief's and a meeting's."""
    local = now.astimezone(item.recurrence.tz())
    since = local.replace(day=1, hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)
    row = await store.db.fetchone(
        "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE schedule_item = ? AND ts >= ?",
        (item.id, since.isoformat(timespec="seconds")))
    return float(row["usd"]) if row is not None else 0.0


async def standing_lines(store: StandingStore, *, limit: int = 10, now: datetime | None = None) -> list[str]:
    """``Standing work (2; /standing or `sabha schedule list` lists them):`` and one line per item: what, where,
    its next run (or paused) and, given the board's ``now``, what its runs cost this month."""
    items = await store.items()
    if not items:
        return []
    lines = [f"Standing work ({len(items)}; /standing or `sabha schedule list` lists them):"]
    for item in items[:limit]:
        state = (f"next {describe(item.next_at, item.recurrence.tz())}"
                 if item.status is ItemStatus.ACTIVE and item.next_at else item.status.value)
        cost = f"; ${await month_spent(store, item, now):.2f} this month" if now is not None else ""
        lines.append(f"    #{item.id} {item.title()} in {item.place}: {state}{cost}")
    if len(items) > limit:
        lines.append(f"    and {len(items) - limit} more")
    return lines
