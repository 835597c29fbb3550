"""Slash commands that follow a decision through: ``/due``, ``/snooze``, and ``/actions`` and
``/done`` with due dates and reminders (replacing the plain ones of :mod:`board.commands.room`).

- ``/actions [all]``: open action items, who owes each and their due dates, the overdue ones first
  with how late they are;
- ``/due <n> <when>``: set or move item n's due date (``friday``, ``+10m``, ``2026-12-15``, ``in two
  weeks`` ...; :mod:`board.schedule.dates`); its reminder moves with it;
- ``/snooze <n> [length]``: remind again after ``length`` (``2h``, ``1d``; a day by default);
- ``/done <n>``: close item n and cancel its reminder.

Only the owner sets or changes due dates, snoozes and closes items (``/due``, ``/snooze`` and
``/done`` are owner-only, so a member pressing a reminder's Done or Snooze is refused and nothing
changes); anyone may list the items of meetings held in their chat. Bad
input (an unknown or closed item, a date that cannot be read or has passed) is answered with
what went wrong and what is understood; nothing is changed. Pressing a reminder's Done or
Snooze button sends ``/done <n>`` / ``/snooze <n>``, so a second press finds the item closed (or
snoozes it again from now) and says so.
"""

from __future__ import annotations

from datetime import tzinfo

from board.commands.host import CommandHost
from board.decisions.reminders import ActionProblem, Reminders
from board.envelope import Envelope
from board.room.store import MeetingStore
from board.routing.router import Route
from board.schedule.dates import UNDERSTOOD

__all__ = ["overdue_lines", "register"]


def _place(envelope: Envelope) -> tuple[str, str] | None:
    return None if envelope.is_owner else (envelope.channel, envelope.chat_id)


def _item(word: str) -> int | None:
    word = word.strip().lstrip("#")
    return int(word) if word.isdigit() else None


def _zone_name(zone: tzinfo) -> str:
    return getattr(zone, "key", None) or str(zone)


def register(host: CommandHost, reminders: Reminders) -> None:
    """Add ``/actions``, ``/due``, ``/snooze`` and ``/done`` on ``reminders`` to ``host``."""
    store = reminders.store

    async def actions(envelope: Envelope, route: Route) -> str:
        rows = await store.actions(place=_place(envelope), include_done=route.text.strip().lower() == "all")
        from board.room.record import format_actions  # with the command, not with every board (test_fast_start)

        return format_actions(rows, now=reminders.clock.now(), zone=reminders.zone, who=reminders.who)

    async def due(envelope: Envelope, route: Route) -> str:
        first, _, when = route.text.strip().partition(" ")
        number = _item(first)
        if number is None or not when.strip():
            return (f"Say which item and when: /due <n> <when>, e.g. /due 3 friday or /due 3 +2h "
                    f"(I understand {UNDERSTOOD}; times are {_zone_name(reminders.zone)}). /actions lists the items.")
        try:
            changed = await reminders.set_due(number, when, place=_place(envelope))
        except ActionProblem as problem:
            return str(problem)
        here = (changed.row.channel, changed.row.chat_id) == (envelope.channel, envelope.chat_id)
        terminal = reminders.goes_to(changed.row)
        where = f"it goes to {terminal}" if terminal else \
            f"I will remind {'you here' if here else 'the chat where its meeting was held'} then"
        return (f"#{changed.row.id} {changed.row.task} (owed by {reminders.who(changed.row.owner)}) is now due "
                f"{changed.when.said}; "
                f"{where}.")

    async def snooze(envelope: Envelope, route: Route) -> str:
        first, _, length = route.text.strip().partition(" ")
        number = _item(first)
        if number is None:
            return "Say which item: /snooze <n> [length], e.g. /snooze 3 or /snooze 3 2h (a day by default)."
        try:
            changed = await reminders.snooze(number, length, place=_place(envelope))
        except ActionProblem as problem:
            return str(problem)
        return f"Snoozed #{changed.row.id} {changed.row.task}: I will remind you again {changed.when.said}."

    async def done(envelope: Envelope, route: Route) -> str:
        number = _item(route.text)
        if number is None:
            return "Say which action item is done: /done <n> (the numbers are in /actions)."
        try:
            row = await reminders.done(number, by=envelope.sender, place=_place(envelope))
        except ActionProblem as problem:
            return str(problem)
        return f"Done: #{row.id} {row.task} (owed by {reminders.who(row.owner)}), from {row.meeting_id}."

    host.register_command("actions", actions,
                          "/actions [all]: open action items, who owes them, due dates, overdue first")
    host.register_command("due", due, "/due <n> <when>: set when action item n is due (friday, +2h, 2026-12-15)",
                          owner_only=True)
    host.register_command("snooze", snooze, "/snooze <n> [2h]: remind me of item n later (a day by default)",
                          owner_only=True)
    host.register_command("done", done, "/done <n>: close action item n (and its reminder)", owner_only=True)


async def overdue_lines(store: MeetingStore, reminders: Reminders, *, limit: int = 5) -> list[str]:
    """For ``/status``: the open items past their due date (the most overdue first), how late, and how many
    more there are than ``limit``."""
    from board.room.record import due_label
    from board.schedule.work import stamp

    now = reminders.clock.now()
    rows = await store.due_by(stamp(now))
    if not rows:
        return []
    lines = [f"Action items overdue ({len(rows)}; /actions lists them all):"]
    lines += [f"  #{r.id} {r.task} ({reminders.who(r.owner)} owes it) \u00b7 {due_label(r, now, reminders.zone)}"
              for r in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"  and {len(rows) - limit} more (/actions lists them)")
    return lines
