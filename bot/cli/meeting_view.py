"""Board meetings as they happen, printed in the terminal: a line per statement, then the minutes.

``sabha meeting`` prints its own meeting (its stdout a file or a pipe, ``sabha meeting ... > minutes.md``: the
live lines go to stderr and stdout gets only the minutes); :func:`console_meeting_printer` prints the meetings
started from the terminal chat (``/meeting``, or the chair calling one), above the prompt.
On a terminal the lines wrap at word boundaries and the minutes are rendered once, without the
statements already printed (:mod:`bot.cli.screen`); piped, the minutes are the Markdown.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from board.masking import mask
from bot.cli.common import emit
from bot.cli.screen import ONCE_REMARK, button_line, on_terminal, say, terminal_minutes

if TYPE_CHECKING:
    from board.room.meeting import MeetingEvent

__all__ = ["console_event_printer", "console_meeting_printer", "live_to_stderr", "minutes_text"]

def minutes_text(markdown: str, *, after_live: bool) -> str:
    """The minutes as this stdout should get them: rendered on a terminal, Markdown otherwise."""
    return terminal_minutes(markdown, after_live=after_live) if on_terminal() else markdown


def console_meeting_printer() -> Callable[[MeetingEvent], Awaitable[None]]:
    """Print progress of meetings started from the terminal (``/meeting`` in chat, the chair's tool)."""
    printer = console_event_printer(False, final=True)

    async def show(event: MeetingEvent) -> None:
        if event.origin is not None and event.origin.channel == "console" and event.origin.chat_id == "console":
            await printer(event)

    return show


def _proposed(meeting_id: str, *, chat: bool) -> str:
    """The line under a decision: it is proposed, and how to rule on it (in the chat: its buttons as the
    commands they send; in ``sabha meeting``: the ``sabha decisions`` commands)."""
    from board.commands.decisions import decision_buttons

    if chat:
        return f"== Decision {meeting_id} is proposed: {button_line(decision_buttons(meeting_id))}"
    return (f"== Decision {meeting_id} is proposed: sabha decisions ratify {meeting_id} "
            f"(or veto / revisit {meeting_id} \"reason\")")


def live_to_stderr(text: str) -> None:
    """A live line of ``sabha meeting`` whose stdout is a file or a pipe: on stderr, so stdout gets only the minutes."""
    sys.stderr.write(mask(text) + "\n")
    sys.stderr.flush()


def console_event_printer(quiet: bool, *, final: bool = False,
                          say: Callable[[str], None] = say) -> Callable[[MeetingEvent], Awaitable[None]]:
    """What a meeting's events print in the terminal (``quiet``: only the minutes; ``final``: the chat's
    printer, which prints the minutes too); ``say`` prints a live line (:func:`live_to_stderr` when stdout
    is not a terminal)."""
    async def show(event: MeetingEvent) -> None:
        if event.kind == "decision" and not quiet:
            say(_proposed(event.meeting_id, chat=final))
            return
        if final and event.kind == "ended":
            minutes = event.data.get("minutes")
            if minutes:
                emit(minutes_text(minutes, after_live=True))  # rendered to the width already
            else:
                say(f"== Meeting ended: {event.data.get('stop_reason')}")
            return
        if quiet:
            return
        label = f"{event.emoji} {event.name}" if event.name else "Sabha"
        if event.kind == "started":
            say(f"== Board meeting {event.meeting_id}: {event.topic}")
            for warning in event.data.get("warnings") or []:
                say(f"   note: {str(warning).replace(ONCE_REMARK, '')}")
        elif event.kind == "framed":
            say(f"{label} (agenda): {event.text}")
        elif event.kind == "agent_spoke":
            model = f" ({event.data['model']})" if event.data.get("models_differ") and event.data.get("model") else ""
            say(f"[round {event.round}] {label}{model}: {event.text}")
        elif event.kind == "absent":
            say(f"[round {event.round}] {label} is absent: {event.text}")
        elif event.kind in ("disagreement", "consensus"):
            say(f"[round {event.round}] {label} {event.text}")
        elif (event.kind == "round_done" and "unanimous" in event.text) or event.kind == "peer_review":
            say(f"== {event.text}")
        elif event.kind == "objection":
            say(f"[final objection] {label}: {event.text}")
        elif event.kind == "ended":
            say(f"== Meeting ended: {event.data.get('stop_reason')}")
    return show
