"""What the contract suite needs from a channel under test, and the Telegram harness.

A harness runs one channel on an open board against its fake service (real client
library, real HTTP on 127.0.0.1) and speaks in the channel's own terms: it sends native
messages into a *conversation*, redelivers them the way the service does, restarts the
channel, and reads the replies that reached each conversation. A new channel joins the
suite by adding a harness here and its name to :data:`HARNESSES`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from board.service import Board
from bot.channels.telegram.channel import TelegramChannel
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_support import FORUM, FRIEND, OWNER, STRANGER, TOKEN, tg_settings

__all__ = ["HARNESSES", "Harness", "TelegramHarness"]


class Harness(Protocol):
    """One channel under test; see the module docstring."""

    name: str
    conversations: int  # how many distinct conversations :meth:`send` can address

    async def start(self) -> None: ...

    async def stop(self, grace: float = 5.0) -> None: ...

    def send(self, conversation: int, text: str) -> Any:
        """An allowed user writes ``text`` in ``conversation``; returns what :meth:`redeliver` needs."""
        ...

    def send_as_stranger(self, text: str) -> Any:
        """Someone not allowed writes to the board."""
        ...

    async def redeliver(self, message: Any) -> None:
        """The service delivers ``message`` again (at-least-once delivery)."""
        ...

    def replies(self, conversation: int) -> list[str]:
        """Texts that reached ``conversation`` so far."""
        ...

    def all_replies(self) -> list[str]:
        """Every text the channel sent anywhere."""
        ...


class TelegramHarness:
    """Telegram: PTB against the fake Bot API; conversations are two forum topics, the
    forum's General topic and two private chats."""

    name = "telegram"
    conversations = 5

    def __init__(self, board: Board, fake: FakeTelegramAPI) -> None:
        self.board = board
        self.fake = fake
        self.channel: TelegramChannel | None = None
        self._places: list[tuple[int, int | None, int]] = []

    async def start(self) -> None:
        self.channel = TelegramChannel(self.board, tg_settings(self.fake), poll_timeout=1)
        await self.channel.start()
        topics = self.channel.topics
        assert topics is not None
        finance, critic = topics.thread_for("finance"), topics.thread_for("critic")
        self._places = [(FORUM, finance, OWNER), (FORUM, critic, FRIEND), (FORUM, None, OWNER),
                        (OWNER, None, OWNER), (FRIEND, None, FRIEND)]

    async def stop(self, grace: float = 5.0) -> None:
        if self.channel is not None:
            await self.channel.stop(grace)
            self.channel = None

    def _push(self, chat: int, thread: int | None, user: int, text: str) -> dict[str, Any]:
        private = {} if chat < 0 else {"is_forum": False, "chat_type": "private"}
        return self.fake.push_text(chat, user, text, thread_id=thread, **private)  # type: ignore[arg-type]

    def send(self, conversation: int, text: str) -> Any:
        chat, thread, user = self._places[conversation]
        return self._push(chat, thread, user, text)

    def send_as_stranger(self, text: str) -> Any:
        return self._push(STRANGER, None, STRANGER, text)

    async def redeliver(self, message: Any) -> None:
        self.fake.push_update({**message, "update_id": message["update_id"] + 10_000})

    def replies(self, conversation: int) -> list[str]:
        chat, thread, _ = self._places[conversation]
        return [m.text for m in self.fake.sent_messages
                if m.chat_id == chat and (m.message_thread_id or None) == thread]

    def all_replies(self) -> list[str]:
        return [m.text for m in self.fake.sent_messages]


@asynccontextmanager
async def telegram_harness(board: Board) -> AsyncIterator[Harness]:
    async with FakeTelegramAPI(token=TOKEN) as fake:
        harness = TelegramHarness(board, fake)
        try:
            yield harness
        finally:
            await harness.stop()


HARNESSES: dict[str, Callable[[Board], AbstractAsyncContextManager[Harness]]] = {
    "telegram": telegram_harness,
}


async def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 5.0) -> None:  # noqa: ASYNC109
    """Wait until ``predicate()`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
