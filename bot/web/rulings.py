"""What the pages show of a decision's verdict and of an action item's due date (issue 27 on the web).

:class:`RulingView` is a decision's state as the templates draw it (``decision_parts.html``):
proposed / ratified by whom and when / vetoed / sent back, the reason, the follow-up meeting,
and which rulings may still follow (the same rule as :data:`board.decisions.ratify.ALLOWED`, read
from the book, so the page never offers a button the board would refuse). :func:`action_view`
is an open action item with its due date as ``/actions`` words it (``due Fri ...`` or
``OVERDUE since ...``); :func:`meeting_actions` are a meeting's items so (its page and its live
stream show real dates, never the date as the model typed it). Kept apart from
:mod:`bot.web.decisions` (the handlers) so the meeting page (:mod:`bot.web.pages`) and its stream
(:mod:`bot.web.meeting_stream`) can use it without importing the handlers that import them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, tzinfo
from typing import Any

from board.commands.decisions import verdict_label
from board.decisions.actions import ActionRow
from board.decisions.ratify import ALLOWED, DecisionRecord, Verdict
from board.room.record import due_label, is_overdue
from board.room.store import MeetingStore

__all__ = ["RulingView", "action_view", "meeting_actions", "proposed", "ruling_view"]


@dataclass(frozen=True)
class RulingView:
    """A decision's state for the page, and the rulings it still allows."""

    meeting_id: str
    verdict: str  # a :class:`Verdict` value
    label: str  # "⏳ proposed", "✅ ratified" ...
    who: str = ""  # "by the owner (web)"
    when: str = ""  # "2026-11-25 12:00 UTC"
    reason: str = ""
    follow_up_id: str = ""
    revisit_of: str = ""
    can_ratify: bool = False
    can_veto: bool = False
    can_revisit: bool = False

    @property
    def open(self) -> bool:
        """Whether any ruling may still follow."""
        return self.can_ratify or self.can_veto or self.can_revisit


def ruling_view(record: DecisionRecord) -> RulingView:
    """``record`` as the page shows it."""
    allowed = ALLOWED[record.verdict]
    when = (record.ruled_at or "").replace("T", " ").removesuffix("+00:00")
    ruled = record.verdict is not Verdict.PROPOSED
    return RulingView(
        meeting_id=record.meeting_id, verdict=record.verdict.value, label=verdict_label(record.verdict),
        who=f"by {record.ruled_by_name or record.ruled_by or 'someone'}" if ruled else "",
        when=f"{when} UTC" if ruled and when else "", reason=record.reason or "",
        follow_up_id=record.follow_up_id or "", revisit_of=record.revisit_of or "",
        can_ratify=Verdict.RATIFIED in allowed, can_veto=Verdict.VETOED in allowed,
        can_revisit=Verdict.REVISIT in allowed,
    )


def proposed(meeting_id: str) -> RulingView:
    """A decision that has just arrived (the live page): proposed, every ruling open."""
    return RulingView(meeting_id=meeting_id, verdict=Verdict.PROPOSED.value, label=verdict_label(Verdict.PROPOSED),
                      can_ratify=True, can_veto=True, can_revisit=True)


def action_view(row: ActionRow, now: datetime, zone: tzinfo, who: Callable[[str], str] | None = None,
                ) -> dict[str, Any]:
    """``row`` for the page (its fields, as the template reads them), with ``due``: its date read at
    ``now`` in ``zone`` in ``/actions``' words, ``overdue``, and ``owed_by``: who owes it in the board's
    words (``who``; :meth:`board.decisions.reminders.Reminders.who`)."""
    from board.decisions.wording import owes

    return {**asdict(row), "due": due_label(row, now, zone), "overdue": is_overdue(row, now),
            "owed_by": (who or owes)(row.owner)}


async def meeting_actions(store: MeetingStore, meeting_id: str, now: datetime, zone: tzinfo) -> list[dict[str, Any]]:
    """The action items of meeting ``meeting_id``, open or closed, in their order, as :func:`action_view` words them."""
    rows = await store.actions(include_done=True, meeting_id=meeting_id, limit=100)
    return [action_view(row, now, zone) for row in sorted(rows, key=lambda r: r.id)]
