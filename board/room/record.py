"""What a meeting leaves behind in chat: a ``meeting`` transcript record, and the action items.

After a decision, :func:`meeting_entry` builds one transcript entry (``type: meeting``:
id, topic, recommendation, dissent, actions) that :class:`board.service.Board` appends to
the asking session and to every participant's own session for the same place, so a
later "what did we decide about Europe?" is answered from the record. The history
window reads it as a message from Sabha (``role: user``, ``sender: sabha``): context the
model was told, not something it said. :func:`format_actions` renders open action items
for ``/actions`` and ``sabha actions``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from board.agent.compaction import new_entry_id
from board.memory.transcripts import utc_now
from board.room.store import ActionRow

__all__ = ["MEETING_ENTRY", "format_actions", "meeting_entry", "meeting_text"]

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
        lines.append("Actions: " + "; ".join(f"{i}. {a.get('task')} (owner: {a.get('owner')})"
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


def format_actions(rows: Sequence[ActionRow], *, now: datetime | None = None, close: str = "/done <n>") -> str:
    """Open action items, one a line: ``#n task (owner) · age · meeting``; ``close`` says how to close
    one where they are read (a chat's ``/done <n>``, the terminal's ``sabha actions done <n>``)."""
    if not rows:
        return "No open action items. Meetings add them with their decisions."
    now = now or datetime.now(UTC)
    lines = [f"Open action items ({len(rows)}); close one with {close}:"]
    for row in rows:
        state = "" if row.status == "open" else " [done]"
        lines.append(f"#{row.id} {row.task} (owner: {row.owner}) · {_age(row.created_at, now)} old · "
                     f"{row.meeting_id} \u201c{row.topic}\u201d{state}")
    return "\n".join(lines)
