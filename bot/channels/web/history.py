"""What the chat shares with the owner's other chats: the conversation's recent history, shown on opening.

The web chat with an advisor is the owner's conversation with that advisor (session ``main`` for the
chair, ``board:<role>`` for the others): the same one as the terminal (``sabha chat``, ``sabha ask``) and
the owner's direct chats on Telegram. What was said there is what the advisor "has in view", so a page
that opens shows it, in time order among the chat's own lines (:mod:`.routes` merges them by time).

:func:`shared_history` reads the newest messages of the key's current session (at most :data:`HISTORY`,
oldest first; a compacted or reset conversation shows what its live session holds) and leaves out what the
chat's own outbox shows already: the owner's messages posted here (channel ``web``) and the answers to
them (the assistant message after such a message). Each :class:`SharedLine` says who spoke and where,
and between which of the chat's own messages it was written (``after`` / ``before``: their client ids, as
the transcript orders them; the transcript's times are whole seconds, too coarse to order by alone).
Reading it never creates a session.

A page that follows reads the history again only when :func:`history_mark` (one row and a file's ``stat``)
says the conversation changed: a quiet conversation costs no transcript read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from board.conversation.sessions import Sessions
from board.conversation.transcripts import TranscriptError
from bot.web.render import markdown

__all__ = ["HISTORY", "LONGEST", "PLACES", "SETTLED", "HistoryMark", "SharedLine", "history_mark", "shared_history"]

#: At most this many messages of the shared conversation are shown on opening.
HISTORY = 50
#: The longest message shown whole (a file read in the terminal is part of its message's text).
LONGEST = 4000
#: Events read from the end of the transcript to find them (tool calls and consultations sit between).
_TAIL = 400
#: Where a message was written, as the owner calls it.
PLACES = {"console": "in the terminal", "telegram": "on Telegram", "whatsapp": "on WhatsApp",
          "slack": "on Slack", "discord": "on Discord", "person": "elsewhere"}
WEB = "web"
#: A conversation last written less than this long ago may be written again within its clock's tick (a file's
#: modification time is a few milliseconds coarse): its mark is not trusted to say "unchanged" yet.
SETTLED = timedelta(seconds=1)


@dataclass(frozen=True)
class HistoryMark:
    """Which session a conversation is and when it was last written: while it is the same, its history is."""

    session_id: str
    last_active: datetime | None


@dataclass(frozen=True)
class SharedLine:
    """One message of the shared conversation, as the page shows it."""

    entry_id: str
    asked: bool  # the owner's message (else an advisor's answer)
    who: str  # "You, in the terminal" / "<emoji> <Name>"
    text: str
    at: str  # ISO-8601 time it was written
    after: str | None = None  # the client id of the chat's own message written last before it
    before: str | None = None  # ... and first after it

    def when(self) -> datetime | None:
        """:attr:`at` as a time (None: unreadable)."""
        try:
            return datetime.fromisoformat(self.at)
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        """The line as the page reads it (an answer's Markdown rendered as safe HTML, line breaks kept)."""
        data: dict[str, Any] = {"id": self.entry_id, "kind": "question" if self.asked else "answer",
                                "label": self.who, "text": self.text, "at": self.at}
        if not self.asked:
            data["html"] = str(markdown(self.text, breaks=True))
        return data


def _place(channel: Any) -> str:
    return PLACES.get(str(channel), f"on {channel}") if channel else "elsewhere"


def _line(entry: dict[str, Any], label: Callable[[str], str], after: str | None,
          before: str | None) -> SharedLine:
    asked = entry.get("role") == "user"
    agent = str(entry.get("agent") or "")
    who = f"You, {_place(entry.get('channel'))}" if asked else (label(agent) if agent else "Sabha")
    text = str(entry.get("text") or "")
    if len(text) > LONGEST:
        text = text[:LONGEST].rstrip() + "…"
    return SharedLine(entry_id=str(entry.get("id") or entry.get("ts") or ""), asked=asked, who=who, text=text,
                      at=str(entry.get("ts") or ""), after=after, before=before)


def _elsewhere(entries: list[dict[str, Any]], label: Callable[[str], str]) -> list[SharedLine]:
    """The messages not written in (nor answering) the web chat, each with the chat's own messages around it."""
    kept: list[tuple[dict[str, Any], str | None]] = []
    here, last = False, None  # whether the owner's last message was written in the web chat; its client id
    posted: list[str | None] = []  # the chat's own message after each kept one (filled below)
    for entry in entries:
        if entry.get("role") == "user":
            here = entry.get("channel") == WEB
            if here:
                last = str(entry.get("message_id") or "") or None
                posted += [last] * (len(kept) - len(posted))
        elif entry.get("role") != "assistant":
            continue
        if not here:
            kept.append((entry, last))
    posted += [None] * (len(kept) - len(posted))
    return [_line(entry, label, after, before) for (entry, after), before in zip(kept, posted, strict=True)]


async def shared_history(sessions: Sessions, key: str, label: Callable[[str], str],
                         limit: int = HISTORY) -> list[SharedLine]:
    """The newest messages (up to ``limit``, oldest first) of ``key``'s live session written outside the web
    chat (see the module docstring); none when ``key`` has no session yet or its transcript is unreadable."""
    ref = await sessions.current(key)
    if ref is None:
        return []
    try:
        tail = await sessions.transcripts.tail(ref.session_id, _TAIL)
    except (TranscriptError, OSError):
        return []
    messages = [e for e in tail if e.get("type") == "message" and str(e.get("text") or "").strip()]
    return _elsewhere(messages, label)[-limit:]


async def history_mark(sessions: Sessions, key: str, now: datetime) -> HistoryMark | None:
    """The mark of ``key``'s conversation now; None when it has no session yet, or was written so lately
    (:data:`SETTLED`) that it may change again within the same tick of its clock (read it again then)."""
    ref = await sessions.current(key)
    if ref is None:
        return None
    try:
        last = await sessions.transcripts.last_active(ref.session_id)
    except (TranscriptError, OSError):
        return None
    if last is None or now - last < SETTLED:
        return None
    return HistoryMark(ref.session_id, last)
