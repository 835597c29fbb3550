"""The chat command ``/files``: what this conversation has attached, for the owner.

Lists the newest attachments of the chat the command is sent in (``MediaStore.recent``):
when, who sent it, its name and size, and what became of it: read into the turn,
searchable (a long document in the conversation's own knowledge scope) or why it could not
be read. Every conversation is listed from the terminal with ``sabha media list``.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.envelope import Envelope
from board.media.documents import SEARCHABLE_MARK
from board.media.store import MediaStore, StoredAttachment
from board.routing.router import Route
from board.workspace.quoting import FieldLimit, plain_line

__all__ = ["register"]

LIMIT = 20


def _line(row: StoredAttachment) -> str:
    name = plain_line(row.name or row.kind.value, FieldLimit.TITLE)
    size = f", {_size(row.size)}" if row.size else ""
    if row.problem:
        status = f"not read: {plain_line(row.problem, FieldLimit.TEXT)}"
    elif row.derived and SEARCHABLE_MARK in row.derived:
        status = "searchable by the advisors here"
    else:
        status = "read" if row.derived else "kept"
    return f"- {row.created_at[:16].replace('T', ' ')} {name} ({row.kind.value}{size}) from {row.sender}: {status}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.0f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"


def register(host: CommandHost, store: MediaStore) -> None:
    """Add ``/files`` to ``host`` (owner only)."""

    async def files(envelope: Envelope, route: Route) -> str:
        rows = await store.recent(channel=envelope.channel, chat_id=envelope.chat_id, limit=LIMIT)
        if not rows:
            return "Nothing has been attached in this chat yet. Send a document, a picture or a voice note."
        lines = [f"Attached in this chat (newest first, up to {LIMIT}; times in UTC):", *map(_line, rows)]
        lines.append("Every chat: `sabha media list` on the board's machine.")
        return "\n".join(lines)

    host.register_command("files", files, "/files: what this chat has attached (documents, pictures, voice)",
                          owner_only=True)
