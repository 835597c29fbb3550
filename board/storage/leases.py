"""Leases: which replica works a key (a conversation) right now, on any backend.

Several ``sabha run`` replicas share one PostgreSQL; a conversation must be answered by one of them at a
time, in order. A :class:`Leases` is one replica's view of the ``leases`` table (``key``, ``holder``,
``expires_at`` in epoch seconds, ``taken_at``): :meth:`Leases.take` wins a key in ONE statement (an upsert
that only overwrites a row of this holder or one expired), so of two replicas racing for a free key exactly
one wins; :meth:`Leases.renew` extends every key this holder has (the heartbeat, every ``lease_s / 3``);
:meth:`Leases.release` lets a key go when the work on it is done. A replica that dies stops renewing: its
keys expire after ``lease_s`` and another replica takes them.

Renewal must not wait behind the replica's own work: on PostgreSQL it runs on a connection of its own
(:meth:`board.storage.postgres.PostgresDatabase.apart`, opened at the first renewal), never the pool the turns
use, and every renewal ends within ``heartbeat_s`` (a late one is a failed one; the next beat tries again). Under
load all pooled connections were seen busy with turns' statements for longer than a lease: the leases expired,
other replicas took the conversations and answered them again, and the late answers were dropped.

Times come from the board's clock (never the server's): ``expires_at`` is compared with the taker's
``now``, so replicas need clocks within a small fraction of ``lease_s`` (NTP gives milliseconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from board.clock import SYSTEM_CLOCK, Clock
from board.storage.database import Database, Dialect, StorageError

__all__ = ["Lease", "Leases"]

log = logging.getLogger("sabha.leases")

_TAKE = ("INSERT INTO leases(key, holder, expires_at, taken_at) VALUES (?, ?, ?, ?) "
         "ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, "
         "taken_at = excluded.taken_at WHERE leases.holder = excluded.holder OR leases.expires_at < ? "
         "RETURNING key")


@dataclass(frozen=True)
class Lease:
    """One row of the table: who holds ``key`` until when (epoch seconds)."""

    key: str
    holder: str
    expires_at: float
    taken_at: str


class Leases:
    """One holder's leases on ``db``; see the module docstring."""

    def __init__(self, db: Database, holder: str, lease_s: float, clock: Clock = SYSTEM_CLOCK) -> None:
        if lease_s <= 0:
            raise ValueError("lease_s must be positive")
        self.db = db
        self.holder = holder
        self.lease_s = lease_s
        self.clock = clock
        self._held: set[str] = set()  # what this holder took and has not let go (as far as it knows)
        self._own: Database | None = None  # renewal's connection of its own (PostgreSQL), see the module docstring
        self._opening: asyncio.Task[Database] | None = None  # that connection being opened
        # One statement of this holder at a time: a release and a take of one key must not pass each other
        # on two pooled connections (the DELETE of the old lease landing after the new take).
        self._lock = asyncio.Lock()

    def _now(self) -> float:
        return self.clock.now().timestamp()

    @property
    def heartbeat_s(self) -> float:
        """How often :meth:`renew` should run: a third of the lease, so two missed beats still hold it."""
        return self.lease_s / 3

    def holds(self, key: str) -> bool:
        """True when this holder took ``key`` and has not let it go or lost it (no statement)."""
        return key in self._held

    async def take(self, key: str) -> bool:
        """Take ``key`` (or extend it, when this holder has it already); False when another holder's lease on
        it has not expired."""
        async with self._lock:
            now = self.clock.now()
            stamp = now.timestamp()
            row = await self.db.fetchone(_TAKE, (key, self.holder, stamp + self.lease_s,
                                                 now.isoformat(timespec="milliseconds"), stamp))
        if row is None:
            self._held.discard(key)
            return False
        self._held.add(key)
        return True

    async def renew(self) -> set[str]:
        """Extend every key this holder has; returns them. A key this holder thought it had and no longer has
        (it expired and another holder took it: this replica was cut off longer than ``lease_s``) is logged
        and forgotten.

        Not under the lock of :meth:`take` and :meth:`release`: it only extends rows of this holder (it neither
        makes nor removes one), and a take or a release waiting for a pooled connection must not hold back the
        renewal of every other lease (under load the leases of conversations with turns in flight expired so)."""
        before = set(self._held)
        try:
            async with asyncio.timeout(self.heartbeat_s):
                db = await self._renewing_db()
                rows = await db.fetchall("UPDATE leases SET expires_at = ? WHERE holder = ? RETURNING key",
                                         (self._now() + self.lease_s, self.holder))
        except TimeoutError as exc:
            raise StorageError(f"renewing the leases of {self.holder} took longer than {self.heartbeat_s:.1f} s",
                               retryable=True) from exc
        kept = {str(row["key"]) for row in rows}
        lost = (before - kept) & self._held  # not the ones let go meanwhile
        if lost:
            log.warning("leases: %s lost %d lease(s) to another replica (cut off longer than %.0f s?): %s",
                        self.holder, len(lost), self.lease_s, ", ".join(sorted(lost)[:5]))
        self._held -= lost  # a key taken meanwhile stays; one let go meanwhile is not taken back
        return kept

    async def _renewing_db(self) -> Database:
        """Where :meth:`renew` runs: a connection of its own on PostgreSQL, the store itself on SQLite (one process,
        no pool). The connection of its own is opened in a task of its own: a renewal that runs out of time while it
        connects leaves it connecting for the next beat; one that failed to open is tried again then (this renewal
        uses the pool)."""
        if self._own is not None:
            return self._own
        from board.storage.postgres import PostgresDatabase

        if self.db.dialect is not Dialect.POSTGRES or not isinstance(self.db, PostgresDatabase):
            return self.db
        opening = self._opening
        if opening is None:
            opening = self._opening = asyncio.create_task(self.db.apart("leases", timeout_s=self.heartbeat_s),
                                                          name="lease connection")
        await asyncio.wait({opening})  # a renewal's time running out ends this wait, not the opening
        self._opening = None
        if not opening.cancelled() and opening.exception() is None:
            self._own = opening.result()
            return self._own
        log.warning("leases: could not open a connection of their own (%s); renewing on the pool this time",
                    "cancelled" if opening.cancelled() else opening.exception())
        return self.db

    async def close(self) -> None:
        """Close renewal's own connection, if one was opened (the store itself stays open)."""
        opening, self._opening = self._opening, None
        if opening is not None:
            opening.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):  # cancelled or failed: nothing to close
                opened = await opening
                await opened.close()
        own, self._own = self._own, None
        if own is not None:
            await own.close()

    async def release(self, key: str) -> None:
        """Let ``key`` go (only if this holder has it)."""
        self._held.discard(key)
        async with self._lock:
            await self.db.execute("DELETE FROM leases WHERE key = ? AND holder = ?", (key, self.holder))

    async def release_all(self) -> None:
        """Let every key of this holder go (a clean stop: the other replicas need not wait for expiry)."""
        self._held.clear()
        async with self._lock:
            await self.db.execute("DELETE FROM leases WHERE holder = ?", (self.holder,))

    async def take_over_all(self) -> int:
        """Forget every lease of every holder; the number dropped. Only for a store no other process shares
        (SQLite: the data dir is single-process), at start: the leases there are a dead predecessor's."""
        rows = await self.db.fetchall("DELETE FROM leases RETURNING key")
        self._held.clear()
        return len(rows)

    async def held(self) -> list[Lease]:
        """The leases this holder has now (read from the table)."""
        rows = await self.db.fetchall(
            "SELECT key, holder, expires_at, taken_at FROM leases WHERE holder = ? ORDER BY key", (self.holder,))
        return [Lease(str(r["key"]), str(r["holder"]), float(r["expires_at"]), str(r["taken_at"])) for r in rows]
