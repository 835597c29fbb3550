"""What a meeting leaves behind in chat: a ``meeting`` transcript record, and the action items.

After a decision, :func:`meeting_entry` builds one transcript entry (``type: meeting``:
id, topic, recommendation, dissent, actions) that :class:`board.app.Board` appends to
the asking session and to every participant's own session for the same place, so a
later "what did we decide about Europe?" is answered from the record. The history
window reads it as a message from Sabha (``role: user``, ``sender: sabha``): context the
model was told, not something it said. :func:`format_actions` renders open action items
for ``/actions`` and ``sabha actions``: who owes each (``the Chair owes it``), its due date in the owner's
time zone, and how late the overdue ones are (listed first, :func:`due_label`), in the words of
:mod:`board.decisions.wording`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any

from board.agent.compaction import new_entry_id
from board.conversation.transcripts import utc_now
from board.decisions.actions import ActionRow

__all__ = ["MEETING_ENTRY", "due_label", "format_actions", "is_overdue", "meeting_entry", "meeting_text"]

MEETING_ENTRY = "meeting"


def meeting_text(meeting_id: str, topic: str, decision: Mapping[str, Any]) -> str:
    """The record as the model reads it."""
    lines = [f"System: board meeting {meeting_id} on \u201c{topic}\u201d was held and recorded this decision.",
             f"Recommendation: {decision.get('recommendation', '')}"]
    dissent = decision.get("dissent") or []
    if dissent:
        lines.append("Dissent: " + "; ".join(f"{d.get('who')}: {d.get('why')}" for d in dissent))
    objection = decision.get("final_objection")
    if objection:
        lines.append(f"Final objection ({objection.get('who')}): {objection.get('text')}")
    actions = decision.get("action_items") or []
    if actions:
        lines.append("Actions: " + "; ".join(f"{i}. {a.get('task')} (owner: {a.get('owner')}"
                                             + (f", due {a['due']}" if a.get("due") else "") + ")"
                                             for i, a in enumerate(actions, start=1)))
    return "\n".join(lines)


def meeting_entry(meeting_id: str, topic: str, decision: Mapping[str, Any], *, chair: str) -> dict[str, Any]:
    """The transcript entry a meeting leaves in a session."""
    return {
        "type": MEETING_ENTRY,
        "id": new_entry_id(),
        "ts": utc_now(),
        "role": "user",
        "sender": "sabha",
        "agent": chair,
        "meeting_id": meeting_id,
        "topic": topic,
        "recommendation": decision.get("recommendation"),
        "dissent": list(decision.get("dissent") or []),
        "actions": list(decision.get("action_items") or []),
        "text": meeting_text(meeting_id, topic, decision),
    }


def _age(created_at: str, now: datetime) -> str:
    try:
        then = datetime.fromisoformat(created_at)
    except ValueError:
        return "?"
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def is_overdue(row: ActionRow, now: datetime) -> bool:
    """An open item whose due moment has come."""
    from board.schedule.work import parse_stamp

    return row.status == "open" and row.due_at is not None and parse_stamp(row.due_at) <= now


def due_label(row: ActionRow, now: datetime, zone: tzinfo = UTC) -> str:
    """``due Fri 2026-11-27 09:00 UTC``, ``due ..., overdue by 2 days``, the written date it cannot read, or ""."""
    from board.decisions.wording import due_words
    from board.schedule.dates import describe
    from board.schedule.work import parse_stamp

    if row.due_at is None:
        return f"due {row.due_text!r} (not a date I can read: /due {row.id} <when>)" if row.due_text else ""
    due = parse_stamp(row.due_at)
    return due_words(due, now, zone) if row.status == "open" else f"due {describe(due, zone)}"


def format_actions(rows: Sequence[ActionRow], *, now: datetime | None = None, close: str = "/done <n>",
                   zone: tzinfo = UTC, due: str = "/due <n> <when>", who: Callable[[str], str] | None = None) -> str:
    """Open action items, one a line: ``#n task (the Chair owes it) · due ... · age · meeting``, overdue ones
    first; ``close`` and ``due`` say how to close one and set its date where they are read (a chat's
    ``/done <n>``, the terminal's ``sabha actions done <n>``); ``who``: who owes an item of a role, in the
    board's words (:meth:`board.decisions.reminders.Reminders.who`)."""
    from board.decisions.wording import owes

    if not rows:
        return "No open action items. Meetings add them with their decisions."
    now = now or datetime.now(UTC)
    who = who or owes
    overdue = [r for r in rows if is_overdue(r, now)]
    ordered = [*sorted(overdue, key=lambda r: (r.due_at or "", r.id)), *[r for r in rows if r not in overdue]]
    head = f"Open action items ({len(rows)}" + (f", {len(overdue)} overdue" if overdue else "") + ")"
    lines = [f"{head}; close one with {close}, set its date with {due}:"]
    for row in ordered:
        state = "" if row.status == "open" else f" [{row.status}]"
        when = due_label(row, now, zone)
        owed = "owes" if row.status == "open" else "owed"
        lines.append(f"#{row.id} {row.task} ({who(row.owner)} {owed} it)" + (f" · {when}" if when else "")
                     + f" · {_age(row.created_at, now)} old · {row.meeting_id} “{row.topic}”{state}")
    return "\n".join(lines)
