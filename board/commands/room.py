"""Slash commands for meetings: ``/meeting <topic>``, ``/meetings``, ``/actions``, ``/done <n>``, and
``/start_meeting <n>`` / ``/cancel_meeting <n>`` (the owner's) (``/cancel`` and the other controls of a running
meeting: :mod:`board.commands.controls`).

``/actions`` lists the open action items of recorded decisions across meetings, with
owners and age (the owner sees all; anyone else those of meetings started in their
chat); ``/done <n>`` closes one.

``/meeting`` starts the meeting in the background and answers at once; the meeting's
progress events reach the channel that asked (see :class:`room.convene.BoardRoom`). Sent with
a document or a voice note, or right after one in the same conversation, it puts that file on
the agenda as evidence (:mod:`board.room.evidence`) and says so. It says what the meeting is expected
to cost and take (:mod:`board.room.estimate`); above ``board.meetings.confirm_over_usd`` the
meeting does not start: it waits for the owner's Start (:mod:`board.room.pending`), whose
button sends ``/start_meeting <n>`` (Cancel: ``/cancel_meeting <n>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from board.commands.host import CommandHost
from board.decisions.wording import owes
from board.envelope import Envelope
from board.room.convene import BoardRoom, MeetingInProgress
from board.routing.router import Route
from board.workspace.quoting import FieldLimit, plain_line

if TYPE_CHECKING:
    from board.room.meeting import MeetingRun

__all__ = ["convening_text", "register", "waits_text"]


def waits_text(start_id: int, topic: str, summary: str, threshold: float) -> str:
    """What /meeting says of a meeting that waits for the owner's Start."""
    return (f"The board meeting on \u201c{topic}\u201d waits for your Start (request {start_id}): {summary} That is "
            f"above the ${threshold:g} set in board.meetings.confirm_over_usd, so nothing is spent until you press "
            "Start under the estimate that follows (or Cancel); it expires in a day.")


def convening_text(run: MeetingRun, summary: str) -> str:
    """What /meeting says of a meeting it started: who meets, on what evidence, what it is expected to cost."""
    names = ", ".join(f"{p.emoji} {p.name}" for p in run.specialists)
    evidence = ", ".join(plain_line(e.name, FieldLimit.TITLE) for e in run.m.evidence)
    return (f"Convening the board on \u201c{run.topic}\u201d (meeting {run.id}) with {names}"
            + (f", with the evidence: {evidence}" if evidence else "")
            + f". {summary} The decision will follow here; /cancel stops it.")


def _number(text: str) -> int | None:
    word = text.strip().lstrip("#")
    return int(word) if word.isdigit() else None


def register(host: CommandHost, room: BoardRoom) -> None:
    """Add the meeting commands of ``room`` to ``host``."""

    async def meeting(envelope: Envelope, route: Route) -> str:
        topic = route.text.strip()
        if not topic:
            return "Give the meeting a topic: /meeting <what the board should decide>"
        from board.room.pending import StartRequest

        try:
            called = await room.call(StartRequest(topic, envelope=envelope, evidence=await room.evidence(envelope)))
        except MeetingInProgress as exc:
            return str(exc)
        except ValueError as exc:
            return f"Cannot convene the board: {exc}"
        if called.waiting is not None:
            return waits_text(called.waiting.id, topic, called.estimate.summary(),
                              room.meeting_settings.confirm_over_usd)
        assert called.run is not None
        await room.on_record(called.run)  # /meetings, here or on another replica, lists it from now on
        return convening_text(called.run, called.estimate.summary())

    async def meetings(envelope: Envelope, route: Route) -> str:
        # The owner sees every meeting; anyone else only those started where they are asking.
        place = None if envelope.is_owner else (envelope.channel, envelope.chat_id)
        rows = await room.store.list(5, place=place)
        if not rows:
            return "No meetings yet. Start one with /meeting <topic>."
        from board.commands.decisions import verdict_label
        from board.decisions.ratify import verdicts

        states = await verdicts(room.store.db, [row.id for row in rows])  # each decision's: proposed, ratified ...
        lines = ["Recent meetings:"]
        for row in rows:
            state = f", decision {verdict_label(states[row.id])}" if row.id in states else ""
            lines.append(f"{row.id} ({row.stop_reason or row.status}{state}): {row.topic}")
        return "\n".join(lines)

    def place_of(envelope: Envelope) -> tuple[str, str] | None:
        return None if envelope.is_owner else (envelope.channel, envelope.chat_id)

    async def actions(envelope: Envelope, route: Route) -> str:
        from board.room.record import format_actions  # with the command, not with every board

        rows = await room.store.actions(place=place_of(envelope), include_done=route.text.strip().lower() == "all")
        return format_actions(rows)

    async def done(envelope: Envelope, route: Route) -> str:
        word = route.text.strip().lstrip("#")
        if not word.isdigit():
            return "Say which action item is done: /done <n> (the numbers are in /actions)."
        row = await room.store.close_action(int(word), by=envelope.sender, place=place_of(envelope))
        if row is None:
            return f"No open action item #{word} here; /actions lists them."
        return f"Done: #{row.id} {row.task} (owed by {owes(row.owner)}), from {row.meeting_id}."

    host.register_command("meeting", meeting, "/meeting <topic>: convene a board meeting")
    host.register_command("meetings", meetings, "/meetings: recent meetings")
    host.register_command("actions", actions, "/actions [all]: open action items of board decisions")
    host.register_command("done", done, "/done <n>: close action item n")
    _register_starts(host, room)


def _register_starts(host: CommandHost, room: BoardRoom) -> None:
    """``/start_meeting <n>`` and ``/cancel_meeting <n>``: the Start and Cancel buttons under a waiting
    meeting's estimate (owner-only)."""

    async def start_meeting(envelope: Envelope, route: Route) -> str:
        number = _number(route.text)
        if number is None:
            return "Say which meeting request to start: /start_meeting <n> (the number is under its estimate)."
        return await room.press_start(number, by=f"{envelope.channel}:{envelope.sender}")

    async def cancel_meeting(envelope: Envelope, route: Route) -> str:
        number = _number(route.text)
        if number is None or room.gate is None:
            return "Say which meeting request to cancel: /cancel_meeting <n> (the number is under its estimate)."
        return await room.gate.cancel(number, by=f"{envelope.channel}:{envelope.sender}")

    host.register_command("start_meeting", start_meeting,
                          "/start_meeting <n>: start a meeting that waits for your Start (its estimate's button)",
                          owner_only=True)
    host.register_command("cancel_meeting", cancel_meeting, "/cancel_meeting <n>: drop a meeting that waits for Start",
                          owner_only=True)
