"""The answering side's bookkeeping is group-committed (issue 44, ack48: "1,000 answered within 1.3x the ideal";
bot.intake.group_writes): the writes a wave of turns makes at once (attempts counted, replies stored, "sending",
outcomes) take a few transactions, not one each, and each caller still waits for its own commit and gets its own
error. The intake's real Inbox on a real state db (SQLite: transactions counted by SQLite's statement trace on both
connections); GroupWrites itself on both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from board.app import BOARD_MIGRATIONS
from board.envelope import Envelope, Reply
from board.storage import Database, DuplicateKey
from board.storage.sqlite import StateDB
from bot.app import all_migrations
from bot.intake.group_writes import GroupWrites
from bot.intake.inbox import Arrival, Inbox, InboxStatus

WAVE = 40


async def _transactions(db: StateDB) -> list[str]:
    """Start counting the write transactions on both of the state db's connections; the list fills as they run."""
    seen: list[str] = []

    def trace(sql: str) -> None:
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if head in ("BEGIN", "UPDATE", "INSERT", "DELETE"):
            seen.append(sql)

    await db.conn.set_trace_callback(trace)  # the main connection: autocommit, a write is a transaction
    express: Any = await db.on_express(lambda conn: conn)
    await db.on_express(lambda conn: conn.set_trace_callback(trace))
    assert express is not None
    return seen


def _begun(seen: list[str]) -> int:
    """Transactions among the traced statements: an express unit is one BEGIN and the statements inside it; a
    statement on the main connection outside one is a transaction of its own."""
    count, inside = 0, False
    for sql in seen:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head == "BEGIN":
            count, inside = count + 1, True
        elif not inside:
            count += 1
    return count


async def test_a_wave_of_turns_bookkeeping_takes_a_few_transactions_and_each_is_stored_when_awaited(
        tmp_path: Path) -> None:
    db = await StateDB.open(tmp_path / "sabha.db", [*BOARD_MIGRATIONS, *all_migrations()])
    try:
        inbox = Inbox(db, "whatsapp", ids_unique=True)
        arrivals = [Arrival(Envelope(channel="whatsapp", text=f"q{n}", sender=f"1555000{n:04d}",
                                     chat_id=f"1555000{n:04d}", message_id=f"wamid.{n}"), f"wa:{n}")
                    for n in range(WAVE)]
        stored = await inbox.store(arrivals)
        seen = await _transactions(db)

        async def life(n: int) -> None:
            pending = stored[n]
            await inbox.started(pending)
            reply = Reply(role="general", name="General", emoji="", text=f"a{n}", channel="whatsapp",
                          chat_id=pending.chat_id)
            await inbox.replied(pending, reply)
            assert await inbox.status(pending.chat_id, pending.message_id) == InboxStatus.REPLIED.value
            await inbox.sending(pending)
            assert await inbox.status(pending.chat_id, pending.message_id) == InboxStatus.SENDING.value
            await inbox.finish(pending, InboxStatus.ANSWERED)

        await asyncio.gather(*(life(n) for n in range(WAVE)))
        statuses = {str(r["status"]) for r in await db.fetchall("SELECT status FROM inbound_messages")}
        assert statuses == {InboxStatus.ANSWERED.value}
        transactions = _begun(seen)
        assert transactions <= WAVE, f"{transactions} transactions for {4 * WAVE} writes of {WAVE} messages"
    finally:
        await db.close()


@pytest.mark.backends
async def test_a_write_that_fails_in_a_group_fails_alone(database: Database) -> None:
    writes = GroupWrites(database)
    await database.execute("INSERT INTO whatsapp_users(user_key, role, updated_at) VALUES ('u0', 'general', 'x')")
    insert = "INSERT INTO whatsapp_users(user_key, role, updated_at) VALUES (?, ?, 'x') RETURNING user_key"
    results = await asyncio.gather(*(writes.run(insert, (f"u{n}", "finance")) for n in range(6)),
                                   return_exceptions=True)
    assert isinstance(results[0], DuplicateKey)  # u0 was there: that write alone failed
    assert [[str(r["user_key"]) for r in rows] for rows in results[1:]] == [[f"u{n}"] for n in range(1, 6)]
    rows = await database.fetchall("SELECT user_key, role FROM whatsapp_users ORDER BY user_key")
    assert [(str(r["user_key"]), str(r["role"])) for r in rows] == [("u0", "general")] + \
        [(f"u{n}", "finance") for n in range(1, 6)]
    assert writes.units < writes.writes + 6  # grouped first, then each alone
