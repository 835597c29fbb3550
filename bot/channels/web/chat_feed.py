"""What the web chat's pages follow live: new outbox rows, and the answer being written.

:class:`ChatFeed` keeps, per conversation, the pages connected now (each a :class:`Follower` with a
bounded queue) and the *draft*: the partial text of the answer in progress, held in memory where a
page that connects (or reconnects) mid-answer reads it whole, then follows its deltas. A draft is
keyed by the client id of the question it answers; it ends when the reply to that question is in
the outbox (:meth:`ChatFeed.appended`), so a page sees the answer so far, then the rest, then the
final reply in place of the draft: never the text twice.

A follower that falls behind (its queue full) is dropped: its page reconnects with
``Last-Event-ID`` and reads what it missed from the outbox, so a slow browser never slows an answer.
Everything here runs on the event loop and never awaits: a snapshot taken with :meth:`follow` and
the events queued after it are consistent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.channels.web.store import EntryKind, OutboxEntry
from bot.web.render import markdown

__all__ = ["FOLLOWER_QUEUE", "ChatFeed", "Draft", "FeedEvent", "FeedKind", "Follower"]

#: Events a follower may have waiting before it is dropped (its page reconnects).
FOLLOWER_QUEUE = 2048


class FeedKind(StrEnum):
    """An SSE event's name."""

    ENTRY = "entry"  # an outbox row (the only kind with an SSE id: its seq)
    DRAFT = "draft"  # the whole draft so far (replaces what the page shows for that question)
    DELTA = "delta"  # more text of the draft
    DRAFT_END = "draft_end"  # the draft is gone without a reply row (the turn failed or stopped)
    HISTORY = "history"  # a message of the shared conversation written elsewhere (sent to a page that opens)
    CLOSE = "close"  # not sent: the follower's response ends (the channel is stopping)


@dataclass(frozen=True)
class FeedEvent:
    """One event for the pages of a conversation."""

    kind: FeedKind
    data: dict[str, Any]
    seq: int | None = None  # set on ENTRY events

    @classmethod
    def entry(cls, entry: OutboxEntry) -> FeedEvent:
        """An outbox row; a reply carries its Markdown rendered as safe HTML too (``html``: raw HTML in
        the text is escaped, see :func:`bot.web.render.markdown`; a line break stays a break, as in chat
        apps: a command's reply is lines); the owner's own lines are plain text."""
        data = entry.to_json()
        if entry.kind is not EntryKind.QUESTION:
            data["html"] = str(markdown(entry.body, breaks=True))
        return cls(FeedKind.ENTRY, data, entry.seq)


@dataclass
class Draft:
    """The answer in progress to question ``reply_to``."""

    reply_to: str
    label: str = ""
    text: str = ""
    status: str | None = None  # "looking it up…", "working on it…": shown while there is no text

    def snapshot(self) -> FeedEvent:
        return FeedEvent(FeedKind.DRAFT, {"reply_to": self.reply_to, "label": self.label, "text": self.text,
                                          "status": self.status})


@dataclass(eq=False)
class Follower:
    """One connected page."""

    queue: asyncio.Queue[FeedEvent] = field(default_factory=lambda: asyncio.Queue(FOLLOWER_QUEUE))
    dropped: bool = False


class ChatFeed:
    """See the module docstring."""

    def __init__(self) -> None:
        self._followers: dict[str, set[Follower]] = {}
        self._drafts: dict[str, dict[str, Draft]] = {}  # conversation -> question -> draft
        self.dropped = 0  # followers dropped for falling behind, since the start
        self.closed = False

    @contextlib.contextmanager
    def follow(self, conversation: str) -> Iterator[tuple[Follower, list[Draft]]]:
        """Follow ``conversation`` while the block runs: the follower, and the drafts as they are now
        (copies; later changes come as events)."""
        follower = Follower()
        self._followers.setdefault(conversation, set()).add(follower)
        drafts = [Draft(d.reply_to, d.label, d.text, d.status) for d in self._drafts.get(conversation, {}).values()]
        try:
            yield follower, drafts
        finally:
            followers = self._followers.get(conversation)
            if followers is not None:
                followers.discard(follower)
                if not followers:
                    del self._followers[conversation]

    def followers(self, conversation: str | None = None) -> int:
        """How many pages follow ``conversation`` (all conversations: None)."""
        if conversation is not None:
            return len(self._followers.get(conversation, ()))
        return sum(len(f) for f in self._followers.values())

    def draft(self, conversation: str, reply_to: str) -> Draft | None:
        """The draft of the answer to ``reply_to``, if one is being written."""
        return self._drafts.get(conversation, {}).get(reply_to)

    def drafts(self, conversation: str) -> list[Draft]:
        """The drafts of ``conversation`` being written now."""
        return list(self._drafts.get(conversation, {}).values())

    def _publish(self, conversation: str, event: FeedEvent) -> None:
        for follower in list(self._followers.get(conversation, ())):
            if follower.dropped:
                continue
            try:
                follower.queue.put_nowait(event)
            except asyncio.QueueFull:
                follower.dropped = True  # its handler ends the response; the page reconnects
                self.dropped += 1

    def close(self) -> None:
        """End every follower's response (stopping: the server would wait for open responses)."""
        self.closed = True
        for followers in self._followers.values():
            for follower in followers:
                follower.dropped = True
                with contextlib.suppress(asyncio.QueueFull):
                    follower.queue.put_nowait(FeedEvent(FeedKind.CLOSE, {}))

    # -- the draft -----------------------------------------------------------------------

    def begin(self, conversation: str, reply_to: str, status: str | None = None) -> Draft:
        """A draft for the answer to ``reply_to`` (the one there, when it exists: a restarted turn)."""
        drafts = self._drafts.setdefault(conversation, {})
        draft = drafts.get(reply_to)
        if draft is None:
            draft = drafts[reply_to] = Draft(reply_to, status=status)
            self._publish(conversation, draft.snapshot())
        return draft

    def redraw(self, conversation: str, draft: Draft) -> None:
        """``draft`` changed as a whole (a new speaker, a status, text made void): pages redraw it."""
        if self._drafts.get(conversation, {}).get(draft.reply_to) is draft:
            self._publish(conversation, draft.snapshot())

    def extend(self, conversation: str, draft: Draft, delta: str) -> None:
        """More text of ``draft``."""
        if not delta or self._drafts.get(conversation, {}).get(draft.reply_to) is not draft:
            return
        draft.text += delta
        draft.status = None
        self._publish(conversation, FeedEvent(FeedKind.DELTA, {"reply_to": draft.reply_to, "text": delta}))

    def end(self, conversation: str, reply_to: str) -> None:
        """The draft of ``reply_to`` is gone with no reply row (the turn failed, or is given up)."""
        if self._drafts.get(conversation, {}).pop(reply_to, None) is not None:
            self._publish(conversation, FeedEvent(FeedKind.DRAFT_END, {"reply_to": reply_to}))
            if not self._drafts[conversation]:
                del self._drafts[conversation]

    # -- outbox rows ---------------------------------------------------------------------

    def appended(self, entry: OutboxEntry) -> None:
        """A row is in the outbox: pages show it; a reply ends its question's draft (the row replaces it)."""
        drafts = self._drafts.get(entry.conversation, {})
        if entry.reply_to is not None and entry.kind is not EntryKind.QUESTION:
            drafts.pop(entry.reply_to, None)
            if not drafts:
                self._drafts.pop(entry.conversation, None)
        self._publish(entry.conversation, FeedEvent.entry(entry))
