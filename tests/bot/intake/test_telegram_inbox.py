"""The durable inbox end to end: real PTB against the fake Bot API, the real board and state db.

A message claimed but not answered when Sabha stopped (a crash, or the shutdown drain
ran out) is taken up at the next start; what cannot safely be taken up is logged and
marked abandoned; a redelivered update is still answered once.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from board.app import Board
from board.envelope import Envelope, Reply
from bot.intake.courier import ChannelTexts
from bot.intake.inbox import Arrival, Inbox, Pending
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import (
    FORUM,
    OWNER,
    GatedModel,
    RecordingModel,
    eventually,
    running,
    tg_settings,
    use_model,
)

pytestmark = pytest.mark.backends  # the inbox on SQLite and on PostgreSQL


async def received_ago(board: Board, message_id: str, age: timedelta) -> None:
    """Make a claimed message look ``age`` old."""
    stamp = (datetime.now(UTC) - age).isoformat(timespec="seconds")
    await board.parts.db.execute("UPDATE inbound_messages SET received_at = ? WHERE message_id = ?", (stamp,
                                                                                                      message_id))


async def status_of(board: Board, message_id: int | str, chat: int = OWNER) -> str | None:
    return await Inbox(board.parts.db, "telegram").status(str(chat), str(message_id))


async def test_a_message_cut_off_mid_answer_is_answered_after_the_restart_once(
    board: Board, fake: FakeTelegramAPI
) -> None:
    model = use_model(board, GatedModel())
    model.gates["slow question"] = asyncio.Event()  # not released: the model is still thinking at shutdown
    update = fake.build_text_update(OWNER, OWNER, "slow question")
    message_id = update["message"]["message_id"]
    async with running(board, tg_settings(fake), shutdown_grace_s=0.05):
        fake.push_update(dict(update))
        await asyncio.wait_for(model.started_event("slow question").wait(), 5)
    assert fake.sent_messages == []  # the drain ran out before the answer
    assert await status_of(board, message_id) == "received"

    del model.gates["slow question"]
    async with running(board, tg_settings(fake)) as channel:
        fake.push_update({**update, "update_id": update["update_id"] + 1000})  # Telegram redelivers it as well
        fake.push_text(OWNER, OWNER, "sentinel")
        await fake.wait_for_messages(2)
        await asyncio.sleep(0.05)
        assert channel.intake.inbox.resumed == 1 and channel.intake.inbox.duplicates == 1
    assert [m.text.rsplit(" on ", 1)[-1] for m in fake.sent_messages] == ["slow question", "sentinel"]
    assert fake.sent_messages[0].chat_id == OWNER
    assert await status_of(board, message_id) == "answered"


async def test_a_reply_not_sent_before_shutdown_is_sent_after_the_restart_without_a_new_model_call(
    board: Board, fake: FakeTelegramAPI
) -> None:
    model = use_model(board, RecordingModel())
    async with running(board, tg_settings(fake), shutdown_grace_s=0.05) as channel:
        thread = channel.topics.thread_for("finance")  # type: ignore[union-attr]
        channel.flood.pause(FORUM, 3600)  # a long 429: the answer waits for the forum's budget
        update = fake.push_text(FORUM, OWNER, "what is our runway?", thread_id=thread)
        message_id = update["message"]["message_id"]
        await eventually(lambda: model.calls, "the model call")

        async def stored() -> bool:  # the reply is stored; it waits for the budget, nothing has left
            return await status_of(board, message_id, FORUM) == "replied"

        await eventually(stored, "the reply to wait for the budget")
        await asyncio.sleep(0.05)
    assert fake.sent_messages == []
    assert await status_of(board, message_id, FORUM) == "replied"  # stored; nothing of it reached Telegram

    async with running(board, tg_settings(fake)):
        [sent] = await fake.wait_for_messages(1)
        await asyncio.sleep(0.05)
    assert len(model.calls) == 1  # delivered from the inbox, not asked again
    assert sent.chat_id == FORUM and sent.message_thread_id == thread  # where the question was asked
    assert sent.reply_parameters is not None and sent.reply_parameters["message_id"] == message_id
    assert sent.text.startswith("💰 Finance") and sent.text.endswith("what is our runway?")
    assert len(fake.sent_messages) == 1
    assert await status_of(board, message_id, FORUM) == "answered"


async def claim(inbox: Inbox, envelope: Envelope) -> Pending:
    """Store a message as the intake does at receipt."""
    [pending] = await inbox.store([Arrival(envelope, lane=f"{envelope.chat_id}/-")])
    return pending


async def test_what_cannot_be_taken_up_is_logged_and_abandoned(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    model = use_model(board, RecordingModel())
    inbox = Inbox(board.parts.db, "telegram")
    chat = str(OWNER)

    def envelope(message_id: int, text: str) -> Envelope:
        return Envelope(channel="telegram", text=text, sender=chat, chat_id=chat, message_id=str(message_id))

    await claim(inbox, envelope(7, "an old question"))
    await received_ago(board, "7", timedelta(hours=2))
    await claim(inbox, envelope(6, "a question from last week"))  # older than the pruning age
    await received_ago(board, "6", timedelta(days=8))
    half = await claim(inbox, envelope(8, "half sent"))
    await inbox.replied(half, Reply.to(envelope(8, "half sent"), role="general", name="General", emoji="🧭",
                                       text="an answer that may have been posted"))
    await inbox.sending(half)
    await board.parts.db.execute(  # no copy kept (claimed by an older Sabha)
        "INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status) "
        "VALUES ('telegram', ?, '9', ?, 'received')", (chat, datetime.now(UTC).isoformat()))
    await claim(inbox, envelope(10, "the crashing question"))
    await board.parts.db.execute("UPDATE inbound_messages SET attempts = 3 WHERE message_id = '10'")
    await claim(inbox, envelope(11, "a fresh question"))

    caplog.set_level(logging.WARNING, "sabha.inbox")
    async with running(board, tg_settings(fake)):
        again, sent = await fake.wait_for_messages(2)
        await asyncio.sleep(0.05)
    assert sent.text.endswith("a fresh question") and len(fake.sent_messages) == 2
    # the reply that was being sent: once more, marked as possibly repeated (README: "may have arrived")
    assert ChannelTexts().possibly_repeated in again.text and again.text.endswith("may have been posted")
    assert [c.messages[-1].content for c in model.calls] == ["a fresh question"]
    statuses = {m: await status_of(board, m) for m in (6, 7, 8, 9, 10, 11)}
    assert statuses == {6: "abandoned", 7: "abandoned", 8: "answered", 9: "abandoned", 10: "abandoned",
                        11: "answered"}
    for message_id, why in ((6, "longer than"), (7, "longer than"), (9, "no copy"), (10, "interrupted 3 times")):
        [line] = [r.getMessage() for r in caplog.records if f"message {message_id} in chat" in r.getMessage()]
        assert why in line and "not answering it" in line


async def test_resume_max_age_zero_gives_everything_up(board: Board, fake: FakeTelegramAPI) -> None:
    model = use_model(board, RecordingModel())
    inbox = Inbox(board.parts.db, "telegram")
    await claim(inbox, Envelope(channel="telegram", text="hi", sender=str(OWNER), chat_id=str(OWNER), message_id="5"))
    async with running(board, tg_settings(fake), resume_max_age_s=0) as channel:
        fake.push_text(OWNER, OWNER, "sentinel")
        await fake.wait_for_messages(1)
        assert channel.intake.inbox.abandoned == 1
    assert [c.messages[-1].content for c in model.calls] == ["sentinel"]
    assert await status_of(board, 5) == "abandoned"
