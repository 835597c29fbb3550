"""Replicas (PostgreSQL): a claim holds its conversations' lane locks until it commits, so another replica storing
the next message of the same conversation waits for it and the two are numbered in the order they commit
(bot.intake.inbox, ``LANE_LOCKS``). With tracing on each stored row also carries its trace context; the lock must
still be the conversation's (found by ack48: the lock was taken on the row's last column, which with tracing on is
its ``traceparent``, a key no other claim shares, so it excluded nothing)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.app import BOARD_MIGRATIONS
from board.envelope import Envelope
from board.storage import Database, Dialect, StateURL, open_database
from bot.app import all_migrations
from bot.intake.inbox import LANE_LOCKS, Arrival, Inbox

pytestmark = pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
async def replicas(state_url: StateURL | None, data_dir: Path) -> AsyncIterator[tuple[Database, Database]]:
    assert state_url is not None
    steps = [*BOARD_MIGRATIONS, *all_migrations()]
    first = await open_database(state_url, steps, pool_size=4)
    second = await open_database(state_url, steps, pool_size=4)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
async def test_a_claim_waits_for_the_conversation_s_lane_lock_held_by_another_replica(
        replicas: tuple[Database, Database], traced: bool) -> None:
    holder, claimer = replicas
    inbox = Inbox(claimer, "whatsapp", ids_unique=True)
    envelope = Envelope(channel="whatsapp", text="hello", sender="15550001111", chat_id="15550001111",
                        message_id="wamid.traced1")
    arrival = Arrival(envelope, "wa:15550001111", traceparent=TRACEPARENT if traced else None)
    async with holder.transaction() as tx:  # another replica's claim of this conversation, not committed yet
        await tx.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (LANE_LOCKS, "whatsapp:wa:15550001111"))
        storing = asyncio.create_task(inbox.store([arrival]))

        async def waiting_for_the_lock() -> None:
            for _ in range(6000):  # polls the server's lock table (no event to wait for): 60 s at most
                if await holder.fetchall("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"):
                    return
                await asyncio.sleep(0.01)

        seen = asyncio.create_task(waiting_for_the_lock())
        try:
            done, _ = await asyncio.wait({storing, seen}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        finally:
            seen.cancel()
        assert seen in done and storing not in done, "the claim did not wait for its conversation's lane lock"
    assert len(await asyncio.wait_for(storing, 60)) == 1  # the other claim committed: this one goes on
