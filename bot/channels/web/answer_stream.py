"""Streamed answers in the web chat: the turn's deltas become the conversation's draft.

:class:`WebDraft` is the :class:`board.llm.stream.StreamSink` of one web turn (the board hands it
whole words only, checked by the output guardrails: :class:`board.llm.stream.CheckedSink`). Each
piece of text is added to the draft in :class:`bot.channels.web.chat_feed.ChatFeed`, which the pages
of the conversation receive as ``delta`` events; a tool call or a failed attempt makes the text so
far void and shows a status line instead (a ``draft`` event, the whole draft). The draft is a
preview: the reply stored in the outbox replaces it (:meth:`ChatFeed.appended`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from board.envelope import Envelope
from board.llm.stream import PreviewText, StreamSink
from bot.channels.web.chat_feed import ChatFeed, Draft

__all__ = ["LOOKING", "RETRYING", "WORKING", "WebDraft", "streaming"]

LOOKING = "🔎 looking it up…"
RETRYING = "… (the model stumbled; trying again)"
WORKING = "The board is working on it; the answer follows shortly."


class WebDraft(PreviewText):
    """See the module docstring."""

    looking = LOOKING
    retrying = RETRYING

    def __init__(self, feed: ChatFeed, conversation: str, draft: Draft) -> None:
        self.feed, self.conversation, self.draft = feed, conversation, draft

    def on_speaker(self, label: str) -> None:
        if label != self.draft.label:
            self.draft.label = label
            self.feed.redraw(self.conversation, self.draft)

    def on_text(self, delta: str) -> None:
        self.feed.extend(self.conversation, self.draft, delta)

    def on_tool(self, name: str) -> None:
        self._void(self.looking)

    def on_restart(self) -> None:
        self._void(self.retrying)

    def _void(self, status: str | None) -> None:
        self.draft.text, self.draft.status = "", status
        self.feed.redraw(self.conversation, self.draft)


@contextlib.asynccontextmanager
async def streaming(feed: ChatFeed, envelope: Envelope, *, enabled: bool = True) -> AsyncIterator[StreamSink | None]:
    """The sink of the turn answering ``envelope`` (None when streaming is off). A turn that raises
    leaves no draft behind; one that ends normally leaves it until its reply is stored."""
    if not enabled or envelope.message_id is None:
        yield None
        return
    draft = feed.begin(envelope.chat_id, envelope.message_id)
    draft.text, draft.status = "", None  # a turn taken up again after a restart writes anew
    feed.redraw(envelope.chat_id, draft)
    try:
        yield WebDraft(feed, envelope.chat_id, draft)
    except BaseException:
        feed.end(envelope.chat_id, envelope.message_id)
        raise
