"""The state db's two connections: the main one (autocommit) and the express one for receipts."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from board.db import Migration, StateDB
from board.storage import DuplicateKey

TABLE = Migration("0001_items", "CREATE TABLE items (name TEXT PRIMARY KEY);")


async def names(db: StateDB) -> list[str]:
    return [row["name"] for row in await db.fetchall("SELECT name FROM items ORDER BY name")]


async def test_an_express_transaction_commits_all_or_nothing(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        def two(conn: sqlite3.Connection) -> int:
            conn.execute("INSERT INTO items VALUES ('a')")
            conn.execute("INSERT INTO items VALUES ('b')")
            return 2

        assert await db.express(two) == 2
        assert await names(db) == ["a", "b"]  # committed: the main connection sees them

        def half(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO items VALUES ('c')")
            conn.execute("INSERT INTO items VALUES ('a')")  # a duplicate: fails

        with pytest.raises(sqlite3.IntegrityError):
            await db.express(half)
        assert await names(db) == ["a", "b"]  # 'c' rolled back with it
        await db.execute("INSERT INTO items VALUES ('d')")  # and no lock is left behind
        assert await names(db) == ["a", "b", "d"]


async def test_a_receipt_does_not_wait_behind_the_main_connections_queue(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        order: list[str] = []

        async def slow_report() -> None:  # a long query on the main connection
            await db.fetchall("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) "
                              "SELECT COUNT(*) FROM n")
            order.append("report")

        async def receipt() -> None:
            await asyncio.sleep(0.01)  # queued after the report started
            await db.express(lambda conn: conn.execute("INSERT INTO items VALUES ('m1')"))
            order.append("receipt")

        await asyncio.gather(slow_report(), receipt())
        assert order == ["receipt", "report"]


async def test_a_statement_with_a_row_leaves_no_snapshot_that_blocks_later_writes(tmp_path: Path) -> None:
    # Seen: `PRAGMA max_page_count = N` run through execute() kept a read snapshot open on the
    # autocommit main connection; after the express connection wrote, every write of the main
    # connection failed with "database is locked".
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        await db.execute("PRAGMA max_page_count = 1073741823")  # returns a row
        await db.express(lambda conn: conn.execute("INSERT INTO items VALUES ('express')"))
        await db.execute("INSERT INTO items VALUES ('main')")
        assert await names(db) == ["express", "main"]


async def test_a_read_interleaved_with_a_write_on_the_main_connection_never_locks_it(tmp_path: Path) -> None:
    # Seen in benchmarks/webhook.py: 18 answers failed at once with "database is locked" while
    # receipts were being stored. A read taken with fetchall() ran as three steps on the main
    # connection (execute, fetch, close); another coroutine's write queued between them ran
    # while the read still held its snapshot, and once the express connection had committed in
    # the meantime SQLite refused the write at once (a stale snapshot cannot be upgraded; no
    # busy timeout helps). Here the express commit lands exactly mid-read: the query calls a
    # function that stores a receipt after its first row.
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        await db.execute("INSERT INTO items VALUES ('a'), ('b'), ('c')")
        other = sqlite3.connect(tmp_path / "state.db", isolation_level=None, check_same_thread=False)
        stored = []

        def receipt_meanwhile(name: str) -> str:
            if not stored:  # a receipt committed by another connection while the read is under way
                other.execute("INSERT INTO items VALUES ('receipt')")
                stored.append(name)
            return name

        await db.conn.create_function("receipt_meanwhile", 1, receipt_meanwhile)
        read = asyncio.ensure_future(db.fetchall("SELECT receipt_meanwhile(name) FROM items WHERE name < 'd'"))
        await asyncio.sleep(0)  # the read is queued first, the write right behind it
        write = asyncio.ensure_future(db.execute("INSERT INTO items VALUES ('written')"))
        rows = await read
        await write
        other.close()
        assert [row[0] for row in rows] == ["a", "b", "c"]
        assert await names(db) == ["a", "b", "c", "receipt", "written"]


async def test_a_full_disk_fails_the_receipt_and_frees_the_lock_once_space_returns(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        await db.express(lambda conn: conn.execute("INSERT INTO items VALUES ('first')"))
        await db.pragma("max_page_count = 1")  # every connection, the express one included
        with pytest.raises(sqlite3.OperationalError, match="full"):
            await db.express(lambda conn: conn.executemany(
                "INSERT INTO items VALUES (?)", [(f"{i:0>3000}",) for i in range(50)]))
        await db.pragma("max_page_count = 1073741823")
        await db.execute("INSERT INTO items VALUES ('main')")  # not "database is locked"
        await db.express(lambda conn: conn.execute("INSERT INTO items VALUES ('later')"))
        assert await names(db) == ["first", "later", "main"]


async def test_a_state_db_with_nothing_pending_is_checked_in_one_statement(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: every start reads which migrations are applied; with nothing pending that one read is all
    (no CREATE TABLE IF NOT EXISTS first). A new migration is still applied on the next open, and a new
    file still gets the table. Counted by SQLite's own statement trace on every connection opened."""
    from board.app import BOARD_MIGRATIONS

    seen: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)  # type: ignore[call-overload]
        conn.set_trace_callback(seen.append)
        return conn

    path = tmp_path / "state.db"
    async with await StateDB.open(path, [*BOARD_MIGRATIONS, TABLE]):
        pass
    monkeypatch.setattr(sqlite3, "connect", traced)
    async with await StateDB.open(path, [*BOARD_MIGRATIONS, TABLE]) as db:
        assert await names(db) == []
    about = [s for s in seen if "schema_migrations" in s]
    assert about == ["SELECT name FROM schema_migrations"], about
    assert not [s for s in seen if s.lstrip().upper().startswith(("CREATE", "BEGIN"))], seen

    seen.clear()
    later = Migration("0002_more", "CREATE TABLE more_items (name TEXT PRIMARY KEY);")
    async with await StateDB.open(path, [*BOARD_MIGRATIONS, TABLE, later]) as db:
        assert await db.fetchall("SELECT name FROM more_items") == []
    assert any("0002_more" in s for s in seen if "INSERT INTO schema_migrations" in s)
    async with await StateDB.open(tmp_path / "new.db", [TABLE]) as db:
        assert [r["name"] for r in await db.fetchall("SELECT name FROM schema_migrations")] == ["0001_items"]


async def test_a_transaction_begins_in_the_step_of_its_first_statement(tmp_path: Path) -> None:
    """meet47: a transaction's BEGIN goes to the express thread with its first statement, not as a step of its own
    (a meeting's round end waits for every step: each is a hand-off to that thread and back, longer on a busy CPU);
    a failing statement still rolls back the whole, and a block with no statement costs no step."""
    async with await StateDB.open(tmp_path / "state.db", [TABLE]) as db:
        steps = 0
        real = db.on_express

        async def counted(step):  # type: ignore[no-untyped-def]
            nonlocal steps
            steps += 1
            return await real(step)

        db.on_express = counted  # type: ignore[method-assign]
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO items VALUES ('a')")
            await tx.execute("INSERT INTO items VALUES ('b')")
        assert steps == 3  # BEGIN + 'a' in one, 'b', COMMIT
        assert await names(db) == ["a", "b"]

        steps = 0
        async with db.transaction():
            pass
        assert steps == 0

        with pytest.raises(DuplicateKey):
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO items VALUES ('c')")
                await tx.execute("INSERT INTO items VALUES ('a')")  # a duplicate: fails
        assert await names(db) == ["a", "b"]  # 'c' rolled back with it
        async with db.transaction() as tx:  # and no lock or open transaction is left behind
            await tx.execute("INSERT INTO items VALUES ('d')")
        assert await names(db) == ["a", "b", "d"]
