"""The PostgreSQL backend against a real server (Debian's postgresql, a throwaway cluster: tests/support/pg.py):
migrations once under an advisory lock even when replicas start together, transactions, placeholders,
a newer database refused, and an unreachable or stopped server reported as a storage outage, not a crash."""

from __future__ import annotations

import asyncio
import traceback
from pathlib import Path

import pytest

from board.db import Migration, MigrationError
from board.storage import Dialect, DuplicateKey, StorageError, parse_state_url
from board.storage.migrations import load_dialect_migrations
from board.storage.postgres import PostgresDatabase
from board.storage.sql import numbered
from tests.support.pg import PgServer

STEPS = (
    Migration("0001_notes", "CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL UNIQUE);"),
    # slow on purpose: two replicas starting together must not both run it
    Migration("0002_notes_at", "SELECT pg_sleep(0.3); ALTER TABLE notes ADD COLUMN at TEXT;"),
)


async def test_replicas_starting_together_migrate_once(pg_url: str) -> None:
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    first, second, third = await asyncio.gather(*(PostgresDatabase.open(url, STEPS) for _ in range(3)))
    try:
        rows = await first.fetchall("SELECT name FROM schema_migrations ORDER BY name")
        assert [r["name"] for r in rows] == ["0001_notes", "0002_notes_at"]  # each step once, no error
        await second.execute("INSERT INTO notes(body, at) VALUES (?, ?)", ("what? a '?' stays", "now"))
        row = await third.fetchone("SELECT body, at FROM notes WHERE body = ?", ("what? a '?' stays",))
        assert dict(row or {}) == {"body": "what? a '?' stays", "at": "now"}
    finally:
        for db in (first, second, third):
            await db.close()


async def test_a_transaction_commits_together_or_not_at_all(pg_url: str) -> None:
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    db = await PostgresDatabase.open(url, STEPS)
    try:
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO notes(body) VALUES (?)", ("one",))
            await tx.execute("INSERT INTO notes(body) VALUES (?)", ("two",))
        with pytest.raises(DuplicateKey):
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO notes(body) VALUES (?)", ("three",))
                await tx.execute("INSERT INTO notes(body) VALUES (?)", ("one",))  # breaks the unique key
        rows = await db.fetchall("SELECT body FROM notes ORDER BY id")
        assert [r["body"] for r in rows] == ["one", "two"]  # "three" went with the failed transaction
    finally:
        await db.close()


async def test_a_database_from_a_newer_sabha_is_refused(pg_url: str) -> None:
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    newer = await PostgresDatabase.open(url, (*STEPS, Migration("0003_future", "SELECT 1;")))
    await newer.close()
    with pytest.raises(MigrationError, match=r"0003_future.*upgrade Sabha"):
        await PostgresDatabase.open(url, STEPS)


async def test_a_failing_step_rolls_the_whole_start_back(pg_url: str) -> None:
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    broken = (STEPS[0], Migration("0002_broken", "ALTER TABLE nowhere ADD COLUMN x TEXT;"))
    with pytest.raises(Exception, match="nowhere"):
        await PostgresDatabase.open(url, broken)
    db = await PostgresDatabase.open(url, STEPS)  # the next start applies both steps
    try:
        assert len(await db.fetchall("SELECT name FROM schema_migrations")) == 2
    finally:
        await db.close()


async def test_a_server_that_is_not_there_is_a_storage_outage() -> None:
    url = parse_state_url("postgresql://sabha@127.0.0.1:9/none", data_dir=Path("/nonexistent"), env={})
    with pytest.raises(StorageError) as caught:
        await PostgresDatabase.open(url, STEPS)
    assert caught.value.retryable and "127.0.0.1:9" in str(caught.value)


async def test_a_stopped_server_fails_ping_and_statements_then_recovers(pg_server: PgServer, pg_url: str) -> None:
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    db = await PostgresDatabase.open(url, STEPS)
    try:
        await db.ping()
        await asyncio.to_thread(pg_server.stop)
        try:
            with pytest.raises(StorageError) as caught:
                await db.ping()
            assert caught.value.retryable
            with pytest.raises(StorageError):
                await db.execute("INSERT INTO notes(body) VALUES (?)", ("lost?",))
        finally:
            await asyncio.to_thread(pg_server.start)
        for _ in range(50):  # the pool reconnects on its own once the server is back
            try:
                await db.execute("INSERT INTO notes(body) VALUES (?)", ("after",))
                break
            except StorageError:
                await asyncio.sleep(0.1)
        assert dict(await db.fetchone("SELECT body FROM notes") or {}) == {"body": "after"}
    finally:
        await db.close()


def test_placeholders_are_numbered_outside_quotes_and_comments() -> None:
    sql = "SELECT '?', \"a?\" FROM t -- why?\nWHERE a = ? AND b = ? /* ? */ AND c = 'it''s ?'"
    assert numbered(sql) == "SELECT '?', \"a?\" FROM t -- why?\nWHERE a = $1 AND b = $2 /* ? */ AND c = 'it''s ?'"


def test_the_url_keeps_the_password_out_of_the_config_and_out_of_sight() -> None:
    url = parse_state_url("postgresql://board@db.internal:6543/sabha", data_dir=Path("/d"),
                          env={"SABHA_DB_PASSWORD": "hunter2"})
    assert (url.dialect, url.host, url.port, url.user, url.database, url.password) == \
        (Dialect.POSTGRES, "db.internal", 6543, "board", "sabha", "hunter2")
    assert "hunter2" not in str(url) and "hunter2" not in repr(url)
    with pytest.raises(ValueError, match=r"must not carry the password.*SABHA_DB_PASSWORD"):
        parse_state_url("postgresql://board:hunter2@db/sabha", data_dir=Path("/d"), env={})
    with pytest.raises(ValueError, match="sqlite:/// or postgresql://"):
        parse_state_url("mysql://x/y", data_dir=Path("/d"), env={})
    assert parse_state_url("", data_dir=Path("/d"), env={}).path == Path("/d/sabha.db")
    assert parse_state_url("sqlite:///state/x.db", data_dir=Path("/d"), env={}).path == Path("/d/state/x.db")
    assert parse_state_url("sqlite:////abs/x.db", data_dir=Path("/d"), env={}).path == Path("/abs/x.db")


def test_a_store_without_its_postgres_migrations_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "halfmade_store" / "migrations"
    (package / "postgres").mkdir(parents=True)
    for folder in (package.parent, package):
        (folder / "__init__.py").write_text("")
    (package / "0001_items.sql").write_text("CREATE TABLE items (id INTEGER PRIMARY KEY);")
    (package / "0002_more.sql").write_text("ALTER TABLE items ADD COLUMN n INTEGER;")
    (package / "postgres" / "0001_items.sql").write_text("CREATE TABLE items (id BIGINT PRIMARY KEY);")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert len(load_dialect_migrations("halfmade_store.migrations", Dialect.SQLITE)) == 2
    with pytest.raises(MigrationError, match="no PostgreSQL migration for 0002_more"):
        load_dialect_migrations("halfmade_store.migrations", Dialect.POSTGRES)


def test_every_shipped_migration_has_its_postgres_twin() -> None:
    """Sabha opens on PostgreSQL only when every package's steps exist in both dialects, under the same names."""
    from board.app import BOARD_MIGRATIONS
    from board.storage.migrations import for_dialect
    from bot.app import all_migrations

    sqlite = [*BOARD_MIGRATIONS, *all_migrations()]
    postgres = for_dialect(sqlite, Dialect.POSTGRES)
    assert sorted(m.name for m in postgres) == sorted(m.name for m in sqlite)


async def test_a_restart_under_load_is_only_ever_a_storage_outage(pg_server: PgServer, pg_url: str) -> None:
    """Seen in the replica burst test: while the server restarted, handing a broken connection back to the pool
    raised asyncpg's InternalClientError ("cannot switch to state ...; another operation is in progress") out of
    a statement that had already finished (a webhook answered 500, a dispatcher pass died). Many writers hammer
    the server while it restarts: every failure must be a retryable StorageError, and a write that returned
    normally must be there afterwards."""
    url = parse_state_url(pg_url, data_dir=Path("/nonexistent"), env={})
    db = await PostgresDatabase.open(url, STEPS, min_size=4, max_size=8)
    unexpected: list[BaseException] = []
    done: list[str] = []
    stop = asyncio.Event()

    async def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            body = f"w{n}-{i}"
            i += 1
            try:
                async with db.transaction() as tx:
                    await tx.execute("INSERT INTO notes(body) VALUES (?)", (body,))
                    await tx.fetchone("SELECT count(*) FROM notes WHERE body = ?", (body,))
                done.append(body)
                await db.fetchall("SELECT body FROM notes WHERE body = ?", (body,))
            except StorageError as exc:
                if not exc.retryable:
                    unexpected.append(exc)
                await asyncio.sleep(0.01)
            except Exception as exc:  # noqa: BLE001 - a raw driver error escaping the storage layer
                unexpected.append(exc)
                await asyncio.sleep(0.01)

    try:
        tasks = [asyncio.create_task(writer(n)) for n in range(24)]
        for _ in range(3):
            await asyncio.sleep(0.3)
            await asyncio.to_thread(pg_server.stop, "fast")
            await asyncio.to_thread(pg_server.start)
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
        assert not unexpected, "".join(traceback.format_exception(unexpected[0]))
        for _ in range(50):
            try:
                stored = {r["body"] for r in await db.fetchall("SELECT body FROM notes")}
                break
            except StorageError:
                await asyncio.sleep(0.1)
        assert done and set(done) <= stored  # what returned normally was committed
    finally:
        await db.close()
