"""A message written where a meeting runs: a contribution to it, when its sender sits at the table.

While a meeting runs, its places (the chat or topic it was called from, the thread a channel opened for
it: :meth:`MeetingTable.meeting_at <board.room.table.MeetingTable.meeting_at>`) are its table. A
plain message there (not a command, no attachment) from the owner, or from someone
``board.meetings.participants`` names (:func:`board.room.table.seated`), is stored as a contribution
(:meth:`BoardRoom.contribute <board.room.convene.BoardRoom.contribute>`; the message itself is already
durable in the inbox) and answered with one line, no model call: the meeting quotes it to every member in
its next round (:mod:`board.room.meeting.seat`). Anyone else's message there is answered as it would be
anywhere (their own access rules); commands (``/wrap``, ``/cancel`` ...) stay commands.
"""

from __future__ import annotations

import logging
from typing import Protocol

from board.envelope import Envelope
from board.room.settings import MeetingSettings
from board.room.table import Contribution, seated
from board.workspace.quoting import plain_line

__all__ = ["OWNER_NAME", "MeetingSeats", "contribute", "contribution_note", "sender_label"]

log = logging.getLogger("sabha.board")

OWNER_NAME = "the owner"  # how the members are told the owner wrote something
_NAME_CHARS = 40  # of a participant's display name: with " (participant)" it stays within a quoted name's cap


class MeetingSeats(Protocol):
    """What the front door asks of the board room (:class:`board.room.convene.BoardRoom`)."""

    @property
    def meeting_settings(self) -> MeetingSettings:
        """The board's meeting settings (``participants``)."""
        ...

    async def meeting_at(self, channel: str, chat_id: str, thread_id: int | str | None) -> str | None:
        """The running meeting shown in this place, or None."""
        ...

    async def contribute(self, meeting_id: str, *, sender: str, name: str, text: str, via: str,
                         message_id: str | None = None, thread_id: str | None = None) -> Contribution:
        """Store a contribution and wake the meeting."""
        ...

    def running(self) -> list[str]:
        """Ids of the meetings this process holds."""
        ...


def sender_label(envelope: Envelope) -> str:
    """How the members are told who wrote it: "the owner", or a participant's display name (or id) marked
    "(participant)", so that no name a person picks (one says "the owner") reads as the owner; a name that is
    nothing once made one plain line (invisible characters only) is their id."""
    if envelope.is_owner:
        return OWNER_NAME
    name = plain_line(envelope.sender_name or "", _NAME_CHARS).strip()
    return f"{name or f'{envelope.channel} user {envelope.sender}'} (participant)"


def contribution_note(contribution: Contribution, *, held_here: bool) -> str:
    """The one line that answers a contribution (``held_here``: this process holds the meeting, so the
    round running now is known)."""
    if held_here:
        return f"Noted for round {contribution.round + 1}: the board will hear it."
    return "Noted: the board will hear it in its next round."


async def contribute(envelope: Envelope, seats: MeetingSeats) -> str | None:
    """The line that answers ``envelope`` as a contribution to the meeting running where it was written,
    or None when it is not one (no meeting here, an attachment, the sender not at the table)."""
    if envelope.attachments or not envelope.text.strip():
        return None
    meeting_id = await seats.meeting_at(envelope.channel, envelope.chat_id, envelope.thread_id)
    if meeting_id is None:
        return None
    if not seated(envelope, seats.meeting_settings.participants):
        log.info("meeting %s: a message from %s on %s in its place is not a contribution (not at the table)",
                 meeting_id, envelope.sender, envelope.channel)
        return None
    stored = await seats.contribute(meeting_id, sender=envelope.sender, name=sender_label(envelope),
                                    text=envelope.text.strip(), via=envelope.channel, message_id=envelope.message_id,
                                    thread_id=None if envelope.thread_id is None else str(envelope.thread_id))
    log.info("meeting %s: contribution %d from %s via %s", meeting_id, stored.id, envelope.sender, envelope.channel)
    return contribution_note(stored, held_here=meeting_id in seats.running())
