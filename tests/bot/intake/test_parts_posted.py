"""How far a reply in several messages got is stored (``inbound_messages.parts_posted``, migration 1060) and read
back where a marked copy is made: after a restart (:meth:`Inbox.unfinished`) and when the service's confirmation
did not come (:meth:`Inbox.overdue`). Against the real Inbox on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from board.envelope import Envelope, Reply
from bot.intake.inbox import Arrival, Inbox, Pending
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends


def marked(reply: Reply) -> Reply:
    return replace(reply, text=f"(again)\n\n{reply.text}")


async def _sending(db: Any) -> tuple[Inbox, Pending]:
    inbox = Inbox(db, "test")
    envelope = Envelope(channel="test", text="q", sender="u", chat_id="c1", message_id="m1")
    [pending] = await inbox.store([Arrival(envelope, "c1")])
    reply = Reply.to(envelope, role="general", name="G", emoji="", text="the answer")
    await inbox.replied(pending, reply)
    await inbox.sending(pending)
    return inbox, pending.with_reply(reply)


async def _posted(db: Any) -> int:
    row = await db.fetchone("SELECT parts_posted FROM inbound_messages")
    assert row is not None
    return int(row["parts_posted"])


async def test_the_parts_posted_before_a_stop_are_what_the_marked_copy_skips(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, pending = await _sending(db)
    await inbox.parts_posted(pending, 2)
    await inbox.parts_posted(pending, 1)  # never back
    assert await _posted(db) == 2
    [again] = await inbox.unfinished(timedelta(hours=1), again=marked)  # the restart
    assert (again.resends, again.posted) == (1, 2)
    await inbox.sending(again)
    await inbox.parts_posted(again, 3)  # a marked copy is never sent a third time: nothing to store
    assert await _posted(db) == 2


async def test_a_part_s_status_moves_the_count_while_the_reply_waits_for_its_confirmation(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, pending = await _sending(db)
    await inbox.parts_posted(pending, 1)
    assert await inbox.unconfirmed(pending)
    assert await inbox.part_confirmed("m1", 2)  # Meta's status of part 2: parts 1 and 2 arrived
    assert not await inbox.part_confirmed("m1", 1)  # it knew as much
    [overdue] = await inbox.overdue(timedelta(seconds=-1))
    assert overdue.posted == 2
    assert pending.reply is not None
    again = await inbox.send_again(overdue, marked(pending.reply), "not confirmed")
    assert again is not None and again.posted == 2
    assert not await inbox.part_confirmed("m1", 3)  # a marked copy is on its way: nothing waits for it
