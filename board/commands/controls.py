"""Steering a running meeting: ``/wrap``, ``/pause``, ``/resume``, ``/extend`` and ``/cancel`` ``[id]``.

Each is stored with :meth:`BoardRoom.control <board.room.convene.BoardRoom.control>` (in the state db, so it
reaches the meeting on whichever replica holds it) and applied by the meeting at its next phase boundary
(:mod:`board.room.meeting.seat`), which then says so where the meeting is shown. ``/cancel`` also ends the
meeting at once when this process holds it.

Which meeting: the one running where the command is written (the chat or topic it was called from, or its
own thread); the owner may name any running meeting by its id (or the start of it). An extension that takes
the meeting's estimate above ``board.meetings.confirm_over_usd`` is not asked for until the owner confirms it
(``/extend <id> confirm``, :mod:`board.room.extension`), as a meeting called above it waits for Start. Who: the
owner; the people ``board.meetings.participants`` names, for a meeting running where they write; and whoever called
the meeting in a private chat, in that chat. Anyone else is told who may.
"""

from __future__ import annotations

from board.commands.host import CommandHandler, CommandHost
from board.envelope import Envelope
from board.room.convene import BoardRoom
from board.room.extension import extension
from board.room.table import ControlKind, seated
from board.routing.router import Route

__all__ = ["ASKED", "CONFIRM", "register"]

#: What each command answers once it is stored (the meeting says again when it applies it).
ASKED = {
    ControlKind.WRAP: "Wrapping up {id}: the round in progress is the last; the chair decides after it.",
    ControlKind.PAUSE: "Pausing {id}: the round in progress finishes, then no new round starts until /resume.",
    ControlKind.RESUME: "Resuming {id}: the next round starts (if it was paused).",
    ControlKind.EXTEND: "Asked {id} for one more round, within board.meetings.max_extra_rounds, its budget and "
                        "its time.",
    ControlKind.CANCEL: "Cancelling {id}: it runs on another replica and stops at its next phase boundary.",
}

#: ``/extend <id> confirm``: the owner's word for an extension above ``board.meetings.confirm_over_usd``
CONFIRM = "confirm"

_WHO = ("the owner, the people board.meetings.participants names, and whoever called the meeting in a private "
        "chat")


async def _running(room: BoardRoom) -> list[str]:
    """Every running meeting, on any replica (the state db's), and this process's."""
    rows = await room.store.db.fetchall("SELECT id FROM meetings WHERE status = 'running' ORDER BY started_at")
    return list(dict.fromkeys([*(str(r["id"]) for r in rows), *room.running()]))


async def _here(room: BoardRoom, envelope: Envelope) -> list[str]:
    """The meetings running where ``envelope`` was written (its place on record, or called from this chat)."""
    found = await room.meeting_at(envelope.channel, envelope.chat_id, envelope.thread_id)
    place = (envelope.channel, envelope.chat_id, envelope.thread_id)  # its topic too: not every meeting of a forum
    local = [m for m in room.running() if room.place_of(m) == place]
    return list(dict.fromkeys([*([found] if found else []), *local]))


async def _may(room: BoardRoom, envelope: Envelope, meeting_id: str) -> bool:
    """Whether ``envelope``'s sender may steer ``meeting_id`` (see the module docstring)."""
    if seated(envelope, room.meeting_settings.participants):
        return True
    row = await room.store.db.fetchone("SELECT channel, chat_id, is_group FROM meetings WHERE id = ?", (meeting_id,))
    return (row is not None and not row["is_group"] and not envelope.is_group
            and (row["channel"], row["chat_id"]) == (envelope.channel, envelope.chat_id))


async def targets(room: BoardRoom, envelope: Envelope, wanted: str) -> list[str] | str:
    """The meetings a control written in ``envelope`` is for, or the line saying why none."""
    here = await _here(room, envelope)
    if not wanted:
        return here or "No meeting is running here."
    pool = await _running(room) if envelope.is_owner else here
    found = [m for m in pool if m.startswith(wanted)]
    if len(found) > 1:
        return f"{wanted!r} matches {len(found)} running meetings ({', '.join(found)}); give more of the id."
    return found or f"No running meeting {wanted!r} that you may steer from here."


def register(host: CommandHost, room: BoardRoom) -> None:
    """Add /wrap, /pause, /resume, /extend and /cancel of ``room`` to ``host``."""

    async def steer(kind: ControlKind, envelope: Envelope, route: Route) -> str:
        words = route.text.split()
        confirm = kind is ControlKind.EXTEND and CONFIRM in words  # the owner's word over confirm_over_usd
        found = await targets(room, envelope, " ".join(w for w in words if not confirm or w != CONFIRM))
        if isinstance(found, str):
            return found
        refused = [m for m in found if not await _may(room, envelope, m)]
        if refused:
            return f"Only {_WHO} can /{kind.value} meeting {', '.join(refused)}."
        if confirm and not envelope.is_owner:
            return "Only the owner can confirm an extension above board.meetings.confirm_over_usd."
        lines = []
        for meeting_id in found:
            if kind is ControlKind.CANCEL and meeting_id in room.running():  # held here: at once
                await room.cancel(meeting_id)
                lines.append(f"Cancelled {meeting_id}; the minutes so far are recorded.")
                continue
            if kind is ControlKind.EXTEND and not confirm and (more := await extension(room, meeting_id)) is not None \
                    and more.needs_owner:  # priced like a start: above the threshold it waits for the owner
                lines.append(more.text())
                continue
            await room.control(meeting_id, kind, by=envelope.sender)
            lines.append(ASKED[kind].format(id=meeting_id))
        return "\n".join(lines)

    def command(kind: ControlKind) -> CommandHandler:
        async def handler(envelope: Envelope, route: Route) -> str:
            return await steer(kind, envelope, route)
        return handler

    host.register_command("wrap", command(ControlKind.WRAP),
                          "/wrap [id]: end the running meeting after this round and go to the decision")
    host.register_command("pause", command(ControlKind.PAUSE), "/pause [id]: no new round until /resume")
    host.register_command("resume", command(ControlKind.RESUME), "/resume [id]: go on with a paused meeting")
    host.register_command("extend", command(ControlKind.EXTEND),
                          "/extend [id] [confirm]: one more round, within the caps (above "
                          "board.meetings.confirm_over_usd it waits for the owner's confirm)")
    host.register_command("cancel", command(ControlKind.CANCEL), "/cancel [id]: stop a running meeting")
