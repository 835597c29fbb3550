"""Board meetings as they happen, printed in the terminal: a line per statement, then the minutes.

``sabha meeting`` prints its own meeting (its stdout a file or a pipe, ``sabha meeting ... > minutes.md``: the
live lines go to stderr and stdout gets only the minutes); :func:`console_meeting_printer` prints the meetings
started from the terminal chat (``/meeting``, or the chair calling one), above the prompt.
On a terminal the lines wrap at word boundaries and the minutes are rendered once, without the
statements already printed (:mod:`bot.cli.screen`); piped, the minutes are the Markdown. The sequence is the
one the meeting's thread shows elsewhere: who is speaking, statements, what people at the table wrote in
(contributions), the controls the meeting applied, a resume after a restart, the decision.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from board.masking import mask
from bot.cli.common import emit
from bot.cli.meeting_seat import SEAT_LINE
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


def console_event_printer(quiet: bool, *, final: bool = False, seat: bool = False,
                          say: Callable[[str], None] = say) -> Callable[[MeetingEvent], Awaitable[None]]:
    """What a meeting's events print in the terminal (``quiet``: only the minutes; ``final``: the chat's
    printer, which prints the minutes too; ``seat``: the owner may type into the meeting, said once at its
    start, :mod:`bot.cli.meeting_seat`); ``say`` prints a live line (:func:`live_to_stderr` when stdout is not
    a terminal)."""
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
        if not quiet:
            _said(event, say)
        if event.kind == "started" and seat:
            say(SEAT_LINE)
    return show


def _said(event: MeetingEvent, say: Callable[[str], None]) -> None:
    """The live line(s) of one event (none for an event the terminal does not show)."""
    label = f"{event.emoji} {event.name}" if event.name else "Sabha"
    if event.kind == "started":
        say(f"== Board meeting {event.meeting_id}: {event.topic}")
        for warning in event.data.get("warnings") or []:
            say(f"   note: {str(warning).replace(ONCE_REMARK, '')}")
    elif event.kind == "framed":
        say(f"{label} (agenda): {event.text}")
    elif event.kind == "speaking":
        say(f"   … {label} is speaking")
    elif event.kind == "agent_spoke":
        model = f" ({event.data['model']})" if event.data.get("models_differ") and event.data.get("model") else ""
        say(f"[round {event.round}] {label}{model}: {event.text}")
    elif event.kind == "contribution":
        say(_contribution_line(event))
    elif event.kind in ("control", "resumed"):
        say(f"== {_table_line(event)}")
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


def _data(event: MeetingEvent, name: str) -> str:
    """``event.data[name]``, else that field of a contribution sent whole (``data["contribution"]``)."""
    value = event.data.get(name)
    whole = event.data.get("contribution")
    if value is None and whole is not None:
        value = whole.get(name) if isinstance(whole, dict) else getattr(whole, name, None)
    return "" if value is None else str(value)


def _contribution_line(event: MeetingEvent) -> str:
    """``🙋 the owner (via web, to finance): ...``: placed where the meeting took it in (before the round that
    hears it)."""
    via = _data(event, "via")
    to = _data(event, "addressed")
    how = ", ".join(x for x in (f"via {via}" if via else "", f"to {to}" if to else "") if x)
    who = (_data(event, "name") or "someone at the table") + (f" ({how})" if how else "")
    return f"🙋 {who}: {_data(event, 'said') or event.text}"


#: How a control the meeting applied reads (``{by}``: who gave it).
_CONTROLS = {"wrap": "{by} asked to wrap up: the meeting ends after this round",
             "pause": "{by} paused the meeting", "resume": "{by} resumed the meeting",
             "extend": "{by} added one more round", "cancel": "{by} cancelled the meeting"}


def _table_line(event: MeetingEvent) -> str:
    """A control the meeting applied, or its resume after a restart."""
    if event.kind == "resumed":
        where = _data(event, "phase")
        return (f"Sabha restarted; the meeting goes on at {where}: nothing already said is asked again" if where
                else event.text or "Sabha restarted; the meeting goes on")
    by = _data(event, "by") or "the owner"
    if event.text:
        return f"{by}: {event.text}"
    words = _CONTROLS.get(_data(event, "control") or _data(event, "kind"))
    return words.format(by=by) if words else f"{by}: control applied"
