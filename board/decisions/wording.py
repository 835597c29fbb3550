"""The board's words for following a decision through, one name per idea.

"Owner" is the person whose board it is (``/due``, ``/done`` are owner-only; "your reminder"). An action
item's role is who *owes* it, named as the board names its members: the chair is "the Chair", the others by
their display names ("Research"), never by slug. Something past its moment says how late it is
("overdue by 2 days", :func:`board.schedule.dates.late_by`). :func:`owes` and :func:`due_words` are what the
reminders, ``/actions``, ``/status``, ``sabha status`` and the chat's summary on opening say.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo

from board.schedule.dates import describe, late_by

__all__ = ["CHAIR", "CHAIR_ROLE", "Voice", "due_words", "owes", "plural"]

#: (display name, emoji) of a role, or None when the role is unknown (the souls answer it)
Voice = Callable[[str], tuple[str, str] | None]

#: the role that chairs the board, and how the board's words name it
CHAIR_ROLE = "general"
CHAIR = "the Chair"


def owes(role: str, voice: Voice | None = None) -> str:
    """Who owes an item of ``role``: ``the Chair``, ``Research`` (its display name), or the role as written."""
    if role == CHAIR_ROLE:
        return CHAIR
    named = voice(role) if voice is not None else None
    return named[0] if named is not None and named[0].strip() else role[:1].upper() + role[1:]


def due_words(due: datetime, now: datetime, zone: tzinfo) -> str:
    """``due Wed 2026-11-25 09:02 UTC``, and ``, overdue by 2 days`` when that moment is past."""
    late = late_by(due, now)
    return f"due {describe(due, zone)}" + (f", overdue by {late}" if late else "")


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 action item``, ``3 action items``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"
