"""Channel-neutral rendering of a meeting's decision as Markdown (each channel formats
Markdown its own way: Telegram entities, WhatsApp text, the terminal as is)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from board.room.meeting import MeetingEvent

__all__ = ["format_decision"]


def format_decision(event: MeetingEvent) -> str:
    """A decision event as Markdown: recommendation, rationale, dissent, actions, questions."""
    d: Mapping[str, Any] = dict(event.data.get("decision") or {})
    parts = [f"**Recommendation:** {d.get('recommendation') or event.text}"]
    if d.get("rationale"):
        parts.append(f"**Why:** {d['rationale']}")
    if d.get("consensus_points"):
        parts.append("**Agreed:**\n" + "\n".join(f"- {p}" for p in d["consensus_points"]))
    if d.get("dissent"):
        parts.append("**Dissent:**\n" + "\n".join(f"- {x.get('who')}: {x.get('why')}" for x in d["dissent"]))
    if d.get("action_items"):
        parts.append("**Actions:**\n" + "\n".join(
            f"{i}. {a.get('task')} ({a.get('owner')}" + (f", due {a['due']}" if a.get("due") else "") + ")"
            for i, a in enumerate(d["action_items"], 1)))
    if d.get("open_questions"):
        parts.append("**Open questions:**\n" + "\n".join(f"- {q}" for q in d["open_questions"]))
    if d.get("best_effort"):
        parts.append("_(assembled by Sabha: the chair's decision could not be validated)_")
    return "\n\n".join(parts)
