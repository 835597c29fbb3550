"""What the chat's routes and page need from the channel (so they do not import it)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from bot.channels.web.chat_feed import ChatFeed
from bot.channels.web.history import HistoryMark, SharedLine
from bot.channels.web.store import Outbox, OutboxEntry

__all__ = ["ChannelClosed", "ChatHost", "OpenStreams"]


class ChannelClosed(Exception):
    """The channel is not taking messages (starting or stopping); ``str()`` says to retry."""


class OpenStreams(Protocol):
    """Counts the SSE responses open now."""

    def open(self) -> AbstractContextManager[None]: ...


class ChatHost(Protocol):
    """The web chat channel, as its routes and page use it."""

    @property
    def feed(self) -> ChatFeed: ...

    @property
    def outbox(self) -> Outbox: ...

    @property
    def streams(self) -> OpenStreams: ...

    @property
    def max_chars(self) -> int: ...

    def advisors(self) -> list[str]: ...

    def label(self, role: str) -> str: ...

    async def history(self, advisor: str) -> list[SharedLine]: ...

    async def history_mark(self, advisor: str) -> HistoryMark | None: ...

    async def receive(self, advisor: str, text: str, client_id: str) -> tuple[OutboxEntry, bool]: ...
