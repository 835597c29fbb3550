"""Leases (board.storage.leases) on SQLite and a real PostgreSQL: of holders racing for a key exactly one wins;
an expired lease hands over; renewing keeps it; releasing lets another take it at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from board.clock import FakeClock
from board.storage import Database, Dialect, Leases
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends


@pytest.fixture
async def db(database_with: Any) -> Database:
    database: Database = await database_with(INTAKE_MIGRATIONS)
    return database


async def test_holders_racing_for_a_free_key_exactly_one_wins(db: Database, backend: Dialect) -> None:
    clock = FakeClock()
    holders = [Leases(db, f"replica-{n}", 15, clock) for n in range(6)]
    for round_ in range(5):
        key = f"lane:chat-{round_}"
        won = await asyncio.gather(*(h.take(key) for h in holders))
        assert sum(won) == 1, won
        winner = holders[won.index(True)]
        assert winner.holds(key)
        rows = await db.fetchall("SELECT holder FROM leases WHERE key = ?", (key,))
        assert [r["holder"] for r in rows] == [winner.holder]
        assert not any(h.holds(key) for h in holders if h is not winner)


async def test_an_expired_lease_hands_over_and_renewing_keeps_it(db: Database) -> None:
    clock = FakeClock()
    a, b = Leases(db, "a", 15, clock), Leases(db, "b", 15, clock)
    assert await a.take("lane:1") and await a.take("lane:2")
    assert not await b.take("lane:1")
    clock.advance(10)
    assert await a.renew() == {"lane:1", "lane:2"}  # a heartbeat: both extended to now + 15
    clock.advance(10)  # 20 s after taking, 10 after the renewal: still a's
    assert not await b.take("lane:1")
    assert await a.take("lane:1")  # the holder takes its own key again (extends it)
    clock.advance(16)  # a stopped renewing (killed): both expired
    assert await b.take("lane:2")
    assert [lease.key for lease in await b.held()] == ["lane:2"]
    assert await a.renew() == {"lane:1"}  # a lost lane:2 (logged), keeps what nobody took
    assert not a.holds("lane:2") and a.holds("lane:1")
    held = await a.held()
    assert [(x.key, x.holder) for x in held] == [("lane:1", "a")]
    assert held[0].expires_at == pytest.approx(clock.now().timestamp() + 15)
    await a.close()


async def test_renewal_does_not_wait_for_a_pool_that_turns_hold(db: Database, backend: Dialect) -> None:
    """Under load every pooled connection was seen busy with turns' statements for longer than a lease: renewal
    waited behind them and the leases expired. On PostgreSQL it runs on a connection of its own."""
    if backend is not Dialect.POSTGRES:
        pytest.skip("SQLite has no pool: one process, one connection")
    from board.storage.postgres import PostgresDatabase

    assert isinstance(db, PostgresDatabase)
    clock = FakeClock()
    a = Leases(db, "a", 3, clock)
    assert await a.take("lane:1")
    held = [await db.pool.acquire() for _ in range(db.pool.get_max_size())]  # every pooled connection busy
    try:
        clock.advance(2)
        assert await a.renew() == {"lane:1"}  # within a heartbeat (1 s), or it raises a retryable StorageError
    finally:
        for conn in held:
            await db.pool.release(conn)
        await a.close()
    rows = await db.fetchall("SELECT expires_at FROM leases WHERE key = 'lane:1'")
    assert float(rows[0]["expires_at"]) == pytest.approx(clock.now().timestamp() + 3)


async def test_release_lets_another_take_it_at_once(db: Database) -> None:
    clock = FakeClock()
    a, b = Leases(db, "a", 15, clock), Leases(db, "b", 15, clock)
    assert await a.take("lane:x")
    await b.release("lane:x")  # not b's: nothing happens
    assert not await b.take("lane:x")
    await a.release("lane:x")
    assert not a.holds("lane:x")
    assert await b.take("lane:x")
    await a.take("lane:y")
    await a.release_all()
    assert await b.take("lane:y")
    assert await b.take_over_all() == 2
    assert await db.fetchall("SELECT key FROM leases") == []


def test_a_lease_must_last() -> None:
    with pytest.raises(ValueError):
        Leases(object(), "a", 0)  # type: ignore[arg-type]
