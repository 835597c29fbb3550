"""Who may see what was said in a conversation: its scope. ``direct`` (a direct chat, the web page, the
terminal: private to the person) or ``group:<channel>:<chat id>`` (a group or a forum, whose members read
every answer). What the board learns in a conversation is kept under its scope and seen only there (the
user memory's facts, :mod:`board.memory.facts`)."""

from __future__ import annotations

from board.envelope import Envelope

__all__ = ["DIRECT", "scope_of"]

#: The scope of a direct chat (private to the person).
DIRECT = "direct"


def scope_of(envelope: Envelope | None) -> str:
    """Where a fact heard in ``envelope``'s conversation is kept and seen: :data:`DIRECT`, or its group."""
    if envelope is None or not envelope.is_group:
        return DIRECT
    return f"group:{envelope.channel}:{envelope.chat_id}"
