"""Scheduled work in words, for ``/status`` and ``sabha status``: how much is pending, the
next item, what waits and for what (a channel not running, a closed WhatsApp window, the
terminal's rows that only ``sabha chat`` sends), and the latest failures."""

from __future__ import annotations

from board.schedule.store import WorkStore
from board.schedule.work import WorkStatus

__all__ = ["TERMINAL", "WAITS_FOR_CHAT", "status_lines"]

#: the place of the terminal's meetings and chats: its rows are done by ``sabha chat``, not the daemon
TERMINAL = "console"
WAITS_FOR_CHAT = "waits for `sabha chat`"


async def status_lines(store: WorkStore, *, limit: int = 5) -> list[str]:
    """The lines; see the module docstring."""
    rows = await store.open_rows(limit=500)
    if not rows:
        lines = ["Scheduled: nothing pending"]
    else:
        head = rows[0]
        lines = [f"Scheduled: {len(rows)} pending; next: {head.kind} {head.key} at "
                 f"{head.due_at.isoformat(timespec='seconds')} in {head.place}"
                 f"{f' ({WAITS_FOR_CHAT})' if head.place.channel == TERMINAL else ''}"]
    terminal = [r for r in rows if r.place.channel == TERMINAL and not r.held]
    if terminal:
        lines.append(f"  for the terminal ({len(terminal)}): each {WAITS_FOR_CHAT} (the daemon does not send it)")
        lines += [f"    {r.kind} {r.key} (due {r.due_at.isoformat(timespec='seconds')}): {WAITS_FOR_CHAT}"
                  for r in terminal[:limit]]
    held = [r for r in rows if r.held]
    if held:
        lines.append(f"  waiting ({len(held)}):")
        lines += [f"    {r.kind} {r.key} (due {r.due_at.isoformat(timespec='seconds')}): {r.held}"
                  for r in held[:limit]]
    failed = await store.recent(statuses=(WorkStatus.FAILED,), limit=limit)
    if failed:
        lines.append("  failed:")
        lines += [f"    {r.kind} {r.key}: {r.detail or r.outcome}" for r in failed]
    return lines
