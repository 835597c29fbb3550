"""The replicas' registry (heartbeat rows, a name used twice refused), the Telegram polling leader (advisory lock on
a dedicated connection; a standby takes over when the leader's session ends) and the status block, on both
backends."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from board.clock import FakeClock
from board.storage import Database, Dialect, parse_state_url
from bot.replicas.leader import AdvisoryLockLeader, AlwaysLeader
from bot.replicas.migrations import MIGRATIONS as REPLICA_MIGRATIONS
from bot.replicas.registry import (
    Heartbeat,
    ReplicaIdentity,
    ReplicaNameTaken,
    alive_replicas,
    default_name,
    register,
)
from bot.replicas.service import ReplicaService
from bot.replicas.status import read_report, report_lines

pytestmark = pytest.mark.backends

INBOX = ("CREATE TABLE inbound_messages (channel TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL, "
         "status TEXT NOT NULL)")  # the columns the backlog reads (the intake owns the real table)


def me(name: str, pid: int = 100, host: str = "h1") -> ReplicaIdentity:
    return ReplicaIdentity(name, host, pid, "2026-11-25T10:00:00+00:00")


async def replicas_db(database_with: Any) -> Database:
    db: Database = await database_with(REPLICA_MIGRATIONS)
    return db


def test_default_name_is_host_and_pid() -> None:
    assert default_name("", host="box", pid=42) == "box-42"
    assert default_name("  eu-1 ", host="box", pid=42) == "eu-1"


async def test_register_beat_and_alive(database_with: Any) -> None:
    db = await replicas_db(database_with)
    await register(db, me("a"), now=1000.0, lease_s=15)
    await register(db, me("b", pid=200), now=1001.0, lease_s=15)
    alive = await alive_replicas(db, now=1010.0, lease_s=15)
    assert [(r.name, r.pid, r.polling) for r in alive] == [("a", 100, False), ("b", 200, False)]
    assert [r.name for r in await alive_replicas(db, now=1015.5, lease_s=15)] == ["b"]  # a not seen for 15.5 s


async def test_same_name_twice_is_refused_while_the_first_lives(database_with: Any, backend: Dialect) -> None:
    db = await replicas_db(database_with)
    await register(db, me("eu-1", pid=100), now=1000.0, lease_s=15)
    if backend is Dialect.SQLITE:  # one process per SQLite state: a row left behind is always taken over
        await register(db, me("eu-1", pid=101), now=1001.0, lease_s=15)
        return
    with pytest.raises(ReplicaNameTaken) as refused:
        await register(db, me("eu-1", pid=101, host="h2"), now=1005.0, lease_s=15)
    text = str(refused.value)
    assert "eu-1" in text and "pid 100 on h1" in text and "replicas.name" in text and "\n" not in text
    await register(db, me("eu-1", pid=101, host="h2"), now=1016.0, lease_s=15)  # the first died: taken over
    (row,) = await alive_replicas(db, now=1016.0, lease_s=15)
    assert (row.host, row.pid) == ("h2", 101)


async def test_heartbeat_keeps_the_row_fresh_and_removes_it_at_stop(database_with: Any) -> None:
    db = await replicas_db(database_with)
    clock = FakeClock()
    beat = Heartbeat(db, me("a"), clock, lease_s=1.5)  # a beat every 0.5 s
    await beat.start()
    try:
        clock.advance(10)
        beat.set_polling(True)  # written at once, not at the next interval
        for _ in range(100):
            rows = await alive_replicas(db, now=clock.now().timestamp(), lease_s=1.5)
            if rows and rows[0].polling:
                break
            await asyncio.sleep(0.02)
        assert [(r.name, r.polling) for r in rows] == [("a", True)]
    finally:
        await beat.stop()
    assert await db.fetchall("SELECT name FROM replicas") == []


async def test_status_lists_replicas_leases_and_backlog(database_with: Any) -> None:
    db = await replicas_db(database_with)
    now = time.time()
    await register(db, me("a"), now=now - 2, lease_s=15)
    await db.execute("UPDATE replicas SET polling = 1 WHERE name = 'a'")
    await register(db, me("gone", pid=7), now=now - 60, lease_s=15)
    report = await read_report(db, now=now, lease_s=15) if await _with_inbox(db) else None
    assert report is not None
    text = "\n".join(report_lines(report))
    assert "Replicas: 1 alive; a polls Telegram" in text
    assert "a: pid 100 on h1, since 2026-11-25T10:00:00+00:00, last seen 2.0 s ago" in text
    assert "polling Telegram; no leases" in text and "gone" not in text
    assert "no leases table" in text  # the intake's leases table is not in this state
    assert "Backlog: 2 inbound message(s) not answered yet (received 1, sending 1)" in text
    await db.execute("CREATE TABLE leases (key TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at DOUBLE PRECISION "
                     "NOT NULL, taken_at TEXT NOT NULL)")
    for key, holder, expires in (("board:general:wa-1", "a", now + 9), ("board:general:wa-2", "a", now - 1),
                                 ("board:critic:tg-5", "gone", now + 3)):
        await db.execute("INSERT INTO leases (key, holder, expires_at, taken_at) VALUES (?, ?, ?, ?)",
                         (key, holder, expires, "2026-11-25T10:00:00+00:00"))
    report = await read_report(db, now=now, lease_s=15)
    text = "\n".join(report_lines(report))
    assert "1 lease(s): board:general:wa-1 (9 s left)" in text  # the expired one is not held any more
    assert "gone (not alive): 1 lease(s): board:critic:tg-5 (3 s left)" in text
    assert report.as_json()["replicas"][0]["name"] == "a"


async def _with_inbox(db: Database) -> bool:
    await db.execute(INBOX)
    for n, status in enumerate(("received", "sending", "answered")):
        await db.execute("INSERT INTO inbound_messages (channel, chat_id, message_id, status) VALUES (?, ?, ?, ?)",
                         ("whatsapp", "1", str(n), status))
    return True


# -- the polling leader ----------------------------------------------------------------------------------------


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


async def test_sqlite_always_leads(database_with: Any, backend: Dialect) -> None:
    if backend is not Dialect.SQLITE:
        pytest.skip("SQLite only: one process")
    db = await replicas_db(database_with)
    service = ReplicaService(db, FakeClock(), name="solo", lease_s=3, elect_poller=True)
    await service.start()
    try:
        assert isinstance(service.leader, AlwaysLeader) and service.leadership is not None
        assert service.leadership.leading
        await _until(lambda: service.heartbeat.polling)
    finally:
        await service.stop()


async def test_one_leader_and_a_standby_takes_over(database_with: Any, backend: Dialect) -> None:
    if backend is not Dialect.POSTGRES:
        pytest.skip("PostgreSQL only: the advisory lock")
    db = await replicas_db(database_with)
    url = getattr(db, "url")  # noqa: B009 - PostgresDatabase's
    first = AdvisoryLockLeader(url, "first", retry_s=0.1)
    second = AdvisoryLockLeader(url, "second", retry_s=0.1)
    third = AdvisoryLockLeader(url, "third", retry_s=0.1)
    await first.start()
    await _until(lambda: first.leading)
    await second.start()
    try:
        await asyncio.sleep(0.5)
        assert first.leading and not second.leading  # one poller
        await third.start()
        await asyncio.sleep(0.3)
        assert first._task is not None and first._conn is not None
        first._task.cancel()  # the leader dies as kill -9 ends it: no goodbye, its connection just closes
        first._conn.terminate()
        await _until(lambda: second.leading or third.leading, timeout=5)
        await asyncio.sleep(0.5)
        assert second.leading != third.leading  # exactly one of the standbys took over
        standby, leader = (third, second) if second.leading else (second, third)
        await leader.stop()
        await _until(lambda: standby.leading, timeout=5)  # a clean stop frees it at once
        await standby.stop()
    finally:
        for each in (first, second, third):
            await each.stop()


async def test_a_frozen_leader_loses_the_lock_and_a_standby_takes_over(database_with: Any, backend: Dialect) -> None:
    """A leader stopped dead (SIGSTOP, a hung event loop) kept its lock for ever: its host still answers TCP
    keepalives, so its session lived and no standby could poll. The lock session ends on the server once it is idle
    for ``idle_s`` (a live leader checks it every ``retry_s``), and the leader, back, knows it lost."""
    if backend is not Dialect.POSTGRES:
        pytest.skip("PostgreSQL only: the advisory lock")
    db = await replicas_db(database_with)
    url = getattr(db, "url")  # noqa: B009 - PostgresDatabase's
    first = AdvisoryLockLeader(url, "first", retry_s=0.1, idle_s=1.0)
    second = AdvisoryLockLeader(url, "second", retry_s=0.1, idle_s=1.0)
    await first.start()
    await _until(lambda: first.leading)
    await second.start()
    try:
        await asyncio.sleep(1.5)  # a live leader, checking its lock every 0.1 s, keeps it past idle_s
        assert first.leading and not second.leading
        assert first._task is not None
        first._task.cancel()  # frozen: nothing runs, its connection stays open
        with contextlib.suppress(asyncio.CancelledError):
            await first._task
        await _until(lambda: second.leading, timeout=10)
        await first.start()  # it thaws: its first check finds the session gone, so it stands by
        await _until(lambda: not first.leading, timeout=5)
        await asyncio.sleep(0.5)
        assert second.leading and not first.leading
    finally:
        await first.stop()
        await second.stop()


async def test_leader_that_cannot_reach_postgres_stands_by(backend: Dialect, data_dir: Any) -> None:
    if backend is not Dialect.POSTGRES:
        pytest.skip("PostgreSQL only: the advisory lock")
    url = parse_state_url("postgresql://sabha@127.0.0.1:9/nowhere", data_dir=data_dir, env={})  # nothing listens
    leader = AdvisoryLockLeader(url, "lonely", retry_s=0.1)
    await leader.start()
    try:
        await _until(lambda: leader.problem is not None)
        assert not leader.leading
    finally:
        await leader.stop()


async def test_a_named_replica_restarted_on_its_host_after_a_kill_takes_its_name_back_at_once(
        database_with: Any, backend: Dialect) -> None:
    """systemd restarts a killed replica 5 s later under the same replicas.name: its dead predecessor's row (same
    host, a pid that no longer runs) must not keep it out for lease_s (exit 2 would stop systemd's restarts)."""
    import socket
    import sys

    db = await replicas_db(database_with)
    host = socket.gethostname()
    gone = await asyncio.create_subprocess_exec(sys.executable, "-c", "import os; print(os.getpid())",
                                                stdout=asyncio.subprocess.PIPE)
    dead_pid = int((await gone.communicate())[0])
    await register(db, me("eu-1", pid=dead_pid, host=host), now=1000.0, lease_s=15)
    await register(db, me("eu-1", pid=dead_pid + 100_000, host=host), now=1005.0, lease_s=15)  # taken over
    (row,) = await alive_replicas(db, now=1005.0, lease_s=15)
    assert row.pid == dead_pid + 100_000
    if backend is Dialect.POSTGRES:  # a predecessor on this host that still runs keeps its name
        import os

        await register(db, me("eu-2", pid=os.getpid(), host=host), now=1006.0, lease_s=15)
        with pytest.raises(ReplicaNameTaken):
            await register(db, me("eu-2", pid=dead_pid, host=host), now=1007.0, lease_s=15)


async def test_the_leaders_lock_session_ends_soon_when_its_host_goes_away(database_with: Any,
                                                                          backend: Dialect) -> None:
    """A dead host's session (and the lock in it) must not outlive it by the kernel's 2-hour keepalive: the lock
    connection asks the server for keepalives every few seconds."""
    if backend is not Dialect.POSTGRES:
        pytest.skip("PostgreSQL only: the advisory lock")
    db = await replicas_db(database_with)
    leader = AdvisoryLockLeader(getattr(db, "url"), "first", retry_s=0.1)  # noqa: B009 - PostgresDatabase's
    await leader.start()
    try:
        await _until(lambda: leader.leading)
        conn = leader._conn
        assert conn is not None
        idle = int(await conn.fetchval("SHOW tcp_keepalives_idle"))
        interval = int(await conn.fetchval("SHOW tcp_keepalives_interval"))
        count = int(await conn.fetchval("SHOW tcp_keepalives_count"))
        assert 0 < idle + interval * count <= 15
    finally:
        await leader.stop()
