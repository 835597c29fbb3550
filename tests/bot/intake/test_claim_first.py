"""A webhook's durable claim goes before the background units of work queued for SQLite's express connection
(board.storage.sqlite.UnitLock): it waits for the unit running, never for the queue behind it (issues 41/44,
the acknowledgement's tail). A real state db, the intake's real Inbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

from board.app import BOARD_MIGRATIONS
from board.envelope import Envelope
from board.storage.sqlite import StateDB
from bot.app import all_migrations
from bot.intake.inbox import Arrival, Inbox


async def test_a_claim_waits_for_the_unit_running_not_for_the_units_queued_behind_it(tmp_path: Path) -> None:
    db = await StateDB.open(tmp_path / "sabha.db", [*BOARD_MIGRATIONS, *all_migrations()])
    try:
        inbox = Inbox(db, "slack")
        order: list[str] = []
        running = asyncio.Event()
        release = asyncio.Event()

        async def background(name: str, hold: bool = False) -> None:
            async with db.transaction() as tx:  # e.g. the recall index, a turn's bookkeeping
                order.append(name)
                await tx.execute("SELECT 1")
                if hold:
                    running.set()
                    await release.wait()

        async def claim() -> None:
            envelope = Envelope(channel="slack", text="hello", sender="U1", chat_id="D1", message_id="D1/1.000001")
            assert len(await inbox.store([Arrival(envelope, "D1")])) == 1
            order.append("claim")

        first = asyncio.create_task(background("running", hold=True))
        await running.wait()
        queued = [asyncio.create_task(background(f"queued {n}")) for n in range(3)]
        await asyncio.sleep(0)  # they wait for the lock now
        claiming = asyncio.create_task(claim())
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, *queued, claiming)
        assert order[:2] == ["running", "claim"], f"the claim waited for the queue: {order}"
    finally:
        await db.close()


async def test_a_waiter_cancelled_as_it_was_handed_the_lock_passes_it_on() -> None:
    from board.storage.sqlite import UnitLock

    lock = UnitLock()
    await lock.acquire()
    handed = asyncio.create_task(lock.acquire(urgent=True))
    later = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # handed to the urgent waiter ...
    handed.cancel()  # ... which is cancelled before it runs
    await asyncio.gather(handed, return_exceptions=True)
    await asyncio.wait_for(later, 30)  # the lock went on, not lost
    assert lock.locked()
    lock.release()
    assert not lock.locked()
