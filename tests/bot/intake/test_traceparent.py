"""The trace context a message arrived in is stored with it (``inbound_messages.traceparent``, migration 1530) and
read back wherever a stored message is taken up: in memory right after the claim, and after a restart
(:meth:`Inbox.unfinished`). Stored while tracing was off (or before the column), the row holds NULL and its answer
starts a trace of its own. Against the real Inbox on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from board.envelope import Envelope
from bot.intake.inbox import Arrival, Inbox
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends

RECEIPT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def arrival(message_id: str, traceparent: str | None) -> Arrival:
    envelope = Envelope(channel="test", text="q", sender="u", chat_id="c1", message_id=message_id)
    return Arrival(envelope, "c1", traceparent=traceparent)


async def test_a_messages_trace_context_is_stored_and_read_back_after_a_restart(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox = Inbox(db, "test")
    [traced] = await inbox.store([arrival("m1", RECEIPT)])
    [untraced] = await inbox.store([arrival("m2", None)])  # tracing off: the column is not written
    assert (traced.traceparent, untraced.traceparent) == (RECEIPT, None)
    mixed = await inbox.store([arrival("m3", None), arrival("m4", RECEIPT), arrival("m1", RECEIPT)])  # m1: again
    assert [(p.message_id, p.traceparent) for p in mixed] == [("m3", None), ("m4", RECEIPT)]
    rows = await db.fetchall("SELECT message_id, traceparent FROM inbound_messages ORDER BY message_id")
    assert [(r["message_id"], r["traceparent"]) for r in rows] == [
        ("m1", RECEIPT), ("m2", None), ("m3", None), ("m4", RECEIPT)]
    resumed = await Inbox(db, "test").unfinished(timedelta(hours=1))  # the next start
    assert {p.message_id: p.traceparent for p in resumed} == {"m1": RECEIPT, "m2": None, "m3": None, "m4": RECEIPT}
