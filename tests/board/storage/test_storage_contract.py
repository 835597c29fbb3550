"""One suite over every storage backend (SQLite and a real PostgreSQL): what a store may rely on from
:class:`board.storage.Database`, whichever backend is configured. Parametrised, not copied: a store moved
onto the protocol gets its own suite the same way (see notes/storage.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from board.db import Migration
from board.storage import Database, Dialect, DuplicateKey, StorageError, Work, parse_state_url
from board.storage.postgres import PostgresDatabase
from board.storage.sqlite import SqliteDatabase
from tests.support.pg import fresh_database

#: The same step in each dialect (as a store's migrations/ and migrations/postgres/ would hold it).
STEP = {
    Dialect.SQLITE: Migration("0001_items", "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                                            "key TEXT NOT NULL UNIQUE, n INTEGER NOT NULL DEFAULT 0);"),
    Dialect.POSTGRES: Migration("0001_items", "CREATE TABLE items (id BIGSERIAL PRIMARY KEY, "
                                              "key TEXT NOT NULL UNIQUE, n INTEGER NOT NULL DEFAULT 0);"),
}


@pytest.fixture(params=[Dialect.SQLITE, Dialect.POSTGRES], ids=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    async with contextlib.AsyncExitStack() as stack:
        if request.param is Dialect.SQLITE:
            db: Database = await SqliteDatabase.open(tmp_path / "state.db", [STEP[Dialect.SQLITE]])
        else:
            server = request.getfixturevalue("pg_server")  # only the postgres runs need (or skip without) one
            url = parse_state_url(await stack.enter_async_context(fresh_database(server)), data_dir=tmp_path, env={})
            db = await PostgresDatabase.open(url, [STEP[Dialect.POSTGRES]])
        try:
            yield db
        finally:
            await db.close()


async def test_rows_come_back_by_column_name(database: Database) -> None:
    await database.execute("INSERT INTO items(key, n) VALUES (?, ?)", ("a", 1))
    await database.execute("INSERT INTO items(key, n) VALUES (?, ?)", ("b", 2))
    rows = await database.fetchall("SELECT key, n FROM items ORDER BY key")
    assert [dict(r) for r in rows] == [{"key": "a", "n": 1}, {"key": "b", "n": 2}]
    assert (rows[0][0], rows[0]["n"]) == ("a", 1)
    assert await database.fetchone("SELECT n FROM items WHERE key = ?", ("zz",)) is None


async def test_insert_on_conflict_and_returning_work_alike(database: Database) -> None:
    """The two idioms the intake's receipt needs: insert unless there, and learn whether it was new."""
    first = await database.fetchone("INSERT INTO items(key) VALUES (?) ON CONFLICT (key) DO NOTHING RETURNING id",
                                    ("msg-1",))
    again = await database.fetchone("INSERT INTO items(key) VALUES (?) ON CONFLICT (key) DO NOTHING RETURNING id",
                                    ("msg-1",))
    assert first is not None and again is None
    with pytest.raises(DuplicateKey):
        await database.execute("INSERT INTO items(key) VALUES (?)", ("msg-1",))


async def test_a_transaction_is_all_or_nothing(database: Database) -> None:
    async with database.transaction() as tx:
        await tx.execute("INSERT INTO items(key) VALUES (?)", ("kept",))
        assert dict(await tx.fetchone("SELECT key FROM items WHERE key = ?", ("kept",)) or {}) == {"key": "kept"}
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with database.transaction() as tx:
            await tx.execute("INSERT INTO items(key) VALUES (?)", ("dropped",))
            raise RuntimeError("changed my mind")
    assert [r["key"] for r in await database.fetchall("SELECT key FROM items")] == ["kept"]


async def test_concurrent_claims_of_one_row_succeed_once(database: Database) -> None:
    """Scheduled work and inbox rows are claimed with one conditional UPDATE: of many claimers at once,
    exactly one wins, on either backend."""
    await database.execute("INSERT INTO items(key, n) VALUES (?, 0)", ("work",))

    async def claim(who: int) -> bool:
        async with database.transaction() as tx:
            row = await tx.fetchone("UPDATE items SET n = ? WHERE key = ? AND n = 0 RETURNING id", (who, "work"))
            return row is not None

    wins = await asyncio.gather(*(claim(who) for who in range(1, 9)))
    assert sum(wins) == 1
    row: Any = await database.fetchone("SELECT n FROM items WHERE key = ?", ("work",))
    assert row["n"] == wins.index(True) + 1


async def test_ping_answers_while_the_backend_is_there_and_fails_once_it_is_gone(database: Database) -> None:
    """What /readyz asks of the state: ping returns while the backend answers and raises once it does not (here:
    closed), so a replica whose state is gone is not reported ready."""
    assert await database.ping() is None
    await database.close()
    # PostgreSQL: StorageError ("... is not available"); SQLite: aiosqlite's ValueError("Connection closed")
    with pytest.raises((StorageError, ValueError)):
        await database.ping()


async def test_a_full_sqlite_disk_is_a_storage_outage_not_a_bug(tmp_path: Path) -> None:
    db = await SqliteDatabase.open(tmp_path / "state.db", [STEP[Dialect.SQLITE]])
    try:
        await db.pragma("max_page_count = 1")  # nothing more fits
        with pytest.raises(StorageError) as caught:
            async with db.transaction() as tx:
                for n in range(200):
                    await tx.execute("INSERT INTO items(key) VALUES (?)", ("x" * 500 + str(n),))
        assert caught.value.retryable
    finally:
        await db.close()


async def test_a_known_secret_in_a_written_value_is_stored_masked(database: Database) -> None:
    """An error text that echoes an API key must not land in the state store, whichever backend it is."""
    from board.masking import REDACTOR

    secret = "sk-test-" + "7" * 40
    REDACTOR.add([secret])
    try:
        await database.execute("INSERT INTO items(key) VALUES (?)", (f"provider said: bad key {secret}",))
        async with database.transaction() as tx:
            await tx.execute("INSERT INTO items(key) VALUES (?)", (f"in a transaction: {secret}",))
    finally:
        REDACTOR.clear()
    keys = [str(r["key"]) for r in await database.fetchall("SELECT key FROM items ORDER BY id")]
    assert keys == ["provider said: bad key ***", "in a transaction: ***"]


def _counted(keys: list[str], then_fail: bool = False) -> Work[list[str]]:
    """A unit that inserts ``keys`` one statement each, reads each insert's rows back, and optionally breaks."""
    got: list[str] = []
    for key in keys:
        rows = yield ("INSERT INTO items(key) VALUES (?) RETURNING key", (key,))
        got.extend(str(r["key"]) for r in rows)
    if then_fail:
        yield ("INSERT INTO items(key) VALUES (?)", (keys[0],))  # a duplicate: the whole unit is undone
    return got


@pytest.mark.parametrize("urgent", [False, True], ids=["queued", "urgent"])
async def test_a_unit_of_work_is_all_or_nothing_and_sees_each_statement_s_rows(database: Database,
                                                                               urgent: bool) -> None:
    """:meth:`Database.unit`, the one way a store makes a write that is waited for (the intake's claim, a meeting
    post's mark, the recall index's pass): each statement's rows are sent back to the unit, all of it commits
    together, a broken key undoes all of it and is the layer's :class:`DuplicateKey`, on either backend."""
    assert await database.unit(_counted(["a", "b"]), urgent=urgent) == ["a", "b"]
    with pytest.raises(DuplicateKey):
        await database.unit(_counted(["c", "d"], then_fail=True), urgent=urgent)
    rows = await database.unit(("SELECT key FROM items WHERE key > ? ORDER BY key", ("a",)), urgent=urgent)
    assert [r["key"] for r in rows] == ["b"]  # one statement: its rows; 'c' and 'd' were rolled back
    with pytest.raises(DuplicateKey):
        await database.unit(("INSERT INTO items(key) VALUES (?)", ("a",)), urgent=urgent)


async def test_a_unit_of_work_stores_a_known_secret_masked(database: Database) -> None:
    from board.masking import REDACTOR

    secret = "sk-test-" + "8" * 40
    REDACTOR.add([secret])
    try:
        await database.unit(_counted([f"unit: {secret}"]))
        await database.unit(("INSERT INTO items(key) VALUES (?)", (f"one: {secret}",)), urgent=True)
    finally:
        REDACTOR.clear()
    assert [str(r["key"]) for r in await database.fetchall("SELECT key FROM items ORDER BY id")] == \
        ["unit: ***", "one: ***"]


async def test_a_full_sqlite_disk_under_a_unit_of_work_is_a_storage_outage(tmp_path: Path) -> None:
    db = await SqliteDatabase.open(tmp_path / "state.db", [STEP[Dialect.SQLITE]])
    try:
        await db.pragma("max_page_count = 1")
        with pytest.raises(StorageError) as caught:
            await db.unit(_counted(["x" * 500 + str(n) for n in range(200)]), urgent=True)
        assert caught.value.retryable
    finally:
        await db.close()
