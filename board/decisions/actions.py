"""An action item of a recorded decision, as the meeting store reads it: :class:`ActionRow`.

The meeting writes action items when it decides (:class:`board.room.store.MeetingStore`, migrations
``0102_stances_and_actions`` and ``0801_action_items_due``); their life afterwards (due dates, reminders,
done, snoozed) is :mod:`board.decisions.reminders`'.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ActionRow"]


@dataclass(frozen=True)
class ActionRow:
    """An action item of a recorded decision. ``due_at``: when it is due (UTC text as
    :func:`board.schedule.work.stamp` writes it; None: no date); ``due_text``: the date as
    written; ``channel``/``chat_id``/``thread_id``: where its meeting ran (its reminder goes there)."""

    id: int
    meeting_id: str
    topic: str
    task: str
    owner: str
    status: str
    created_at: str
    done_at: str | None
    due_at: str | None = None
    due_text: str | None = None
    channel: str | None = None
    chat_id: str | None = None
    thread_id: int | None = None
