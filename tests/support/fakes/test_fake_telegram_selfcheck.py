"""Self-check of the fake Telegram Bot API: the real python-telegram-bot v22 runs against it.

These tests pin down the fake's behaviour that other tests rely on (and, through it, the
PTB behaviour recorded in notes/telegram.md). No test leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import time
import warnings
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import ClientSession, web
from telegram import Message, MessageEntity, Update
from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from .telegram_api import FakeTelegramAPI

pytestmark = pytest.mark.asyncio  # redundant under asyncio_mode=auto; keeps strict mode working

TOKEN = "123:ABC"
FORUM = -1001234567890
OWNER = 42


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeTelegramAPI]:
    async with FakeTelegramAPI() as server:
        yield server


def build_app(fake: FakeTelegramAPI, concurrent: bool = False) -> Application:
    builder = ApplicationBuilder().token(TOKEN).base_url(fake.base_url)
    if concurrent:
        builder = builder.concurrent_updates(True)
    return builder.build()


@contextlib.asynccontextmanager
async def polling(app: Application) -> AsyncIterator[Application]:
    """The manual lifecycle the daemon uses (not run_polling)."""
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0, timeout=1)
    try:
        yield app
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


def retry_after_seconds(exc: RetryAfter) -> float:
    """RetryAfter.retry_after is int (deprecated, warns) or timedelta (PTB_TIMEDELTA=1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


async def test_pushed_updates_reach_handlers_and_replies_stay_in_the_topic(
    fake: FakeTelegramAPI,
) -> None:
    app = build_app(fake)
    seen: list[Message] = []

    async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(update.effective_message)
        await update.effective_message.reply_text(f"echo {update.effective_message.text}")

    async def on_reset(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(update.effective_message)

    app.add_handler(CommandHandler("reset", on_reset))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, on_text))
    topic = fake.add_topic(FORUM, "Research")

    async with polling(app):
        fake.push_text(FORUM, OWNER, "in a topic", thread_id=topic)
        fake.push_text(FORUM, OWNER, "in General")
        fake.push_text(OWNER, OWNER, "/reset")
        await fake.wait_for_messages(2)
        general_id = fake.sent_messages[1].message_id
        fake.push_text(FORUM, OWNER, "reply in General", reply_to_message_id=general_id)
        await fake.wait_for_messages(3)
        await fake.wait_for_call("getUpdates", 2)  # the next poll confirms the batch

    in_topic, in_general, command, general_reply = seen
    assert in_topic.is_topic_message is True
    assert in_topic.message_thread_id == topic
    assert in_topic.reply_to_message is not None  # Telegram's implicit topic-root reply
    assert in_topic.reply_to_message.forum_topic_created is not None
    assert not in_general.is_topic_message
    assert in_general.message_thread_id is None
    assert command.chat.type == "private" and command.text == "/reset"

    # A reply in General has a message_thread_id but is not a topic message; PTB's
    # reply_text() then correctly sends no message_thread_id.
    assert general_reply.message_thread_id == in_general.message_id  # the chain's root
    assert not general_reply.is_topic_message
    assert fake.sent_messages[2].message_thread_id is None
    assert "is_topic_message" not in fake.sent_messages[2].result

    assert fake.sent_to(FORUM, topic) == [fake.sent_messages[0]]
    to_topic, to_general, _ = fake.sent_messages
    assert (to_topic.chat_id, to_topic.message_thread_id) == (FORUM, topic)
    assert to_topic.text == "echo in a topic"
    assert to_general.message_thread_id is None
    # reply_text quotes by default outside private chats
    assert to_general.reply_parameters == {"message_id": in_general.message_id}
    assert fake.pending_updates == []  # Updater.stop() confirms the offset


async def test_send_message_with_thread_and_entities_is_recorded(fake: FakeTelegramAPI) -> None:
    async with build_app(fake) as app:
        topic = await app.bot.create_forum_topic(FORUM, "Finance")
        sent = await app.bot.send_message(
            FORUM,
            "hi 👋 bold",
            message_thread_id=topic.message_thread_id,
            entities=[MessageEntity(MessageEntity.BOLD, offset=6, length=4)],
        )

    assert sent.message_thread_id == topic.message_thread_id
    assert sent.is_topic_message is True
    assert sent.from_user is not None and sent.from_user.id == fake.bot_id
    [record] = fake.sent_messages
    assert record.chat_id == FORUM
    assert record.message_thread_id == topic.message_thread_id
    assert record.text == "hi 👋 bold"
    assert record.entities == [{"type": "bold", "offset": 6, "length": 4}]
    assert record.parse_mode is None
    assert record.message_id == sent.message_id
    method, params = fake.calls[-1]
    assert method == "sendMessage" and params["message_thread_id"] == topic.message_thread_id


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_429_becomes_retry_after(fake: FakeTelegramAPI) -> None:
    fake.fail_next("sendMessage", status=429, retry_after=7)
    async with build_app(fake) as app:
        with pytest.raises(RetryAfter) as caught:
            await app.bot.send_message(FORUM, "too fast")
        assert retry_after_seconds(caught.value) == 7
        again = await app.bot.send_message(FORUM, "later")  # the failure was one-shot
    assert again.text == "later"
    assert [m.text for m in fake.sent_messages] == ["later"]
    assert len(fake.calls_to("sendMessage")) == 2


async def test_drop_next_posts_the_message_but_the_client_sees_a_network_error(fake: FakeTelegramAPI) -> None:
    fake.drop_next("sendMessage")
    async with build_app(fake) as app:
        with pytest.raises(NetworkError, match="RemoteProtocolError") as caught:
            await app.bot.send_message(OWNER, "lost answer")
        assert type(caught.value) is NetworkError and caught.value.__cause__ is not None
        await app.bot.send_message(OWNER, "next")  # one-shot
    assert [m.text for m in fake.sent_messages] == ["lost answer", "next"]


async def test_create_forum_topic_returns_incrementing_thread_ids(fake: FakeTelegramAPI) -> None:
    fake.set_chat(-100777, title="Plain group", is_forum=False)
    async with build_app(fake) as app:
        first = await app.bot.create_forum_topic(FORUM, "Research")
        second = await app.bot.create_forum_topic(FORUM, "Critic")
        chat = await app.bot.get_chat(FORUM)
        plain = await app.bot.get_chat(-100777)
        with pytest.raises(BadRequest, match="not a forum"):
            await app.bot.create_forum_topic(-100777, "Nope")
        fake.deny_topic_creation()
        with pytest.raises(BadRequest, match="Not enough rights to create a topic"):
            await app.bot.create_forum_topic(FORUM, "Denied")

    assert second.message_thread_id > first.message_thread_id
    assert (first.name, second.name) == ("Research", "Critic")
    assert [t["name"] for t in fake.created_topics] == ["Research", "Critic"]
    assert chat.is_forum is True
    assert not plain.is_forum


async def test_bad_requests_look_like_telegrams(fake: FakeTelegramAPI) -> None:
    fake.fail_next_parse_error("sendMessage", "can't find end of the entity at byte offset 3")
    async with build_app(fake) as app:
        with pytest.raises(BadRequest) as caught:
            await app.bot.send_message(FORUM, "*oops", parse_mode="MarkdownV2")
        # PTB strips "Bad Request: " and capitalises the first letter
        assert caught.value.message.startswith("Can't parse entities: ")
        with pytest.raises(BadRequest, match="Message is too long"):
            await app.bot.send_message(FORUM, "x" * 4097)
        with pytest.raises(BadRequest, match="Message thread not found"):
            await app.bot.send_message(FORUM, "General is not thread 1", message_thread_id=1)
        sent = await app.bot.send_message(FORUM, "same")
        with pytest.raises(BadRequest, match="Message is not modified"):
            await app.bot.edit_message_text("same", chat_id=FORUM, message_id=sent.message_id)
        edited = await app.bot.edit_message_text("new", chat_id=FORUM, message_id=sent.message_id)
    assert isinstance(edited, Message) and edited.text == "new"
    assert [m.text for m in fake.edited_messages] == ["new"]


async def test_wrong_token_is_invalid_token() -> None:
    async with FakeTelegramAPI(token="999:REAL") as fake:
        app = build_app(fake)
        try:
            with pytest.raises(InvalidToken):
                await app.initialize()
        finally:
            # Application.shutdown() is a no-op after a failed initialize(); without this
            # the bot's HTTP connection pool leaks a socket.
            await app.bot.shutdown()


async def test_get_updates_offsets_long_poll_and_body_formats(fake: FakeTelegramAPI) -> None:
    url = f"{fake.base_url}{TOKEN}"
    first = fake.push_text(FORUM, OWNER, "one")
    second = fake.push_text(FORUM, OWNER, "two")
    async with ClientSession() as http:
        async with http.post(f"{url}/getUpdates", data={"timeout": "0"}) as resp:  # form
            body = await resp.json()
        assert body["ok"] is True
        ids = [u["update_id"] for u in body["result"]]
        assert ids == [first["update_id"], second["update_id"]]

        # Confirming with offset drops them; an empty long poll is capped at ~1 s.
        started = time.monotonic()
        async with http.post(
            f"{url}/getUpdates", json={"offset": second["update_id"] + 1, "timeout": 30}
        ) as resp:
            assert (await resp.json())["result"] == []
        assert 0.8 < time.monotonic() - started < 2.5
        assert fake.pending_updates == []

        # A waiting poll returns as soon as an update is pushed.
        async def push_soon() -> None:
            await asyncio.sleep(0.1)
            fake.push_text(FORUM, OWNER, "three")

        pusher = asyncio.create_task(push_soon())
        started = time.monotonic()
        async with http.get(f"{url}/getUpdates?timeout=1") as resp:  # query string
            result = (await resp.json())["result"]
        await pusher
        assert [u["message"]["text"] for u in result] == ["three"]
        assert time.monotonic() - started < 0.9

        async with http.post(f"{url}/someFutureMethod", json={"x": [1, 2]}) as resp:
            assert await resp.json() == {"ok": True, "result": True}
    assert fake.calls[-1] == ("someFutureMethod", {"x": [1, 2]})


async def test_webhook_style_feeding_and_stop_waits_for_non_blocking_handlers(
    fake: FakeTelegramAPI,
) -> None:
    app = build_app(fake, concurrent=True)
    active = 0
    peak = 0

    async def slow(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.2)
        active -= 1
        assert update.effective_chat is not None
        await context.bot.send_message(update.effective_chat.id, "done")

    app.add_handler(MessageHandler(filters.TEXT, slow, block=False))
    await app.initialize()
    await app.start()  # no updater: updates are fed by hand, as from a webhook route
    try:
        for text in ("a", "b"):
            data = fake.build_text_update(FORUM, OWNER, text, update_id=len(text) + 1000)
            await app.update_queue.put(Update.de_json(data, app.bot))
        direct = fake.build_text_update(FORUM, OWNER, "c")
        await app.process_update(Update.de_json(direct, app.bot))
        await asyncio.sleep(0.05)  # let the queue fetcher hand "a" and "b" to handlers
        assert fake.sent_messages == []  # all three handlers are still sleeping
    finally:
        await app.stop()  # must wait for the block=False handler tasks
        await app.shutdown()
    assert [m.text for m in fake.sent_messages] == ["done"] * 3
    assert peak == 3


async def test_deliver_webhook_posts_json_with_the_secret_header(fake: FakeTelegramAPI) -> None:
    app = build_app(fake)
    got: list[str] = []

    async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None and update.effective_message.text
        got.append(update.effective_message.text)

    app.add_handler(MessageHandler(filters.TEXT, on_text))

    async def webhook(request: web.Request) -> web.Response:
        if request.headers.get("X-Telegram-Bot-Api-Secret-Token") != "s3cret":
            return web.Response(status=403)
        await app.process_update(Update.de_json(await request.json(), app.bot))
        return web.Response(text="ok")

    server = web.Application()
    server.router.add_post("/telegram", webhook)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with app:
            update = fake.build_text_update(FORUM, OWNER, "via webhook")
            url = f"http://127.0.0.1:{port}/telegram"
            assert await fake.deliver_webhook(url, update, secret_token="s3cret") == (200, "ok")
            assert (await fake.deliver_webhook(url, update))[0] == 403
    finally:
        await runner.cleanup()
    assert got == ["via webhook"]
