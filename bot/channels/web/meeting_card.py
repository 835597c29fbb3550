"""A meeting called in the web chat, as the chat shows it: a link to its live page, then a decision card.

The chat is not the meeting's page: it says where to watch the meeting (a link on this origin, to
``/ui/meetings/<id>``) and, when the board has decided, shows a card: the recommendation, the vote as the
board gave it (each member's last stance: support / conditional / oppose, and their confidence), the
dissent, the action items (how many, the first few), and a link "Read the minutes" to the meeting's page.
The minutes themselves (thousands of characters, with their checkboxes) stay on that page, never in a
bubble. A meeting that ends with no decision says so, with the same link.

:class:`MeetingNotes` folds the events of the meetings called here (each member's latest stance, from
``agent_spoke``) and turns ``started`` / ``decision`` / ``ended`` into the Markdown of a chat line
(:class:`ChatLine`); everything else says nothing in the chat. The stances are kept in memory while the
meeting runs: a card for a meeting whose stances were not heard here (a restart mid-meeting) has no vote line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from board.room.meeting import MeetingEvent, MeetingEventKind

__all__ = ["MEETINGS", "TOP_ACTIONS", "ChatLine", "MeetingNotes", "meeting_link"]

#: Where the owner's pages show a meeting (live while it runs, its record and minutes after).
MEETINGS = "/ui/meetings"
#: How many action items the card names (the rest are counted, and on the meeting's page).
TOP_ACTIONS = 3
#: The longest recommendation or task the card shows whole (the rest is on the meeting's page).
LONGEST = 400
_POSITIONS = ("support", "conditional", "oppose")


@dataclass(frozen=True)
class ChatLine:
    """What the chat says of a meeting event: ``key`` names it in the outbox (one line per meeting and kind)."""

    key: str
    body: str


def meeting_link(meeting_id: str) -> str:
    """The relative address of the meeting's page (same origin: the page opens it)."""
    return f"{MEETINGS}/{meeting_id}"


def _short(text: Any, limit: int = LONGEST) -> str:
    said = " ".join(str(text or "").split())
    return said if len(said) <= limit else said[: limit - 1].rstrip() + "…"


def _vote(stances: Mapping[str, Mapping[str, Any]], present: list[str]) -> str | None:
    """``3 support, 1 oppose, 1 gave no stance; confidence 72% on average`` (None: no member stated a stance);
    ``present``: the members who took part (the decision event's ``participants``)."""
    if not stances:
        return None
    counts = {p: sum(1 for s in stances.values() if s.get("position") == p) for p in _POSITIONS}
    said = ", ".join(f"{n} {p}" for p, n in counts.items() if n)
    silent = [role for role in present if role not in stances]
    if silent:
        said += f", {len(silent)} gave no stance"
    confidences = [float(s.get("confidence") or 0) for s in stances.values()]
    average = round(100 * sum(confidences) / len(confidences))
    return f"**Vote:** {said}; confidence {average}% on average"


@dataclass
class MeetingNotes:
    """See the module docstring. ``label`` names a role (``<emoji> <Name>``)."""

    label: Callable[[str], str] = str
    _stances: dict[str, dict[str, Mapping[str, Any]]] = field(default_factory=dict)
    _decided: set[str] = field(default_factory=set)

    def line(self, event: MeetingEvent) -> ChatLine | None:
        """What the chat says of ``event`` (None: nothing)."""
        key = f"m:{event.meeting_id}:{event.kind.value}"
        if event.kind is MeetingEventKind.STARTED:
            return ChatLine(key, f"The board meets on \u201c{event.topic}\u201d: "
                                 f"[watch it live]({meeting_link(event.meeting_id)})")
        if event.kind is MeetingEventKind.AGENT_SPOKE:
            stance = event.data.get("stance")
            if event.role and isinstance(stance, dict) and stance.get("position"):
                self._stances.setdefault(event.meeting_id, {})[event.role] = stance
            return None
        if event.kind is MeetingEventKind.DECISION:
            self._decided.add(event.meeting_id)
            return ChatLine(key, self.card(event))
        if event.kind is MeetingEventKind.ENDED:
            self._stances.pop(event.meeting_id, None)
            if event.meeting_id in self._decided:
                self._decided.discard(event.meeting_id)
                return None  # the card said it all; the minutes are on the meeting's page
            return ChatLine(key, f"The meeting on \u201c{event.topic}\u201d ended without a decision "
                                 f"({event.data.get('stop_reason') or 'stopped'}). "
                                 f"[Read the minutes]({meeting_link(event.meeting_id)})")
        return None

    def card(self, event: MeetingEvent) -> str:
        """The decision card of a ``decision`` event (Markdown; one fact a line: the chat keeps line breaks)."""
        d: Mapping[str, Any] = dict(event.data.get("decision") or {})
        head = [f"**Board decision** on \u201c{event.topic}\u201d",
                f"**Recommendation:** {_short(d.get('recommendation') or event.text)}"]
        present = [str(r) for r in event.data.get("participants") or ()]
        vote = _vote(self._stances.get(event.meeting_id, {}), present)
        if vote:
            head.append(vote)
        dissent = [self.label(str(x.get("who"))) for x in d.get("dissent") or () if isinstance(x, dict)]
        if dissent:
            head.append(f"**Dissent:** {', '.join(dissent)}")
        blocks = ["\n".join(head)]
        actions = [a for a in d.get("action_items") or () if isinstance(a, dict)]
        if actions:
            more = f", the first {TOP_ACTIONS}" if len(actions) > TOP_ACTIONS else ""
            blocks.append(f"**Action items:** {len(actions)}{more}\n" + "\n".join(
                f"{i}. {_short(a.get('task'), 160)} ({self.label(str(a.get('owner')))})"
                for i, a in enumerate(actions[:TOP_ACTIONS], 1)))
        if d.get("best_effort"):
            blocks.append("_(assembled by Sabha: the chair's decision could not be validated)_")
        blocks.append(f"[Read the minutes]({meeting_link(event.meeting_id)}) · /ratify, /veto or /revisit it here")
        return "\n\n".join(blocks)
