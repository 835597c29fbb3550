"""The inbox's status updates after a delivery move a row on only from the state the caller saw (review of the
delivery work, finding 3), and a reply left 'sending' is held to the same age and attempts limits as the rest
(finding 7). Against the real Inbox on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from board.envelope import Envelope, Reply
from bot.intake.inbox import MAX_ATTEMPTS, Arrival, Inbox, InboxStatus, Pending
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends

HOUR = timedelta(hours=1)


def marked(reply: Reply) -> Reply:
    return replace(reply, text=f"(again) {reply.text}")


async def _sending(db: Any) -> tuple[Inbox, Pending]:
    inbox = Inbox(db, "test")
    envelope = Envelope(channel="test", text="q", sender="u", chat_id="c1", message_id="m1")
    [pending] = await inbox.store([Arrival(envelope, "c1")])
    reply = Reply.to(envelope, role="general", name="G", emoji="", text="the answer")
    await inbox.replied(pending, reply)
    await inbox.sending(pending)
    return inbox, pending.with_reply(reply)


async def _row(db: Any) -> tuple[str, int]:
    row = await db.fetchone("SELECT status, resends FROM inbound_messages")
    assert row is not None
    return str(row["status"]), int(row["resends"])


async def test_a_status_webhook_before_the_send_s_answer_is_not_undone_when_that_answer_is_lost(
        database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, pending = await _sending(db)
    assert await inbox.confirm("m1", "sent")  # Meta's status came first
    await inbox.unconfirmed(pending)  # then the send's HTTP answer was lost
    assert await _row(db) == ("answered", 0)
    await inbox.finish(pending, InboxStatus.MAY_HAVE_ARRIVED, "lost")
    assert await _row(db) == ("answered", 0)


async def test_a_late_outcome_of_the_first_send_does_not_overwrite_the_marked_copy_another_replica_queued(
        database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, pending = await _sending(db)
    assert pending.reply is not None
    again = await inbox.send_again(pending, marked(pending.reply), "was being sent when its replica stalled")  # B
    assert again is not None
    await inbox.finish(pending, InboxStatus.MAY_HAVE_ARRIVED, "left but its answer was lost")  # A, late
    assert await _row(db) == ("replied", 1)
    await inbox.unsent(pending)  # A, a refusal seen late
    await inbox.unconfirmed(pending)
    assert await _row(db) == ("replied", 1)
    await inbox.sending(again)  # B's marked copy still goes
    await inbox.finish(again, InboxStatus.ANSWERED)
    assert await _row(db) == ("answered", 1)


async def test_a_reply_left_sending_too_long_ago_is_given_up_and_the_user_told_not_sent_days_late(
        database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, _ = await _sending(db)
    old = (datetime.now(UTC) - timedelta(days=3)).isoformat(timespec="milliseconds")
    await db.execute("UPDATE inbound_messages SET received_at = ?", (old,))
    told: list[str] = []

    async def gave_up(p: Pending) -> None:
        told.append(p.message_id)

    assert await inbox.unfinished(HOUR, gave_up=gave_up, again=marked) == []
    assert (await _row(db))[0] == "abandoned" and told == ["m1"]


async def test_a_reply_left_sending_after_too_many_interruptions_is_given_up(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, _ = await _sending(db)
    await db.execute("UPDATE inbound_messages SET attempts = ?", (MAX_ATTEMPTS,))
    told: list[str] = []

    async def gave_up(p: Pending) -> None:
        told.append(p.message_id)

    assert await inbox.unfinished(HOUR, gave_up=gave_up, again=marked, confirms=True) == []
    assert (await _row(db))[0] == "abandoned" and told == ["m1"]


async def test_a_reply_waiting_for_its_confirmation_counts_as_pending(database_with: Any) -> None:
    from bot.cli.ops import _inbox_lines  # `sabha status`'s inbox line
    from bot.replicas.status import BACKLOG_STATUSES

    db = await database_with(INTAKE_MIGRATIONS)
    inbox, pending = await _sending(db)
    assert await inbox.unconfirmed(pending)
    assert await inbox.count_unfinished() == 1
    assert (await _inbox_lines(db))[0] == "Inbox: pending test 1 (unconfirmed 1)"
    assert "unconfirmed" in BACKLOG_STATUSES


async def _overdue_row(db: Any) -> tuple[Inbox, Pending]:
    inbox, pending = await _sending(db)
    assert await inbox.unconfirmed(pending)
    await db.execute("UPDATE inbound_messages SET unconfirmed_at = '2000-01-01T00:00:00.000+00:00'")
    return inbox, pending


async def test_an_overdue_reply_whose_copy_cannot_be_read_is_given_up_not_skipped_for_ever(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox, _ = await _overdue_row(db)
    await db.execute("UPDATE inbound_messages SET reply = '{not json'")
    assert await inbox.overdue(timedelta(seconds=1)) == []
    assert (await _row(db))[0] == "abandoned"


async def test_the_overdue_sweep_leaves_a_conversation_another_replica_holds_to_it(database_with: Any) -> None:
    import time

    db = await database_with(INTAKE_MIGRATIONS)
    inbox, _ = await _overdue_row(db)
    await db.execute("INSERT INTO leases(key, holder, expires_at, taken_at) VALUES ('lane:c1', 'B', ?, 'now')",
                     (time.time() + 3600,))
    assert await inbox.overdue(timedelta(seconds=1), holder="A", now_s=time.time()) == []
    [mine] = await inbox.overdue(timedelta(seconds=1), holder="B", now_s=time.time())
    assert mine.message_id == "m1"
