"""What a channel has posted of a meeting, kept in the state db so nothing is posted twice after a restart.

A meeting that runs when Sabha stops goes on after the restart (issue 40, "meetings survive a restart") and its
finished phases are not announced again: a channel's meeting view catches up from the meeting's record instead
(:meth:`bot.channels.telegram.meeting.MeetingView`), and needs to know which of the meeting's items it had already
posted. :class:`MeetingPosts` is that record, the table ``meeting_posts`` (migration 1020, kept with Telegram's
tables, shared by the channels), one row per (meeting, channel, chat, item); an item is a key such as ``thread``,
``status``, ``statement:2:finance``, ``pointer:finance``, ``round:2``, ``decision``, ``minutes``.

The marks follow the intake's delivery rule (:class:`bot.intake.delivery.SendProgress`): an item is marked
:attr:`PostMark.SENDING` only as its first request starts to leave (the progress's ``before_first_request``,
taken where the bytes leave: :mod:`bot.channels.telegram.departure`), taken back when the service answers that
it posted nothing (``after_refusal``), and :attr:`PostMark.SENT` once it is confirmed. So after a stop or a
``kill -9`` an item with no row was certainly not posted (post it), a ``sent`` one was (skip it), and a
``sending`` one may have arrived: it is sent once more, headed as possibly repeated (never a third time).

A view records the item :data:`SEEN` as it first hears of a meeting, before anything of it is posted. At a start the
room tells the views the end of each meeting that ended lately once more (:func:`retold`:
:meth:`board.room.convene.BoardRoom.retell_ended`); a view catches up only a meeting its record has (it began showing
it in an earlier life, and a kill cut that short), never one it never heard of (held where it had no view).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from board.conversation.transcripts import utc_now
from board.room.meeting.events import MeetingEvent, MeetingEventKind
from board.room.subscribers import AGAIN
from board.storage import Database
from bot.intake.delivery import SendProgress

__all__ = ["SEEN", "MeetingPosts", "PostMark", "Posted", "retold"]

#: The item a view records as it first hears of a meeting (before anything of it is posted)
SEEN = "seen"


def retold(event: MeetingEvent) -> bool:
    """Whether ``event`` starts a meeting told again at a start (it ended before: ``retell_ended``), not one
    resumed."""
    return event.kind == MeetingEventKind.RESUMED and bool(event.data.get(AGAIN))

_SENDING = ("INSERT INTO meeting_posts(meeting_id, channel, chat_id, item, status, updated_at) "
            "VALUES (?, ?, ?, ?, 'sending', ?) ON CONFLICT(meeting_id, channel, chat_id, item) DO NOTHING")


class PostMark(StrEnum):
    """How far posting an item got."""

    SENDING = "sending"  # its request started to leave; the answer is not known
    SENT = "sent"


@dataclass(frozen=True)
class Posted:
    """One item's row."""

    item: str
    mark: PostMark
    message_id: str | None


class MeetingPosts:
    """The ``meeting_posts`` table for one channel."""

    def __init__(self, db: Database, channel: str) -> None:
        self.db = db
        self.channel = channel

    async def of(self, meeting_id: str, chat_id: str | int) -> dict[str, Posted]:
        """Every item of the meeting marked in ``chat_id``: item -> its row."""
        rows = await self.db.fetchall(
            "SELECT item, status, message_id FROM meeting_posts WHERE meeting_id = ? AND channel = ? AND chat_id = ?",
            (meeting_id, self.channel, str(chat_id)))
        return {r["item"]: Posted(r["item"], PostMark(r["status"]), r["message_id"]) for r in rows}

    async def sending(self, meeting_id: str, chat_id: str | int, item: str) -> None:
        """The item's request starts to leave (a row already ``sent`` stays so). The request waits for this write
        before its first byte leaves, so it is an urgent unit (:meth:`board.storage.Database.unit`): on SQLite one
        step on the express connection, ahead of the units queued there (like the intake's claim), and never behind
        the main connection's statements (a meeting's end: its items dated, its bookkeeping)."""
        await self.db.unit((_SENDING, (meeting_id, self.channel, str(chat_id), item, utc_now())), urgent=True)

    async def unsent(self, meeting_id: str, chat_id: str | int, item: str) -> None:
        """The service answered that nothing of the item was posted: it is untouched again."""
        await self.db.execute(
            "DELETE FROM meeting_posts WHERE meeting_id = ? AND channel = ? AND chat_id = ? AND item = ? "
            "AND status = 'sending'", (meeting_id, self.channel, str(chat_id), item))

    async def sent(self, meeting_id: str, chat_id: str | int, item: str, message_id: str | int | None) -> None:
        """The item is posted (as ``message_id``, its first message)."""
        await self.db.execute(
            "INSERT INTO meeting_posts(meeting_id, channel, chat_id, item, status, message_id, updated_at) "
            "VALUES (?, ?, ?, ?, 'sent', ?, ?) ON CONFLICT(meeting_id, channel, chat_id, item) DO UPDATE SET "
            "status = 'sent', message_id = excluded.message_id, updated_at = excluded.updated_at",
            (meeting_id, self.channel, str(chat_id), item, None if message_id is None else str(message_id),
             utc_now()))

    async def seen(self, meeting_id: str, chat_id: str | int) -> None:
        """The view heard of the meeting (:data:`SEEN`): told it again after a start, it catches it up."""
        await self.sent(meeting_id, chat_id, SEEN, None)

    def progress(self, meeting_id: str, chat_id: str | int, item: str) -> SendProgress:
        """A :class:`SendProgress` whose first request marks the item ``sending`` (and a refusal unmarks it)."""

        def mark(step: Callable[[str, str | int, str], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
            return lambda: step(meeting_id, chat_id, item)

        return SendProgress(before_first_request=mark(self.sending), after_refusal=mark(self.unsent))
