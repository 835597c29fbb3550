"""Slash commands for meetings: ``/meeting <topic>``, ``/meetings``, ``/actions`` and ``/done <n>``
(``/cancel`` and the other controls of a running meeting: :mod:`board.commands.controls`).

``/actions`` lists the open action items of recorded decisions across meetings, with
owners and age (the owner sees all; anyone else those of meetings started in their
chat); ``/done <n>`` closes one.

``/meeting`` starts the meeting in the background and answers at once; the meeting's
progress events reach the channel that asked (see :class:`room.convene.BoardRoom`). Sent with
a document or a voice note, or right after one in the same conversation, it puts that file on
the agenda as evidence (:mod:`board.room.evidence`) and says so.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.decisions.wording import owes
from board.envelope import Envelope
from board.room.convene import BoardRoom, MeetingInProgress
from board.routing.router import Route
from board.workspace.quoting import FieldLimit, plain_line

__all__ = ["register"]


def register(host: CommandHost, room: BoardRoom) -> None:
    """Add the meeting commands of ``room`` to ``host``."""

    async def meeting(envelope: Envelope, route: Route) -> str:
        topic = route.text.strip()
        if not topic:
            return "Give the meeting a topic: /meeting <what the board should decide>"
        try:
            run = room.start(topic, envelope=envelope, evidence=await room.evidence(envelope))
        except MeetingInProgress as exc:
            return str(exc)
        except ValueError as exc:
            return f"Cannot convene the board: {exc}"
        await room.on_record(run)  # /meetings, here or on another replica, lists it from now on
        names = ", ".join(f"{p.emoji} {p.name}" for p in run.specialists)
        evidence = ", ".join(plain_line(e.name, FieldLimit.TITLE) for e in run.m.evidence)
        return (f"Convening the board on \u201c{run.topic}\u201d (meeting {run.id}) with {names}"
                + (f", with the evidence: {evidence}" if evidence else "")
                + ". The decision will follow here; /cancel stops it.")

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
