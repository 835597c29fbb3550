"""The Telegram polling leader: of several replicas in polling mode, exactly one calls ``getUpdates``.

Telegram allows one ``getUpdates`` caller per bot (a second gets ``409 Conflict``), so the replicas
elect one. On PostgreSQL the leader is the replica holding the session-level advisory lock
:data:`POLLING_LOCK`, taken with ``pg_try_advisory_lock`` on a connection of its own (not the pool's:
the lock lives exactly as long as that session). A standby tries again every :data:`RETRY_S`; when the
leader dies, the server ends its session and frees the lock, and the next try of a standby wins. The
leader checks its connection every :data:`RETRY_S` too: if it broke (PostgreSQL restarted), the lock
may be someone else's already, so it stops polling at once and becomes a standby that tries again. A
leader frozen alive (SIGSTOP, a hung loop) stops checking: the server ends its session after
:data:`IDLE_S` idle (``idle_session_timeout``), a standby takes the lock, and the leader, back, finds its
session gone and stands by.

On SQLite there is one process, which always leads (:class:`AlwaysLeader`).

A standby that takes over starts ``getUpdates`` without an offset: Telegram offers again what the dead
leader had not confirmed, and the intake's dedupe on (channel, message id) drops what was stored
already, so nothing is lost and nothing answered twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from board.storage import StateURL

if TYPE_CHECKING:
    import asyncpg

__all__ = ["IDLE_S", "POLLING_LOCK", "RETRY_S", "AdvisoryLockLeader", "AlwaysLeader", "Leadership"]

log = logging.getLogger("sabha.replicas")

#: The advisory lock key of the Telegram poller ("sabha" + 1; the migration lock is 0x5AB4A).
POLLING_LOCK = 0x5AB4B
#: How often a standby tries to take the lock, and a leader checks it still holds it.
RETRY_S = 1.0
#: The server ends the lock session once it is idle this long (``idle_session_timeout``): a leader frozen
#: (SIGSTOP, a hung event loop) stops checking, and its lock goes to a standby. The daemon passes
#: ``replicas.lease_s``.
IDLE_S = 15.0


class Leadership(Protocol):
    """Who polls: what the Telegram channel waits on before it polls, and watches while it does."""

    @property
    def leading(self) -> bool: ...

    async def wait_leading(self) -> None:
        """Return once this replica leads."""
        ...

    async def wait_lost(self) -> None:
        """Return once this replica no longer leads."""
        ...


class AlwaysLeader:
    """The one process on SQLite: it always leads."""

    leading = True

    async def wait_leading(self) -> None:
        return None

    async def wait_lost(self) -> None:
        await asyncio.Event().wait()  # never

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


class AdvisoryLockLeader:
    """Leadership by ``pg_try_advisory_lock`` on a dedicated connection; see the module docstring.

    ``changed(leading)`` is called on every change (the heartbeat records it in ``replicas.polling``)."""

    def __init__(self, url: StateURL, name: str, *, key: int = POLLING_LOCK, retry_s: float = RETRY_S,
                 idle_s: float = IDLE_S, changed: Callable[[bool], None] | None = None) -> None:
        self.url = url
        self.name = name
        self.key = key
        self.retry_s = retry_s
        self.idle_s = idle_s
        self.changed = changed
        self._conn: asyncpg.Connection[Any] | None = None
        self._leading = asyncio.Event()
        self._standby = asyncio.Event()
        self._standby.set()
        self._task: asyncio.Task[None] | None = None
        self.problem: str | None = None
        self._told_no_idle = False

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    async def wait_leading(self) -> None:
        await self._leading.wait()

    async def wait_lost(self) -> None:
        await self._standby.wait()

    async def start(self) -> None:
        """Start trying (the first try happens at once)."""
        self._task = asyncio.create_task(self._run(), name="telegram polling leader")

    def _set(self, leading: bool, *, stopping: bool = False) -> None:
        if leading == self.leading:
            return
        if leading:
            self._standby.clear()
            self._leading.set()
            log.info("replica %s: leads Telegram polling (advisory lock %#x taken)", self.name, self.key)
        else:
            self._leading.clear()
            self._standby.set()
            if stopping:
                log.info("replica %s: stops polling Telegram; a standby replica takes over", self.name)
            else:
                log.warning("replica %s: no longer leads Telegram polling (its lock connection was lost); "
                            "standing by", self.name)
        if self.changed is not None:
            self.changed(leading)

    async def _connect(self) -> asyncpg.Connection[Any]:
        import asyncpg

        # TCP keepalives on the server's side of this session: when the leader's host dies or drops off the
        # network, the server ends the session (and the lock with it) in ~11 s, not after the kernel's 2 hours.
        conn = await asyncpg.connect(self.url.dsn(), password=self.url.password, timeout=5,
                                     server_settings={"application_name": f"sabha poller {self.name}"[:63],
                                                      "tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
                                                      "tcp_keepalives_count": "3"})
        # A frozen leader's host still answers keepalives: the server also ends the session once it has been idle
        # for idle_s (a live leader checks it every retry_s). PostgreSQL < 14 has no such setting.
        idle_ms = int(max(self.idle_s, self.retry_s * 3) * 1000)
        try:
            await conn.execute(f"SET idle_session_timeout = {idle_ms}")
        except asyncpg.PostgresError as exc:
            if not self._told_no_idle:
                self._told_no_idle = True
                log.info("replica %s: this PostgreSQL cannot end an idle session (%s; it needs 14 or newer): a "
                         "frozen polling leader keeps its lock until it is killed", self.name, exc)
        return conn

    async def _try_once(self) -> None:
        """One round: (re)connect, then try the lock (standby) or check the connection (leader)."""
        if self._conn is None or self._conn.is_closed():
            self._set(False)
            self._conn = await self._connect()
        async with asyncio.timeout(max(self.retry_s * 3, 3.0)):
            if self.leading:
                await self._conn.fetchval("SELECT 1")
            elif await self._conn.fetchval("SELECT pg_try_advisory_lock($1)", self.key):
                self._set(True)

    async def _run(self) -> None:
        while True:
            try:
                await self._try_once()
                if self.problem:
                    log.info("replica %s: reaches PostgreSQL for the polling lock again", self.name)
                self.problem = None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: not leading; try again
                self._set(False)
                if self.problem is None:
                    log.warning("replica %s: polling lock: %s: %s; trying again every %.0f s", self.name,
                                type(exc).__name__, exc, self.retry_s)
                self.problem = f"{type(exc).__name__}: {exc}"
                await self._drop()
            await asyncio.sleep(self.retry_s)

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.terminate()

    async def stop(self) -> None:
        """Give up leadership (closing the session frees the lock for a standby at once)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await asyncio.wait_for(conn.close(), 2)
            except Exception:  # noqa: BLE001 - closing anyway
                conn.terminate()
        self._set(False, stopping=True)
