"""Who may see what: a conversation's audience from its session key, and an asker's from the envelope.

A session key (DESIGN.md) says whose conversation it is: ``main`` and ``board:<role>`` are the owner's direct
chats (audience ``owner``); ``board:<role>:g-<chat>`` and ``board:<role>:wa-g-<group>`` a group's
(``group:<channel>:<chat>``, the same text :func:`board.conversation.scope.scope_of` gives a group turn); any
other key one person's direct chat (``id:<channel>:<sender>`` of the person who wrote there).

An asker in a group sees that group's conversations and the board's record, never a direct chat (not even
their own). An asker in a direct chat sees their own conversations on every linked account (and the owner
also the ``owner`` chats) and the board's record. A stranger (``is_public``) sees only their own
conversation: no meeting, no decision, no knowledge.
"""

from __future__ import annotations

import re

from board.envelope import Envelope
from board.memory.knowledge.index import conversation_scope
from board.recall.passages import OWNER, Asker
from board.storage import Database

__all__ = ["asker_of", "conversation_audience", "group_audience", "identity_audience"]

_SAFE = re.compile(r"[^A-Za-z0-9_.@+-]")
_GROUP_KEY = re.compile(r"^board:[^:]+:(wa-g|g)-(.+)$")


def _safe(part: str) -> str:
    return _SAFE.sub("_", part)[:64]  # as board.conversation.sessions writes a key's chat id


def group_audience(channel: str, chat_id: str) -> str:
    """A group's audience: ``group:<channel>:<chat id as its session key holds it>``."""
    return f"group:{channel}:{_safe(chat_id)}"


def identity_audience(channel: str, sender: str) -> str:
    """One account's direct chats: ``id:<channel>:<sender>``."""
    return f"id:{channel}:{sender}"


def conversation_audience(key: str, channel: str | None, sender: str | None) -> str | None:
    """The audience of session ``key`` whose first user message came by ``channel`` from ``sender``; None when
    it cannot be told yet (a person's chat with no user message: the indexer waits for one)."""
    if key == "main" or (key.startswith("board:") and key.count(":") == 1):
        return OWNER
    group = _GROUP_KEY.match(key)
    if group is not None:
        where = "whatsapp" if group.group(1) == "wa-g" else channel
        return None if where is None else f"group:{where}:{group.group(2)}"
    if channel is None or sender is None:
        return None
    return identity_audience(channel, sender)


async def asker_of(db: Database, envelope: Envelope | None, *, role: str | None = None) -> Asker:
    """What the sender of ``envelope`` may see (None: a turn with no sender, e.g. a meeting's: the board's
    record only)."""
    if envelope is None:
        return Asker(frozenset(), board=True, role=role)
    conversation = conversation_scope(envelope.channel, envelope.chat_id)
    if envelope.is_group:
        return Asker(frozenset({group_audience(envelope.channel, envelope.chat_id)}), board=not envelope.is_public,
                     role=role, conversation=conversation)
    identity = f"{envelope.channel}:{envelope.sender}"
    rows = await db.fetchall(
        "SELECT i.identity FROM people_identities i JOIN people_identities me ON me.person = i.person "
        "WHERE me.identity = ?", (identity,))
    identities = {identity, *(str(r["identity"]) for r in rows)}
    audiences = {identity_audience(*i.split(":", 1)) for i in identities}
    if envelope.is_owner:
        audiences.add(OWNER)
    return Asker(frozenset(audiences), board=not envelope.is_public, role=role, conversation=conversation)
