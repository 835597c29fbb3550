"""Board meetings as they happen, printed in the terminal: a line per statement, then the minutes.

``sabha meeting`` prints its own meeting; :func:`console_meeting_printer` prints the meetings
started from the terminal chat (``/meeting``, or the chair calling one), above the prompt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.cli.common import emit

if TYPE_CHECKING:
    from board.room.meeting import MeetingEvent

__all__ = ["console_event_printer", "console_meeting_printer"]


def console_meeting_printer() -> Callable[[MeetingEvent], Awaitable[None]]:
    """Print progress of meetings started from the terminal (``/meeting`` in chat, the chair's tool)."""
    printer = console_event_printer(False, final=True)

    async def show(event: MeetingEvent) -> None:
        if event.origin is not None and event.origin.channel == "console" and event.origin.chat_id == "console":
            await printer(event)

    return show


def console_event_printer(quiet: bool, *, final: bool = False) -> Callable[[MeetingEvent], Awaitable[None]]:
    async def show(event: MeetingEvent) -> None:
        if final and event.kind == "ended":
            emit(event.data.get("minutes") or f"== Meeting ended: {event.data.get('stop_reason')}")
            return
        if quiet:
            return
        label = f"{event.emoji} {event.name}" if event.name else "Sabha"
        if event.kind == "started":
            emit(f"== Board meeting {event.meeting_id}: {event.topic}")
            for warning in event.data.get("warnings") or []:
                emit(f"   note: {warning}")
        elif event.kind == "framed":
            emit(f"{label} (agenda): {event.text}")
        elif event.kind == "agent_spoke":
            model = f" ({event.data['model']})" if event.data.get("models_differ") and event.data.get("model") else ""
            emit(f"[round {event.round}] {label}{model}: {event.text}")
        elif event.kind == "absent":
            emit(f"[round {event.round}] {label} is absent: {event.text}")
        elif event.kind in ("disagreement", "consensus"):
            emit(f"[round {event.round}] {label} {event.text}")
        elif (event.kind == "round_done" and "unanimous" in event.text) or event.kind == "peer_review":
            emit(f"== {event.text}")
        elif event.kind == "objection":
            emit(f"[final objection] {label}: {event.text}")
        elif event.kind == "ended":
            emit(f"== Meeting ended: {event.data.get('stop_reason')}")
    return show
