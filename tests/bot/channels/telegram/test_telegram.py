"""End to end: the real python-telegram-bot stack against the fake Bot API on 127.0.0.1,
the real board (offline or a scripted model in its place).

Covers topic creation, topic / General / DM routing, access control, dedupe, formatting
fallbacks, flood control, ordering and concurrency, webhook mode and the command menu.
"""

from __future__ import annotations

import asyncio
import logging
import socket

import httpx
import pytest
from aiohttp import web
from telegram import Bot
from telegram.error import NetworkError, RetryAfter, TelegramError, TimedOut

from board.app import Board
from bot.channels.telegram.channel import (
    COMMANDS,
    NOT_AUTHORISED,
    TEXT_ONLY,
    TelegramChannel,
)
from bot.channels.telegram.outbound import (
    DeliveryUnknown,
    Outbound,
    SendFailed,
    Target,
    proves_not_sent,
)
from bot.channels.telegram.ratelimit import FloodControl, RateSettings
from bot.daemon import channel_parts
from tests.support.fakes.telegram_api import FakeTelegramAPI, utf16_len
from tests.support.telegram import (
    FORUM,
    FRIEND,
    OWNER,
    SPECIALISTS,
    STRANGER,
    TOKEN,
    GatedModel,
    RecordingModel,
    VirtualClock,
    running,
    tg_settings,
    use_model,
)

LABELS = {"general": "🧭 General", "research": "🔬 Research", "content": "📣 Content", "finance": "💰 Finance",
          "strategy": "♟️ Strategy", "critic": "🦉 Critic"}


async def session_keys(board: Board) -> set[str]:
    return {ref.key for ref in await board.parts.sessions.list()}


# -- topics --------------------------------------------------------------------------


@pytest.mark.backends
async def test_topics_are_created_once_across_two_starts(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        first = {e.role: e.thread_id for e in channel.topics.entries.values()}  # type: ignore[union-attr]
    names = sorted(t["name"] for t in fake.created_topics)
    assert names == sorted(LABELS[r] for r in SPECIALISTS)
    assert set(first) == set(SPECIALISTS)  # general lives in General: no topic of its own

    fake.clear_records()
    async with running(board, tg_settings(fake)) as channel:
        second = {e.role: e.thread_id for e in channel.topics.entries.values()}  # type: ignore[union-attr]
    assert fake.calls_to("createForumTopic") == []
    assert second == first


@pytest.mark.backends
async def test_topic_ids_from_config_win(board: Board, fake: FakeTelegramAPI) -> None:
    finance = fake.add_topic(FORUM, "Money")
    async with running(board, tg_settings(fake, topics={"finance": finance})) as channel:
        assert channel.topics is not None
        assert channel.topics.thread_for("finance") == finance
        assert channel.topics.entries["finance"].source == "config"
    assert "💰 Finance" not in [t["name"] for t in fake.created_topics]
    assert len(fake.created_topics) == len(SPECIALISTS) - 1


async def test_not_a_forum_is_reported_and_dms_keep_working(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.set_chat(FORUM, is_forum=False)
    caplog.set_level(logging.ERROR, "sabha.telegram")
    async with running(board, tg_settings(fake)) as channel:
        fake.push_text(OWNER, OWNER, "still there?")
        [sent] = await fake.wait_for_messages(1)
        assert channel.topics is not None and channel.topics.problem
        assert "not a forum" in channel.topics.problem and "Topics" in channel.topics.problem
        assert any("not a forum" in line for line in channel.status_lines())
    assert sent.chat_id == OWNER and sent.text.startswith(LABELS["general"])
    assert fake.calls_to("createForumTopic") == []
    assert "is not a forum" in caplog.text


async def test_missing_manage_topics_right_is_reported(board: Board, fake: FakeTelegramAPI) -> None:
    fake.deny_topic_creation()
    async with running(board, tg_settings(fake)) as channel:
        fake.push_text(FORUM, OWNER, "anyone?")
        [sent] = await fake.wait_for_messages(1)
        assert channel.topics is not None and "Manage topics" in (channel.topics.problem or "")
        assert channel.topics.entries == {}
    assert sent.message_thread_id is None and sent.text.startswith(LABELS["general"])
    assert len(fake.calls_to("createForumTopic")) == 1  # stops at the first refusal


# -- routing -------------------------------------------------------------------------


@pytest.mark.backends
async def test_each_role_topic_is_answered_by_that_role_in_that_topic(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        assert channel.topics is not None
        threads = {role: channel.topics.thread_for(role) for role in SPECIALISTS}
        for role, thread in threads.items():
            fake.push_text(FORUM, OWNER, f"question for the {role} topic", thread_id=thread)
        sent = await fake.wait_for_messages(len(SPECIALISTS))
    by_thread = {m.message_thread_id: m for m in sent}
    for role, thread in threads.items():
        message = by_thread[thread]
        assert message.chat_id == FORUM
        assert message.text.startswith(LABELS[role] + "\n"), message.text
        assert message.entities and message.entities[0] == {"type": "bold", "offset": 0,
                                                            "length": utf16_len(LABELS[role])}
        assert message.result["is_topic_message"] is True
    assert {f"board:{r}:g-{FORUM}" for r in SPECIALISTS} <= await session_keys(board)


async def test_general_goes_to_the_chair_without_a_thread_id(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)):
        fake.push_text(FORUM, OWNER, "hello board")
        [first] = await fake.wait_for_messages(1)
        # a reply in General carries the chain's root as message_thread_id, without is_topic_message
        fake.push_text(FORUM, OWNER, "and a follow-up", reply_to_message_id=first.message_id)
        sent = await fake.wait_for_messages(2)
    for message in sent:
        assert message.message_thread_id is None
        assert "message_thread_id" not in message.params
        assert message.text.startswith(LABELS["general"])
    assert f"board:general:g-{FORUM}" in await session_keys(board)


async def test_unmapped_topic_goes_to_general_in_that_topic(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)):
        other = fake.add_topic(FORUM, "Random")
        fake.push_text(FORUM, OWNER, "off-topic chat", thread_id=other)
        [sent] = await fake.wait_for_messages(1)
    assert sent.message_thread_id == other
    assert sent.text.startswith(LABELS["general"])


async def test_explicit_address_in_a_topic_answers_in_that_topic(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "@critic is this runway plan sane?", thread_id=thread)
        [sent] = await fake.wait_for_messages(1)
    assert sent.message_thread_id == thread
    assert sent.text.startswith(LABELS["critic"])


@pytest.mark.parametrize(
    ("user", "text", "role", "key"),
    [
        (OWNER, "@finance what is our runway?", "finance", "board:finance"),
        (OWNER, "/ask critic poke holes in the plan", "critic", "board:critic"),
        (OWNER, "strategy: where do we play?", "strategy", "board:strategy"),
        (OWNER, "just thinking out loud", "general", "main"),
        (OWNER, "What does the critic think about pricing?", "critic", "board:critic"),  # issue 25: plain words
        (OWNER, "Our research shows users churn after a week.", "general", "main"),
        (FRIEND, "@finance what is our runway?", "finance", f"board:finance:tg-{FRIEND}"),
        (FRIEND, "hello", "general", f"board:general:tg-{FRIEND}"),
    ],
)
async def test_dm_addressing(board: Board, fake: FakeTelegramAPI, user: int, text: str, role: str, key: str) -> None:
    async with running(board, tg_settings(fake)):
        fake.push_text(user, user, text)
        [sent] = await fake.wait_for_messages(1)
    assert sent.chat_id == user and sent.message_thread_id is None
    assert sent.text.startswith(LABELS[role])
    assert sent.reply_parameters is None  # no quoting in private chats
    assert key in await session_keys(board)


# -- access --------------------------------------------------------------------------


async def test_unauthorised_users_cause_no_model_call(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    model = use_model(board, RecordingModel())
    caplog.set_level(logging.WARNING, "sabha.telegram")
    async with running(board, tg_settings(fake, allowed_chat_ids=[])) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        fake.push_text(STRANGER, STRANGER, "let me in")
        fake.push_text(STRANGER, STRANGER, "please?")
        fake.push_text(FORUM, STRANGER, "hi from the group", thread_id=thread)
        fake.push_text(-100999, OWNER, "an allowed user in a group the board does not serve")
        [told] = await fake.wait_for_messages(1)
        fake.push_text(OWNER, OWNER, "sentinel")  # processed after the others in its own lane
        await fake.wait_for_messages(2)
        await asyncio.sleep(0.05)
        assert channel.gate.denied_count == 4
    assert [last for last in (c.messages[-1].content for c in model.calls)] == ["sentinel"]
    assert told.chat_id == STRANGER
    assert told.text == NOT_AUTHORISED.format(user_id=STRANGER)  # said once, not per message
    assert len(fake.sent_to(STRANGER)) == 1
    assert fake.sent_to(FORUM) == [] and fake.sent_to(-100999) == []
    assert caplog.text.count(f"user id {STRANGER}") == 1  # the denied id is logged once
    assert "group -100999" in caplog.text


async def test_empty_allow_list_denies_everyone(board: Board, fake: FakeTelegramAPI) -> None:
    model = use_model(board, RecordingModel())
    async with running(board, tg_settings(fake, allowed_user_ids=[], reply_unauthorised=False)) as channel:
        fake.push_text(OWNER, OWNER, "it's me")
        for _ in range(100):
            if channel.gate.denied_count:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert channel.gate.denied_count == 1
    assert model.calls == [] and fake.sent_messages == []


async def test_service_messages_get_no_reply(board: Board, fake: FakeTelegramAPI) -> None:
    """Pins, joins and topics created by people are not questions: no "text only" reply in the forum."""

    def service(kind: str, payload: object, thread: int | None = None) -> dict:
        update = fake.build_text_update(FORUM, OWNER, "x", thread_id=thread)
        message = update["message"]
        del message["text"]
        message.pop("entities", None)
        message[kind] = payload
        return update

    async with running(board, tg_settings(fake)):
        fake.push_update(service("pinned_message", {"message_id": 1, "date": 0,
                                                    "chat": {"id": FORUM, "type": "supergroup"}}))
        fake.push_update(service("new_chat_members", [{"id": 77, "is_bot": False, "first_name": "New"}]))
        fake.push_update(service("forum_topic_created", {"name": "Random", "icon_color": 7322096}, thread=555))
        fake.push_text(OWNER, OWNER, "sentinel")  # queued after the service messages
        await fake.wait_for_messages(1)
        await asyncio.sleep(0.1)
    assert [m.chat_id for m in fake.sent_messages] == [OWNER]


async def test_token_is_never_logged(board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with running(board, tg_settings(fake)):
        fake.push_text(OWNER, OWNER, "hello")
        await fake.wait_for_messages(1)
    assert TOKEN not in caplog.text
    assert TOKEN.split(":")[1] not in caplog.text


# -- duplicates ----------------------------------------------------------------------


async def test_a_redelivered_message_is_answered_once_even_after_a_restart(board: Board, fake: FakeTelegramAPI) -> None:
    model = use_model(board, RecordingModel())
    update = fake.build_text_update(OWNER, OWNER, "answer me once")
    async with running(board, tg_settings(fake)) as channel:
        fake.push_update(dict(update))
        await fake.wait_for_messages(1)
        fake.push_update({**update, "update_id": update["update_id"] + 1000})  # same message, new update
        fake.push_text(OWNER, OWNER, "sentinel")
        await fake.wait_for_messages(2)
        assert channel.intake.inbox.duplicates == 1
    async with running(board, tg_settings(fake)):  # Telegram redelivers after a restart
        fake.push_update({**update, "update_id": update["update_id"] + 2000})
        fake.push_text(OWNER, OWNER, "sentinel 2")
        await fake.wait_for_messages(3)
    assert [c.messages[-1].content for c in model.calls] == ["answer me once", "sentinel", "sentinel 2"]


async def test_a_redelivered_dice_is_told_text_only_once(board: Board, fake: FakeTelegramAPI) -> None:
    # (a photo until issue 24: pictures are read now; a dice is still something Sabha does not read)
    update = fake.build_text_update(OWNER, OWNER, "placeholder")
    del update["message"]["text"]
    update["message"]["dice"] = {"emoji": "🎲", "value": 3}
    async with running(board, tg_settings(fake)) as channel:
        fake.push_update(dict(update))
        await fake.wait_for_messages(1)
        fake.push_update({**update, "update_id": update["update_id"] + 1000})  # same message, new update
        fake.push_text(OWNER, OWNER, "sentinel")  # same lane: answered after the redelivery was handled
        await fake.wait_for_messages(2)
        assert channel.intake.inbox.duplicates == 1
    texts = [m.text for m in fake.sent_messages]
    assert texts.count(TEXT_ONLY) == 1 and len(texts) == 2
    assert "sentinel" in texts[1]


# -- formatting ----------------------------------------------------------------------


async def test_a_long_answer_is_split_in_the_same_topic(board: Board, fake: FakeTelegramAPI) -> None:
    paragraphs = [f"**Point {i}.** " + ("Runway matters 💸. " * 30).strip() for i in range(20)]
    use_model(board, RecordingModel(answer=lambda r: "\n\n".join(paragraphs)))
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "give me everything", thread_id=thread)
        await fake.wait_for_messages(3)
        await asyncio.sleep(0.1)
    sent = fake.sent_to(FORUM)
    assert len(sent) >= 3
    assert all(m.message_thread_id == thread for m in sent)
    assert all(utf16_len(m.text) <= 4096 for m in sent)
    assert sent[0].text.startswith(LABELS["finance"])
    assert sent[0].reply_parameters is not None and all(m.reply_parameters is None for m in sent[1:])
    # split on paragraph boundaries: every chunk after the first starts a paragraph, none ends mid-one
    for message in sent[1:]:
        assert message.text.startswith("Point ")
    for message in sent:
        assert message.text.endswith("Runway matters 💸.")
        for e in message.entities or []:
            assert e["offset"] + e["length"] <= utf16_len(message.text)
    body = "\n\n".join(m.text for m in sent).removeprefix(LABELS["finance"] + "\n")
    assert body == "\n\n".join(p.replace("**", "") for p in paragraphs)


async def test_parse_error_falls_back_to_plain_text(board: Board, fake: FakeTelegramAPI) -> None:
    use_model(board, RecordingModel(answer=lambda r: "The **runway** is `18 months`."))
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        fake.fail_next_parse_error()
        fake.push_text(FORUM, OWNER, "runway?", thread_id=thread)
        [sent] = await fake.wait_for_messages(1)
        assert channel.outbound.plain_fallbacks == 1
    attempts = fake.calls_to("sendMessage")
    assert len(attempts) == 2
    assert attempts[0]["entities"]  # the formatted try
    assert "entities" not in attempts[1] and "parse_mode" not in attempts[1]
    assert sent.text == f"{LABELS['finance']}\nThe runway is 18 months."
    assert sent.message_thread_id == thread


# -- flood control -------------------------------------------------------------------


async def test_429_retry_after_is_honoured_and_the_forum_shares_the_pause(board: Board, fake: FakeTelegramAPI) -> None:
    clock = VirtualClock()
    async with running(board, tg_settings(fake)) as channel:
        channel.flood = channel.outbound.flood = FloodControl(channel.flood.settings, clock=clock.now,
                                                              sleep=clock.sleep)
        threads = [channel.topics.thread_for(r) for r in ("finance", "critic")]  # type: ignore[union-attr]
        fake.fail_next("sendMessage", 429, retry_after=7)
        fake.push_text(FORUM, OWNER, "runway?", thread_id=threads[0])
        [sent] = await fake.wait_for_messages(1)
        assert channel.outbound.retried_429 == 1
        assert clock.waits and 6.5 <= sum(clock.waits) <= 7.5  # the retry waited for retry_after
        # the pause belongs to the forum: another topic is held back as well
        clock.waits.clear()
        channel.flood.pause(FORUM, 5)
        await channel.outbound.send(Target(FORUM, threads[1]), "second topic")
        assert 4.5 <= sum(clock.waits) <= 5.5
    assert len(fake.calls_to("sendMessage")) == 3
    assert sent.message_thread_id == threads[0]
    assert fake.sent_messages[1].message_thread_id == threads[1]


async def test_group_budget_is_shared_by_topics(board: Board, fake: FakeTelegramAPI) -> None:
    clock = VirtualClock()
    async with running(board, tg_settings(fake)) as channel:
        settings = RateSettings(group_per_minute=60, private_per_second=100, global_per_second=1000)
        channel.flood = channel.outbound.flood = FloodControl(settings, clock=clock.now, sleep=clock.sleep)
        thread = channel.topics.thread_for  # type: ignore[union-attr]
        for i in range(settings.group_burst):
            await channel.outbound.send(Target(FORUM, thread(SPECIALISTS[i % 5])), f"m{i}")
        assert clock.waits == []
        await channel.outbound.send(Target(FORUM, thread("critic")), "one too many")
        assert 0.5 < sum(clock.waits) <= 1.01  # 60/min: the next token is 1 s away
        clock.waits.clear()
        await channel.outbound.send(Target(OWNER), "a DM has its own budget")
        assert clock.waits == []


# -- network errors --------------------------------------------------------------------


async def test_a_send_whose_answer_was_lost_is_not_resent(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "sabha.telegram")
    async with running(board, tg_settings(fake)) as channel:
        channel.outbound.retry_delay_s = 0.001
        fake.drop_next("sendMessage")  # Telegram posts it, the answer never comes back
        with pytest.raises(DeliveryUnknown, match="not resent"):
            await channel.outbound.send(Target(OWNER), "posted once")
        fake.drop_next("editMessageText")  # an edit is idempotent: retried
        [status] = await channel.outbound.send(Target(OWNER), "status v1")
        assert await channel.outbound.edit(Target(OWNER), status.message_id, "status v2")
        assert channel.outbound.unknown == 1
    assert [m.text for m in fake.sent_messages] == ["posted once", "status v1"]
    assert len(fake.calls_to("sendMessage")) == 2
    assert len(fake.calls_to("editMessageText")) == 2
    assert "may or may not have been posted" in caplog.text


@pytest.mark.parametrize("status", [500, 502])
async def test_a_server_error_is_resent(board: Board, fake: FakeTelegramAPI, status: int) -> None:
    async with running(board, tg_settings(fake)) as channel:
        channel.outbound.retry_delay_s = 0.001
        fake.fail_next("sendMessage", status)  # Telegram answered: nothing was posted
        await channel.outbound.send(Target(OWNER), "after a hiccup")
    assert len(fake.calls_to("sendMessage")) == 2
    assert [m.text for m in fake.sent_messages] == ["after a hiccup"]


async def test_connection_refused_is_retried_then_reported_as_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, never listening: connection refused, and the port stays ours
    port = sock.getsockname()[1]  # (closed, a test running alongside could be given it)
    bot = Bot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot")
    await bot.request.initialize()
    caplog.set_level(logging.WARNING, "sabha.telegram")
    try:
        outbound = Outbound(bot, FloodControl(), max_retries=2)
        outbound.retry_delay_s = 0.001
        with pytest.raises(SendFailed) as failure:
            await outbound.send(Target(OWNER), "hello")
    finally:
        await bot.request.shutdown()
        sock.close()
    assert not isinstance(failure.value, DeliveryUnknown)
    assert caplog.text.count("retrying") == 2  # proven not sent: resent up to max_retries
    assert outbound.unknown == 0


def test_only_errors_that_prove_nothing_was_posted_allow_a_resend() -> None:
    def caused(exc: TelegramError, cause: BaseException | None) -> TelegramError:
        exc.__cause__ = cause
        return exc

    request = httpx.Request("POST", "http://127.0.0.1/bot1:x/sendMessage")
    assert proves_not_sent(RetryAfter(3))
    assert proves_not_sent(caused(NetworkError("httpx.ConnectError: refused"), httpx.ConnectError("x")))
    assert proves_not_sent(caused(TimedOut(), httpx.ConnectTimeout("x")))
    assert proves_not_sent(caused(TimedOut("Pool timeout"), httpx.PoolTimeout("x")))
    assert proves_not_sent(NetworkError("Internal Server Error"))  # a 5xx answer
    assert not proves_not_sent(caused(TimedOut(), httpx.ReadTimeout("x", request=request)))
    assert not proves_not_sent(caused(NetworkError("httpx.RemoteProtocolError: gone"),
                                      httpx.RemoteProtocolError("gone", request=request)))
    assert not proves_not_sent(caused(NetworkError("Unknown error in HTTP implementation"), OSError("x")))


# -- order and concurrency -----------------------------------------------------------


async def test_topics_run_concurrently_while_each_topic_stays_in_order(board: Board, fake: FakeTelegramAPI) -> None:
    model = use_model(board, GatedModel())
    release_a1 = model.gates["A1"] = asyncio.Event()
    async with running(board, tg_settings(fake)) as channel:
        finance = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        research = channel.topics.thread_for("research")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "A1", thread_id=finance)
        fake.push_text(FORUM, OWNER, "A2", thread_id=finance)
        fake.push_text(FORUM, OWNER, "B1", thread_id=research)
        await asyncio.wait_for(model.started_event("A1").wait(), 5)
        # A1 is stuck in the model; B1 in another topic is answered meanwhile
        await asyncio.wait_for(model.started_event("B1").wait(), 5)
        [b1] = await fake.wait_for_messages(1)
        assert b1.message_thread_id == research and b1.text.endswith("on B1")
        assert ("start", "A2") not in model.log  # A2 waits for A1
        release_a1.set()
        await fake.wait_for_messages(3)
    assert model.log.index(("end", "A1")) < model.log.index(("start", "A2"))
    in_finance = [m.text.rsplit(" ", 1)[-1] for m in fake.sent_to(FORUM, finance)]
    assert in_finance == ["A1", "A2"]


async def test_typing_is_shown_in_the_topic_being_answered(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake, typing_after_s=0)) as channel:
        thread = channel.topics.thread_for("critic")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "thoughts?", thread_id=thread)
        fake.push_text(FORUM, OWNER, "in General")
        await fake.wait_for_messages(2)
    actions = fake.calls_to("sendChatAction")
    assert {(a.get("message_thread_id"), a["action"]) for a in actions} == {(thread, "typing"), (None, "typing")}


async def test_typing_shows_once_an_answer_takes_a_noticeable_time(board: Board, fake: FakeTelegramAPI) -> None:
    """Telegram recommends the indicator only for an answer that takes a noticeable time: by default it shows once
    the turn has run ``telegram.typing_after_s`` (1 s), and an answer given sooner sends no ``sendChatAction``."""
    model = use_model(board, GatedModel(gates={"think it over": asyncio.Event()}))
    async with running(board, tg_settings(fake)) as channel:
        fake.push_text(FORUM, OWNER, "think it over")
        await asyncio.wait_for(model.started_event("think it over").wait(), 30)
        await fake.wait_for_call("sendChatAction", 1)  # the turn is held at the model: past 1 s, typing shows
        model.gates["think it over"].set()
        await fake.wait_for_messages(1)
        shown = fake.calls_to("sendChatAction")
        assert {(a.get("message_thread_id"), a["action"]) for a in shown} == {(None, "typing")}
        target = Target(FORUM, None, reply_to=5)
        async with channel.outbound.keep_typing(target, after=60):
            await asyncio.sleep(0.05)  # an answer given sooner than the delay
        assert len(fake.calls_to("sendChatAction")) == len(shown), "typing shown for an answer given at once"
        async with channel.outbound.keep_typing(target, interval=0.02, after=0.05):
            await fake.wait_for_call("sendChatAction", len(shown) + 2)  # past the delay: shown, then refreshed


async def test_typing_is_refreshed_while_the_agent_thinks(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("research")  # type: ignore[union-attr]
        async with channel.outbound.keep_typing(Target(FORUM, thread, reply_to=5), interval=0.02):
            await fake.wait_for_call("sendChatAction", 3)
        count = len(fake.calls_to("sendChatAction"))
        await asyncio.sleep(0.1)
        assert len(fake.calls_to("sendChatAction")) == count  # stopped with the block
    assert {a.get("message_thread_id") for a in fake.calls_to("sendChatAction")} == {thread}


# -- commands ------------------------------------------------------------------------


async def test_commands_are_registered_and_answered_in_place(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("strategy")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "/roles", thread_id=thread)
        fake.push_text(FORUM, OWNER, "/help@sabha_test_bot")
        fake.push_text(FORUM, OWNER, "/help@some_other_bot")  # not for us: ignored
        fake.push_text(OWNER, OWNER, "/souls")
        await fake.wait_for_messages(3)
        await asyncio.sleep(0.05)
    [commands] = fake.commands.values()
    assert [c["command"] for c in commands] == [name for name, _ in COMMANDS]
    menu = {c["command"] for c in commands}
    assert {"start", "help", "roles", "ask", "meeting", "meetings", "cancel", "wrap", "pause", "resume", "extend",
            "start_meeting", "cancel_meeting",
            "actions", "done", "reset", "compact", "memory", "forget", "files", "link", "unlink", "souls", "cost",
            "status",
            "decisions", "decision", "ratify", "veto", "revisit", "due", "snooze",
            "review", "predictions", "resolve", "stats", "allow", "deny", "every", "standing", "recall"} == menu
    assert set(board.parts.commands) <= menu  # every command the board answers is in the menu
    # three lanes answer concurrently: pick each reply by where it went, not by arrival order
    [roles] = [m for m in fake.sent_messages if m.message_thread_id == thread]
    [souls] = [m for m in fake.sent_messages if m.chat_id == OWNER]
    [help_] = [m for m in fake.sent_messages if m not in (roles, souls)]
    assert roles.message_thread_id == thread and "Research" in roles.text
    assert help_.message_thread_id is None and "/ask" in help_.text
    assert souls.chat_id == OWNER and "finance" in souls.text
    assert len(fake.sent_messages) == 3


async def test_reset_in_a_topic_resets_that_topic_session(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake)) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        fake.push_text(FORUM, OWNER, "remember 42", thread_id=thread)
        await fake.wait_for_messages(1)
        fake.push_text(FORUM, OWNER, "/reset", thread_id=thread)
        [_, reset] = await fake.wait_for_messages(2)
    assert reset.message_thread_id == thread and "fresh conversation with finance" in reset.text
    history = await board.parts.sessions.history_of(f"board:finance:g-{FORUM}")
    assert len(history) == 2 and sum(ref.archived_at is not None for ref in history) == 1


# -- webhook mode ----------------------------------------------------------------------


async def test_webhook_mode_checks_the_secret_and_answers(board: Board, fake: FakeTelegramAPI) -> None:
    settings = tg_settings(fake, mode="webhook", webhook_secret="s3cret-token_1",
                           webhook_url="https://sabha.example.org/telegram/webhook")
    channel = TelegramChannel(channel_parts(board), settings)
    app = web.Application()
    app.add_routes(channel.routes())
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/telegram/webhook"
    try:
        status, _ = await fake.deliver_webhook(url, fake.build_text_update(OWNER, OWNER, "early"), "s3cret-token_1")
        assert status == 503  # not started yet
        await channel.start()
        try:
            [hook] = fake.calls_to("setWebhook")
            assert hook["url"] == "https://sabha.example.org/telegram/webhook"
            assert hook["secret_token"] == "s3cret-token_1"
            assert fake.calls_to("getUpdates") == []
            status, _ = await fake.deliver_webhook(url, fake.build_text_update(OWNER, OWNER, "wrong"), "nope")
            assert status == 401
            status, _ = await fake.deliver_webhook(url, fake.build_text_update(OWNER, OWNER, "@finance hi"),
                                                   "s3cret-token_1")
            assert status == 200
            [sent] = await fake.wait_for_messages(1)
        finally:
            await channel.stop()
    finally:
        await runner.cleanup()
    assert sent.chat_id == OWNER and sent.text.startswith(LABELS["finance"])
    assert len(fake.sent_messages) == 1
