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
meeting runs (for the :data:`REMEMBERED` latest meetings): a card for a meeting whose stances were not heard
here (a restart mid-meeting) has no vote line. A card that could not be stored (the db a moment away) is
followed, at the meeting's end, by a line saying the board decided, with the link.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from board.room.meeting import MeetingEvent, MeetingEventKind

__all__ = ["MEETINGS", "REMEMBERED", "TOP_ACTIONS", "ChatLine", "MeetingNotes", "meeting_link"]

#: Where the owner's pages show a meeting (live while it runs, its record and minutes after).
MEETINGS = "/ui/meetings"
#: How many action items the card names (the rest are counted, and on the meeting's page).
TOP_ACTIONS = 3
#: The longest recommendation or task the card shows whole (the rest is on the meeting's page).
LONGEST = 400
_POSITIONS = ("support", "conditional", "oppose")
#: At most this many meetings' stances are kept (a meeting that never ends is forgotten, oldest first).
REMEMBERED = 32


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


def _remember(found: dict[str, Any], meeting_id: str, value: Any) -> None:
    """Keep ``value`` for ``meeting_id``, forgetting the oldest meetings past :data:`REMEMBERED`."""
    found[meeting_id] = value
    while len(found) > REMEMBERED:
        found.pop(next(iter(found)))


@dataclass
class MeetingNotes:
    """See the module docstring. ``label`` names a role (``<emoji> <Name>``). The channel calls :meth:`posted`
    once a line is stored: only a card that was posted makes the meeting's end say nothing."""

    label: Callable[[str], str] = str
    _stances: dict[str, dict[str, Mapping[str, Any]]] = field(default_factory=dict)
    _decided: dict[str, bool] = field(default_factory=dict)  # meeting -> its card was posted

    def line(self, event: MeetingEvent) -> ChatLine | None:
        """What the chat says of ``event`` (None: nothing)."""
        key = f"m:{event.meeting_id}:{event.kind.value}"
        if event.kind is MeetingEventKind.STARTED:
            return ChatLine(key, f"The board meets on \u201c{event.topic}\u201d: "
                                 f"[watch it live]({meeting_link(event.meeting_id)})")
        if event.kind is MeetingEventKind.AGENT_SPOKE:
            stance = event.data.get("stance")
            if event.role and isinstance(stance, dict) and stance.get("position"):
                stances = self._stances.get(event.meeting_id)
                if stances is None:
                    _remember(self._stances, event.meeting_id, stances := {})
                stances[event.role] = stance
            return None
        if event.kind is MeetingEventKind.DECISION:
            _remember(self._decided, event.meeting_id, False)
            return ChatLine(key, self.card(event))
        if event.kind is MeetingEventKind.ENDED:
            return self._end(event, key)
        return None

    def posted(self, line: ChatLine) -> None:
        """``line`` is in the chat (a decision card: the meeting's end need not say more)."""
        meeting_id = line.key.removeprefix("m:").rsplit(":", 1)[0]
        if line.key.endswith(f":{MeetingEventKind.DECISION.value}") and meeting_id in self._decided:
            self._decided[meeting_id] = True

    def _end(self, event: MeetingEvent, key: str) -> ChatLine | None:
        self._stances.pop(event.meeting_id, None)
        decided = self._decided.pop(event.meeting_id, None)
        link = meeting_link(event.meeting_id)
        if decided:
            return None  # the card said it all; the minutes are on the meeting's page
        if decided is False:  # its card could not be posted: say so much at least
            return ChatLine(key, f"The board decided on \u201c{event.topic}\u201d. [Read the minutes]({link})"
                                 " · /ratify, /veto or /revisit it here")
        return ChatLine(key, f"The meeting on \u201c{event.topic}\u201d ended without a decision "
                             f"({event.data.get('stop_reason') or 'stopped'}). [Read the minutes]({link})")

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
