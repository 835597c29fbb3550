"""A reply that was being sent when Sabha stopped (its request had left) is sent once more, marked, and never a
third time (issue: item 1; the inbox's rules, on SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from board.envelope import Envelope, Reply
from bot.intake.inbox import SENT_AGAIN, Arrival, Inbox
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends

HOUR = timedelta(hours=1)


def marked(reply: Reply) -> Reply:
    return replace(reply, text=f"(again) {reply.text}")


async def test_a_reply_left_sending_goes_once_more_marked_and_never_a_third_time(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox = Inbox(db, "test")
    envelope = Envelope(channel="test", text="q", sender="u", chat_id="c1", message_id="m1")
    [pending] = await inbox.store([Arrival(envelope, "c1")])
    await inbox.replied(pending, Reply.to(envelope, role="general", name="G", emoji="", text="the answer"))
    await inbox.sending(pending)

    [again] = await inbox.unfinished(HOUR, again=marked)
    assert again.reply is not None and again.reply.text == "(again) the answer" and again.resends == 1
    row = await db.fetchone("SELECT status, resends, detail, reply FROM inbound_messages")
    assert row is not None and (row["status"], row["resends"], row["detail"]) == ("replied", 1, SENT_AGAIN)
    assert "(again) the answer" in row["reply"]  # stored marked before it is delivered

    await inbox.sending(again)  # killed again while the marked copy was on its way
    assert await inbox.unfinished(HOUR, again=marked) == []
    row = await db.fetchone("SELECT status, detail FROM inbound_messages")
    assert row is not None and row["status"] == "may_have_arrived" and "not sending a third copy" in row["detail"]


async def test_without_a_way_to_mark_it_a_reply_left_sending_is_not_sent_again(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox = Inbox(db, "test")
    envelope = Envelope(channel="test", text="q", sender="u", chat_id="c1", message_id="m1")
    [pending] = await inbox.store([Arrival(envelope, "c1")])
    await inbox.replied(pending, Reply.to(envelope, role="general", name="G", emoji="", text="the answer"))
    await inbox.sending(pending)
    assert await inbox.unfinished(HOUR) == []
    row = await db.fetchone("SELECT status FROM inbound_messages")
    assert row is not None and row["status"] == "may_have_arrived"
