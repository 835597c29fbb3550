"""The ``scheduled_work`` table: add, claim, mark, finish, cancel, reschedule, recover.

Every state change is one conditional ``UPDATE`` (``... WHERE status = ? AND claim = ?``
``RETURNING``), so two runners (two replicas, issue 29) can never both hold a row: the claim
is ``UPDATE ... WHERE id = (SELECT ... LIMIT 1) AND status = 'pending'``, the select made
``... FOR UPDATE SKIP LOCKED`` on PostgreSQL. A row changed under a runner (cancelled, rescheduled
while it was claimed) makes that runner's next step match nothing, and it sends nothing.

Recovery at start (:meth:`WorkStore.recover`): a ``claimed`` row never reached ``sending``,
so nothing left: it is pending again and done once more. A ``sending`` row may have reached
the service: it is finished as ``may_have_arrived`` and never sent again. Rows held waiting
(a channel that was not running, a closed WhatsApp window) are looked at again.

Several replicas share one table (PostgreSQL, issue 29): a runner that starts must not take back
the claims of the live ones. There a claim is the runner's while it touches the row
(:meth:`WorkStore.touch`, every third of the lease); a claim untouched for the lease belongs to a
runner that died, and any runner takes it back by the same rules (:meth:`WorkStore.reclaim`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from board.schedule.work import (
    OPEN_STATUSES,
    NewWork,
    Outcome,
    Place,
    ScheduledWork,
    WorkKind,
    WorkStatus,
    parse_stamp,
    stamp,
)
from board.storage.database import Dialect

if TYPE_CHECKING:
    from board.storage import Database

__all__ = ["WAKE_CHANNEL", "Recovered", "WorkStore"]

#: The PostgreSQL notification channel a change of scheduled work is announced on (:meth:`WorkStore.announce`).
WAKE_CHANNEL = "sabha_schedule"

log = logging.getLogger("sabha.schedule")

_COLUMNS = ("id, key, kind, due_at, channel, chat_id, thread_id, payload, status, attempts, held, outcome, "
            "detail, claim, created_at, finished_at")


@dataclass(frozen=True)
class Recovered:
    """What :meth:`WorkStore.recover` found a crash or a stop had left."""

    redo: int  # claimed, nothing sent: pending again
    uncertain: tuple[ScheduledWork, ...]  # was being sent: may have arrived, never sent again
    released: int  # held rows looked at again


def _scope(channels: Sequence[str] | None) -> tuple[str, list[Any]]:
    """`` AND channel IN (...)`` and its parameters (nothing when ``channels`` is None)."""
    if channels is None:
        return "", []
    return f" AND channel IN ({', '.join('?' * len(channels)) or 'NULL'})", list(channels)


def _kind(value: str) -> WorkKind | str:
    try:
        return WorkKind(value)
    except ValueError:
        return value


def _row(r: Any) -> ScheduledWork:
    try:
        payload = json.loads(r["payload"] or "{}")
    except ValueError:
        payload = {}
    return ScheduledWork(
        id=int(r["id"]), key=str(r["key"]), kind=_kind(str(r["kind"])), due_at=parse_stamp(r["due_at"]),
        place=Place(str(r["channel"]), str(r["chat_id"]), None if r["thread_id"] is None else int(r["thread_id"])),
        payload=payload if isinstance(payload, dict) else {}, status=WorkStatus(r["status"]),
        attempts=int(r["attempts"]), held=r["held"], outcome=r["outcome"], detail=r["detail"], claim=r["claim"],
        created_at=parse_stamp(r["created_at"]),
        finished_at=parse_stamp(r["finished_at"]) if r["finished_at"] else None,
    )


class WorkStore:
    """The table behind :class:`board.schedule.Schedule`, on either backend."""

    def __init__(self, db: Database) -> None:
        self.db = db
        #: the claim's read locks the row it picks on PostgreSQL and passes over rows another runner is
        #: claiming this instant, so racing replicas each take a different row (rather than queueing on one
        #: and finding it gone); SQLite runs one writer at a time and needs nothing
        self._skip_locked = " FOR UPDATE SKIP LOCKED" if db.dialect is Dialect.POSTGRES else ""

    async def _one(self, sql: str, params: tuple[Any, ...]) -> ScheduledWork | None:
        row = await self.db.fetchone(f"{sql} RETURNING {_COLUMNS}", params)
        return None if row is None else _row(row)

    # -- adding and changing -------------------------------------------------------------

    async def add(self, work: NewWork, now: datetime) -> tuple[ScheduledWork, bool]:
        """Store ``work`` unless its key exists; (the row, whether it is new)."""
        at = stamp(now)
        created = await self._one(
            "INSERT INTO scheduled_work (key, kind, due_at, channel, chat_id, thread_id, payload, status, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT(key) DO NOTHING",
            (work.key, work.kind.value, stamp(work.due_at), work.place.channel, work.place.chat_id,
             work.place.thread_id, json.dumps(dict(work.payload), sort_keys=True), at, at))
        if created is not None:
            return created, True
        existing = await self.get(work.key)
        assert existing is not None  # the key exists: the insert did nothing because of it
        return existing, False

    async def get(self, key: str) -> ScheduledWork | None:
        """The row of ``key``."""
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM scheduled_work WHERE key = ?", (key,))
        return None if row is None else _row(row)

    async def cancel(self, key: str, now: datetime, detail: str | None = None) -> ScheduledWork | None:
        """Cancel ``key`` if it has not started being sent (pending or claimed); the row, or None."""
        return await self._one(
            "UPDATE scheduled_work SET status = 'cancelled', claim = NULL, held = NULL, finished_at = ?, "
            "updated_at = ?, detail = COALESCE(?, detail) WHERE key = ? AND status IN ('pending', 'claimed')",
            (stamp(now), stamp(now), detail, key))

    async def reschedule(self, key: str, due_at: datetime, now: datetime,
                         payload: dict[str, Any] | None = None) -> ScheduledWork | None:
        """Move ``key`` to ``due_at`` (snooze); a finished row (done, cancelled, failed) is armed
        again, a claimed one is taken back from its runner (which then sends nothing). A row being
        sent right now is left alone (None): it may arrive, and is not sent twice."""
        return await self._one(
            "UPDATE scheduled_work SET status = 'pending', due_at = ?, claim = NULL, held = NULL, attempts = 0, "
            "outcome = NULL, detail = NULL, finished_at = NULL, updated_at = ?, payload = COALESCE(?, payload) "
            "WHERE key = ? AND status != 'sending'",
            (stamp(due_at), stamp(now), None if payload is None else json.dumps(payload, sort_keys=True), key))

    async def announce(self) -> None:
        """PostgreSQL: tell every runner listening on :data:`WAKE_CHANNEL` (any replica, any host) that a row was
        added or moved; nothing on SQLite (the process that changed it wakes the daemon: ``bot.ops.wake``)."""
        if self.db.dialect is Dialect.POSTGRES:
            await self.db.execute("SELECT pg_notify(?, '')", (WAKE_CHANNEL,))

    # -- the runner's steps -----------------------------------------------------------------

    async def claim_due(self, now: datetime, claim: str, channels: Sequence[str] | None = None,
                        ) -> ScheduledWork | None:
        """Claim the most overdue pending row (one conditional UPDATE; only rows for ``channels``
        when given), or None when none is due."""
        scope, params = _scope(channels)
        return await self._one(
            "UPDATE scheduled_work SET status = 'claimed', claim = ?, claimed_at = ?, updated_at = ? "
            "WHERE id = (SELECT id FROM scheduled_work WHERE status = 'pending' AND held IS NULL AND due_at <= ?"
            f"{scope} ORDER BY due_at, id LIMIT 1{self._skip_locked}) AND status = 'pending'",
            (claim, stamp(now), stamp(now), stamp(now), *params))

    async def next_due(self, channels: Sequence[str] | None = None) -> datetime | None:
        """When the next pending (not held) row (for ``channels``, when given) is due."""
        scope, params = _scope(channels)
        row = await self.db.fetchone(
            f"SELECT MIN(due_at) AS due FROM scheduled_work WHERE status = 'pending' AND held IS NULL{scope}",
            tuple(params))
        return parse_stamp(row["due"]) if row is not None and row["due"] else None

    async def sending(self, work: ScheduledWork, now: datetime) -> bool:
        """The request is about to leave; False when the row is no longer this claim's
        (cancelled or rescheduled meanwhile): then nothing may be sent."""
        return await self._one(
            "UPDATE scheduled_work SET status = 'sending', sending_at = ?, updated_at = ? "
            "WHERE id = ? AND status = 'claimed' AND claim = ?", (stamp(now), stamp(now), work.id, work.claim)
        ) is not None

    async def unsend(self, work: ScheduledWork, now: datetime) -> bool:
        """The service answered that nothing was posted (a 429 to wait out): the row is claimed
        again, not ``sending``, until the retry leaves; a crash meanwhile has it done again."""
        return await self._one(
            "UPDATE scheduled_work SET status = 'claimed', sending_at = NULL, updated_at = ? "
            "WHERE id = ? AND status = 'sending' AND claim = ?", (stamp(now), work.id, work.claim)) is not None

    async def finish(self, work: ScheduledWork, status: WorkStatus, outcome: Outcome, now: datetime,
                     detail: str | None = None) -> bool:
        """Record how the claimed (or sending) row ended; False when it was not this claim's any more."""
        return await self._one(
            "UPDATE scheduled_work SET status = ?, outcome = ?, detail = ?, claim = NULL, finished_at = ?, "
            "updated_at = ? WHERE id = ? AND status IN ('claimed', 'sending') AND claim = ?",
            (status.value, outcome.value, detail, stamp(now), stamp(now), work.id, work.claim)) is not None

    async def release_claim(self, work: ScheduledWork, now: datetime, *, due_at: datetime | None = None,
                            held: str | None = None, failed: bool = False, detail: str | None = None) -> bool:
        """Give a claimed row back as pending (nothing was sent, or the service proved nothing was
        posted): later (``due_at``, counting a failed try when ``failed``), or held waiting for ``held``."""
        return await self._one(
            "UPDATE scheduled_work SET status = 'pending', claim = NULL, held = ?, due_at = COALESCE(?, due_at), "
            "attempts = attempts + ?, detail = COALESCE(?, detail), updated_at = ? "
            "WHERE id = ? AND status IN ('claimed', 'sending') AND claim = ?",
            (held, None if due_at is None else stamp(due_at), int(failed), detail, stamp(now), work.id, work.claim),
        ) is not None

    async def release_held(self, now: datetime, *, channel: str | None = None, chat_id: str | None = None,
                           channels: Sequence[str] | None = None) -> int:
        """Rows held waiting (for a channel, a window) are due again: all (of ``channels``), a channel's,
        or one chat's."""
        where, params = ["status = 'pending'", "held IS NOT NULL"], [stamp(now)]
        if channel is not None:
            where.append("channel = ?")
            params.append(channel)
        if channels is not None:
            scope, names = _scope(channels)
            where.append(scope.removeprefix(" AND "))
            params += names
        if chat_id is not None:
            where.append("chat_id = ?")
            params.append(chat_id)
        rows = await self.db.fetchall(
            f"UPDATE scheduled_work SET held = NULL, updated_at = ? WHERE {' AND '.join(where)} RETURNING id",
            tuple(params))
        return len(rows)

    async def recover(self, now: datetime, channels: Sequence[str] | None = None, *,
                      stale_before: datetime | None = None) -> Recovered:
        """After a crash or a stop (of the runner for ``channels``, when given): see the module docstring.
        ``stale_before`` (replicas sharing the table): only claims whose runner was last heard of before
        it are taken back, as a live replica's are its own."""
        redo, uncertain = await self.reclaim(now, channels, stale_before=stale_before)
        released = await self.release_held(now, channels=channels)
        return Recovered(redo, uncertain, released)

    async def reclaim(self, now: datetime, channels: Sequence[str] | None = None, *,
                      stale_before: datetime | None = None) -> tuple[int, tuple[ScheduledWork, ...]]:
        """Claims left by a runner that is gone (all, or those not touched since ``stale_before``): a
        ``claimed`` row is pending again (nothing left), a ``sending`` one done as ``may_have_arrived``
        (never sent twice); (how many were redone, the uncertain rows)."""
        scope, params = _scope(channels)
        if stale_before is not None:
            scope += " AND updated_at < ?"
            params.append(stamp(stale_before))
        redo = await self.db.fetchall(
            "UPDATE scheduled_work SET status = 'pending', claim = NULL, updated_at = ? WHERE status = 'claimed'"
            f"{scope} RETURNING id", (stamp(now), *params))
        uncertain = await self.db.fetchall(
            f"UPDATE scheduled_work SET status = 'done', outcome = 'may_have_arrived', claim = NULL, "
            f"detail = 'Sabha stopped while it was being sent: it may have arrived, so it is not sent again', "
            f"finished_at = ?, updated_at = ? WHERE status = 'sending'{scope} RETURNING {_COLUMNS}",
            (stamp(now), stamp(now), *params))
        return len(redo), tuple(_row(r) for r in uncertain)

    async def touch(self, work: ScheduledWork, now: datetime) -> bool:
        """The runner holding ``work`` is alive (its claim is not stale); False when the row is not its any more."""
        return bool(await self.db.fetchall(
            "UPDATE scheduled_work SET updated_at = ? WHERE id = ? AND status IN ('claimed', 'sending') "
            "AND claim = ? RETURNING id", (stamp(now), work.id, work.claim)))

    # -- reading ------------------------------------------------------------------------------

    async def open_rows(self, *, kind: WorkKind | None = None, limit: int = 200) -> list[ScheduledWork]:
        """Rows still to happen (pending, claimed, sending), soonest first."""
        where = f"status IN ({', '.join('?' * len(OPEN_STATUSES))})"
        params: list[Any] = [s.value for s in OPEN_STATUSES]
        if kind is not None:
            where += " AND kind = ?"
            params.append(kind.value)
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM scheduled_work WHERE {where} ORDER BY due_at, id LIMIT ?", (*params, limit))
        return [_row(r) for r in rows]

    async def recent(self, *, statuses: Sequence[WorkStatus] = (WorkStatus.FAILED,), limit: int = 5,
                     ) -> list[ScheduledWork]:
        """The latest rows that ended in ``statuses``."""
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM scheduled_work WHERE status IN ({', '.join('?' * len(statuses))}) "
            f"ORDER BY updated_at DESC LIMIT ?", (*[s.value for s in statuses], limit))
        return [_row(r) for r in rows]
