"""What the contract suite needs from a channel under test, and the Telegram harness.

A harness runs one channel on an open board against its fake service (real client
library, real HTTP on 127.0.0.1) and speaks in the channel's own terms: it sends native
messages into a *conversation*, redelivers them the way the service does, restarts the
channel, and reads the replies that reached each conversation. A new channel joins the
suite by adding a harness here and its name to :data:`HARNESSES`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from aiohttp import ClientSession, web

from board.app import Board
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.daemon import channel_parts
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.local_server import serve_locally
from tests.support.fakes.slack_api import FakeSlackAPI, SlackEventPoster, event_callback, message_event
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FORUM, FRIEND, OWNER, STRANGER, TOKEN, tg_settings
from tests.support.web_chat import ChatBrowser, ServedChat, new_id, post_message
from tests.support.whatsapp import BSUID_FRIEND, FAST, post, text_notification, wa_settings
from tests.support.whatsapp import FRIEND as WA_FRIEND
from tests.support.whatsapp import OWNER as WA_OWNER
from tests.support.whatsapp import STRANGER as WA_STRANGER

__all__ = ["HARNESSES", "Harness", "SlackHarness", "TelegramHarness", "WebHarness", "WhatsAppHarness"]


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
        self.channel = TelegramChannel(channel_parts(self.board), tg_settings(self.fake), poll_timeout=1)
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


class WhatsAppHarness:
    """WhatsApp: signed webhooks posted (in order, one at a time, as Meta does per number) to
    the channel's routes on a real aiohttp server; replies read from the fake Graph API.
    Conversations are five users: three by phone number, one known only by a business-scoped id."""

    name = "whatsapp"
    users = (WA_OWNER, WA_FRIEND, BSUID_FRIEND, "15550003333", "15550004444")
    conversations = len(users)

    def __init__(self, board: Board, fake: FakeGraphAPI) -> None:
        self.board = board
        self.fake = fake
        self.channel: WhatsAppChannel | None = None
        self._runner: web.AppRunner | None = None
        self._url = ""
        self._http: ClientSession | None = None
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._poster: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.channel = WhatsAppChannel(channel_parts(self.board),
                                       wa_settings(self.fake, allowed_numbers=list(self.users)), pacing=FAST)
        app = web.Application()
        app.add_routes(self.channel.routes())
        self._runner, port = await serve_locally(app)
        self._url = f"http://127.0.0.1:{port}{self.channel.settings.webhook_path}"
        await self.channel.start()
        self._http = ClientSession()
        self._poster = asyncio.create_task(self._post_all())

    async def _post_all(self) -> None:
        assert self._http is not None
        while True:
            body = await self._queue.get()
            try:
                while True:  # Meta retries until it gets a 200
                    status, _ = await post(self._http, self._url, body)
                    if status == 200:
                        break
                    await asyncio.sleep(0.05)
            finally:
                self._queue.task_done()

    async def stop(self, grace: float = 5.0) -> None:
        if self.channel is None:
            return
        await asyncio.wait_for(self._queue.join(), 10)  # what was sent reached the webhook first
        assert self._poster is not None and self._http is not None and self._runner is not None
        self._poster.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._poster
        await self.channel.stop(grace)
        await self._http.close()
        await self._runner.cleanup()
        self.channel = None

    def send(self, conversation: int, text: str) -> Any:
        body = text_notification(self.users[conversation], text)
        self._queue.put_nowait(body)
        return body

    def send_as_stranger(self, text: str) -> Any:
        body = text_notification(WA_STRANGER, text)
        self._queue.put_nowait(body)
        return body

    async def redeliver(self, message: Any) -> None:
        self._queue.put_nowait(message)
        await asyncio.wait_for(self._queue.join(), 10)

    def replies(self, conversation: int) -> list[str]:
        return self.fake.texts_to(self.users[conversation])

    def all_replies(self) -> list[str]:
        return [s.body for s in self.fake.sent]


@asynccontextmanager
async def whatsapp_harness(board: Board) -> AsyncIterator[Harness]:
    async with FakeGraphAPI() as fake:
        harness = WhatsAppHarness(board, fake)
        try:
            yield harness
        finally:
            await harness.stop()


class WebHarness:
    """The web chat: the page's POSTs (in order, one at a time, as one page sends them) to the channel's
    routes on a real aiohttp server; replies read by a "browser" per conversation following it over
    SSE (:class:`tests.support.web_chat.ChatBrowser`). Conversations are chats with five advisors. A
    post the channel refuses (an oversized message) shows its error where the page shows it: in the
    conversation."""

    name = "web"
    advisors = ("general", "finance", "critic", "research", "strategy")
    conversations = len(advisors)

    def __init__(self, board: Board) -> None:
        self.served = ServedChat(board)
        self._queue: asyncio.Queue[tuple[int | None, str, str]] = asyncio.Queue()
        self._poster: asyncio.Task[None] | None = None
        self._http: ClientSession | None = None
        self._refused: dict[int, list[str]] = {i: [] for i in range(self.conversations)}
        self.browsers = [ChatBrowser(lambda: self.served.url, a) for a in self.advisors]

    async def start(self) -> None:
        await self.served.start()
        self._http = ClientSession()
        self._poster = asyncio.create_task(self._post_all())
        for browser in self.browsers:
            if browser._task is None:
                browser.start()

    async def _post_all(self) -> None:
        assert self._http is not None
        while True:
            conversation, text, client_id = await self._queue.get()
            try:
                advisor = self.advisors[conversation if conversation is not None else 0]
                while True:  # a page sends again what got no answer (a 503 while starting)
                    status, body = await post_message(self._http, self.served.url, advisor, text, client_id,
                                                      owner=conversation is not None)
                    if status != 503:
                        break
                    await asyncio.sleep(0.05)
                if status >= 400 and conversation is not None:
                    self._refused[conversation].append(str(body.get("error")))
            finally:
                self._queue.task_done()

    async def stop(self, grace: float = 5.0) -> None:
        if self._poster is None:
            return
        await asyncio.wait_for(self._queue.join(), 10)
        self._poster.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._poster
        self._poster = None
        assert self._http is not None
        await self._http.close()
        await self.served.stop(grace)

    async def close(self) -> None:
        await self.stop()
        for browser in self.browsers:
            await browser.close()

    def send(self, conversation: int, text: str) -> Any:
        message = (conversation, text, new_id())
        self._queue.put_nowait(message)
        return message

    def send_as_stranger(self, text: str) -> Any:
        message = (None, text, new_id())  # no login cookie: refused before anything is read
        self._queue.put_nowait(message)
        return message

    async def redeliver(self, message: Any) -> None:
        self._queue.put_nowait(message)
        await asyncio.wait_for(self._queue.join(), 10)

    def replies(self, conversation: int) -> list[str]:
        return self.browsers[conversation].replies() + self._refused[conversation]

    def all_replies(self) -> list[str]:
        return [r for i in range(self.conversations) for r in self.replies(i)]


@asynccontextmanager
async def web_harness(board: Board) -> AsyncIterator[Harness]:
    harness = WebHarness(board)
    try:
        yield harness
    finally:
        await harness.close()


class SlackHarness:
    """Slack: signed Events API requests posted (in order, one at a time, retried until acknowledged, as Slack
    retries) to the channel's route on a real aiohttp server; replies read from the fake Web API. Conversations
    are two threads of the board channel, a thread of finance's channel and two DMs with the app (a
    conversation's first message starts its thread, the next ones reply in it)."""

    name = "slack"
    places = (("C0BOARD", "U0OWNER", "channel"), ("C0FINANCE", "U0FRIEND", "channel"),
              ("C0BOARD", "U0FRIEND", "channel"), ("D0OWNER", "U0OWNER", "im"), ("D0FRIEND", "U0FRIEND", "im"))
    conversations = len(places)

    def __init__(self, board: Board, fake: FakeSlackAPI) -> None:
        self.board = board
        self.fake = fake
        self.channel: Any = None
        self._runner: web.AppRunner | None = None
        self._poster: SlackEventPoster | None = None
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._roots: dict[int, str] = {}
        self._ts = 0

    async def start(self) -> None:
        from bot.channels.slack.channel import SlackChannel
        from bot.channels.slack.config import SlackSection
        from tests.support.fakes.slack_api import SIGNING_SECRET

        settings = SlackSection.model_validate({
            "bot_token": self.fake.token, "signing_secret": SIGNING_SECRET, "api_base_url": self.fake.base_url,
            "allowed_user_ids": ["U0OWNER", "U0FRIEND"], "board_channel": "C0BOARD",
            "channels": {"finance": "C0FINANCE"}})
        self.channel = SlackChannel(channel_parts(self.board), settings)
        app = web.Application()
        app.add_routes(self.channel.routes())
        self._runner, port = await serve_locally(app)
        await self.channel.start()
        self._poster = await SlackEventPoster(f"http://127.0.0.1:{port}{settings.events_path}").__aenter__()
        self._task = asyncio.create_task(self._post_all())

    async def _post_all(self) -> None:
        assert self._poster is not None
        while True:
            body = await self._queue.get()
            try:
                tries = 0
                while (await self._poster.post(body, retry=tries or None))[0] != 200:  # Slack retries
                    tries += 1
                    await asyncio.sleep(0.05)
            finally:
                self._queue.task_done()

    async def stop(self, grace: float = 5.0) -> None:
        if self.channel is None:
            return
        await asyncio.wait_for(self._queue.join(), 10)
        assert self._task is not None and self._poster is not None and self._runner is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.channel.stop(grace)
        await self._poster.__aexit__()
        await self._runner.cleanup()
        self.channel = None

    def _next_ts(self) -> str:
        self._ts += 1
        return f"1700000000.{self._ts:06d}"

    def _post(self, channel: str, user: str, kind: str, text: str, thread: str | None) -> dict[str, Any]:
        body = event_callback(message_event(channel, user, text, self._next_ts(), thread_ts=thread,
                                            channel_type=kind))
        self._queue.put_nowait(body)
        return body

    def send(self, conversation: int, text: str) -> Any:
        channel, user, kind = self.places[conversation]
        if kind == "im":
            return self._post(channel, user, kind, text, None)
        root = self._roots.get(conversation)
        body = self._post(channel, user, kind, text, root)
        self._roots.setdefault(conversation, body["event"]["ts"])
        return body

    def send_as_stranger(self, text: str) -> Any:
        return self._post("D0STRANGER", "U0STRANGER", "im", text, None)

    async def redeliver(self, message: Any) -> None:
        self._queue.put_nowait(message)
        await asyncio.wait_for(self._queue.join(), 10)

    def replies(self, conversation: int) -> list[str]:
        channel, _, kind = self.places[conversation]
        thread = None if kind == "im" else self._roots.get(conversation)
        return [m.text for m in self.fake.messages if m.channel == channel and m.thread_ts == thread
                and (kind == "im" or thread is not None)]

    def all_replies(self) -> list[str]:
        return [m.text for m in self.fake.messages]


@asynccontextmanager
async def slack_harness(board: Board) -> AsyncIterator[Harness]:
    async with FakeSlackAPI(users={"U0OWNER": "Asha", "U0FRIEND": "Ravi"}) as fake:
        harness = SlackHarness(board, fake)
        try:
            yield harness
        finally:
            await harness.stop()


HARNESSES: dict[str, Callable[[Board], AbstractAsyncContextManager[Harness]]] = {
    "slack": slack_harness,
    "telegram": telegram_harness,
    "whatsapp": whatsapp_harness,
    "web": web_harness,
}


async def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Wait until ``predicate()`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
