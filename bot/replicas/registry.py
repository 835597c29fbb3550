"""This replica's identity on the shared state, and its heartbeat: the ``replicas`` table.

Every ``sabha run`` registers one row (``name``, ``host``, ``pid``, ``started_at``) and renews ``seen_at``
(epoch seconds from the board's clock) every ``lease_s / 3``; a replica is *alive* while it was seen
within ``replicas.lease_s``. ``sabha status`` lists the alive ones (:func:`alive_replicas`).

The name is ``replicas.name`` or ``<hostname>-<pid>``. Registering takes the row only when no live
replica holds that name (one ``INSERT ... ON CONFLICT DO UPDATE ... WHERE seen_at < cutoff``): a second
process started with the same configured name while the first runs is refused with
:class:`ReplicaNameTaken` (one line, the fix). On SQLite only one process can use the state (its data
dir lock), so a row left by a killed predecessor is always taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from dataclasses import dataclass

from board.clock import Clock
from board.storage import Database, Dialect, StorageError
from bot.ops.runtime import pid_alive

__all__ = ["HEARTBEATS_PER_LEASE", "Heartbeat", "ReplicaIdentity", "ReplicaNameTaken", "ReplicaRow", "alive_replicas",
           "beat", "default_name", "identity", "register",
           "unregister"]

log = logging.getLogger("sabha.replicas")

#: The heartbeat renews ``seen_at`` this many times per ``lease_s``.
HEARTBEATS_PER_LEASE = 3


class ReplicaNameTaken(RuntimeError):
    """Another live replica runs under this replica's name (``replicas.name``)."""


@dataclass(frozen=True)
class ReplicaIdentity:
    """Who this process is among the replicas."""

    name: str
    host: str
    pid: int
    started_at: str  # ISO text, UTC


@dataclass(frozen=True)
class ReplicaRow:
    """One row of ``replicas`` as ``sabha status`` shows it."""

    name: str
    host: str
    pid: int
    started_at: str
    seen_at: float
    polling: bool


def default_name(configured: str = "", *, host: str | None = None, pid: int | None = None) -> str:
    """``replicas.name`` when set, else ``<hostname>-<pid>``."""
    if configured.strip():
        return configured.strip()
    return f"{host or socket.gethostname()}-{pid or os.getpid()}"


def identity(configured: str, clock: Clock) -> ReplicaIdentity:
    """This process's identity (its name from ``replicas.name`` or host and pid)."""
    host, pid = socket.gethostname(), os.getpid()
    return ReplicaIdentity(default_name(configured, host=host, pid=pid), host, pid,
                           clock.now().isoformat(timespec="seconds"))


async def register(db: Database, me: ReplicaIdentity, *, now: float, lease_s: float) -> None:
    """Take this replica's row; raise :class:`ReplicaNameTaken` when a live replica holds the name."""
    cutoff = now - lease_s if db.dialect is Dialect.POSTGRES else float("inf")  # SQLite: one process only
    row = await db.fetchone(
        "INSERT INTO replicas (name, host, pid, started_at, seen_at, polling) VALUES (?, ?, ?, ?, ?, 0) "
        "ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, "
        "started_at = excluded.started_at, seen_at = excluded.seen_at, polling = 0 "
        "WHERE replicas.seen_at < ? RETURNING name",
        (me.name, me.host, int(me.pid), me.started_at, float(now), float(cutoff)))
    if row is None:
        holder = await db.fetchone("SELECT host, pid, seen_at FROM replicas WHERE name = ?", (me.name,))
        if holder is not None and str(holder["host"]) == me.host and not pid_alive(int(holder["pid"])):
            # Its predecessor on this host was killed (systemd restarts it under the same name): take it back now.
            taken = await db.fetchone(
                "UPDATE replicas SET pid = ?, started_at = ?, seen_at = ?, polling = 0 "
                "WHERE name = ? AND host = ? AND pid = ? RETURNING name",
                (int(me.pid), me.started_at, float(now), me.name, me.host, int(holder["pid"])))
            if taken is not None:
                return
        where = f"pid {holder['pid']} on {holder['host']}, seen {now - float(holder['seen_at']):.0f} s ago" \
            if holder is not None else "another process"
        raise ReplicaNameTaken(
            f"another replica named {me.name!r} is running on this state ({where}): give each replica its own "
            f"replicas.name (or leave it empty for <host>-<pid>), or stop the other one first")


async def beat(db: Database, me: ReplicaIdentity, *, now: float, polling: bool) -> bool:
    """Renew ``seen_at`` (and ``polling``); False when the row is no longer this process's."""
    row = await db.fetchone("UPDATE replicas SET seen_at = ?, polling = ? WHERE name = ? AND host = ? AND pid = ? "
                            "RETURNING name", (float(now), int(polling), me.name, me.host, int(me.pid)))
    return row is not None


async def unregister(db: Database, me: ReplicaIdentity) -> None:
    """Remove this replica's row (a clean stop)."""
    await db.execute("DELETE FROM replicas WHERE name = ? AND host = ? AND pid = ?", (me.name, me.host, int(me.pid)))


async def alive_replicas(db: Database, *, now: float, lease_s: float) -> list[ReplicaRow]:
    """The replicas seen within ``lease_s`` of ``now``, oldest start first."""
    rows = await db.fetchall("SELECT name, host, pid, started_at, seen_at, polling FROM replicas "
                             "WHERE seen_at >= ? ORDER BY started_at, name", (float(now - lease_s),))
    return [ReplicaRow(str(r["name"]), str(r["host"]), int(r["pid"]), str(r["started_at"]), float(r["seen_at"]),
                       bool(r["polling"])) for r in rows]


class Heartbeat:
    """Keeps this replica's row fresh until :meth:`stop` (which removes it)."""

    def __init__(self, db: Database, me: ReplicaIdentity, clock: Clock, *, lease_s: float) -> None:
        self.db = db
        self.me = me
        self.clock = clock
        self.lease_s = lease_s
        self.interval = max(0.2, lease_s / HEARTBEATS_PER_LEASE)
        self.polling = False  # what the next beat writes (the polling leader sets it)
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.failures = 0

    def now(self) -> float:
        return self.clock.now().timestamp()

    async def start(self) -> None:
        """Register (raises :class:`ReplicaNameTaken`) and start beating."""
        await register(self.db, self.me, now=self.now(), lease_s=self.lease_s)
        log.info("replica %s (pid %d on %s) registered; heartbeat every %.1f s", self.me.name, self.me.pid,
                 self.me.host, self.interval)
        self._task = asyncio.create_task(self._run(), name="replica heartbeat")

    def set_polling(self, polling: bool) -> None:
        """Record (at once, in the next beat) whether this replica polls Telegram."""
        if polling != self.polling:
            self.polling = polling
            self._wake.set()

    async def _run(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that lands as the event is
            # set (stop() right after the leader let go), and the heartbeat then beat on: SIGTERM never ended
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            self._wake.clear()
            try:
                mine = await beat(self.db, self.me, now=self.now(), polling=self.polling)
                if not mine:  # seen as dead meanwhile (a long pause) and the name taken, or the row removed
                    log.warning("replica %s: its row was gone or taken over; registering again", self.me.name)
                    await register(self.db, self.me, now=self.now(), lease_s=self.lease_s)
                if self.failures:
                    log.info("replica %s: heartbeat works again", self.me.name)
                self.failures = 0
            except ReplicaNameTaken as exc:
                log.error("replica %s: %s", self.me.name, exc)
            except StorageError as exc:
                self.failures += 1
                if self.failures == 1:
                    log.warning("replica %s: heartbeat failed (%s); retrying", self.me.name, exc)

    async def stop(self) -> None:
        """Stop beating and remove the row (best effort: a dead database cannot be told)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await unregister(self.db, self.me)
        except StorageError as exc:
            log.warning("replica %s: could not remove its row (%s); it disappears from status after %.0f s",
                        self.me.name, exc, self.lease_s)
