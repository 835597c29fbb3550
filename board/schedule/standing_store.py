"""The ``standing_items`` and ``standing_runs`` tables (migration 1200): the standing work the owner set
(``/every``), and what each run said.

Every change is one conditional statement, so two replicas changing one item cannot interleave: a pause
matches only an active item, a resume only a paused one, moving ``next_at`` only an active one. A run's
row (keyed by its scheduled_work key) is written before its reply is sent, so a run done again after a
crash sends what the first try wrote instead of paying a model again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from board.schedule.recurrence import Recurrence, StandingKind
from board.schedule.work import Place, parse_stamp, stamp

if TYPE_CHECKING:
    from board.storage import Database

__all__ = ["ItemStatus", "RunRecord", "StandingItem", "StandingStore"]

_COLUMNS = "id, kind, topic, rule, said, phrase, channel, chat_id, thread_id, created_by, status, next_at, created_at"


class ItemStatus(StrEnum):
    """Where a standing item stands."""

    ACTIVE = "active"
    PAUSED = "paused"
    REMOVED = "removed"


@dataclass(frozen=True)
class StandingItem:
    """One stored item."""

    id: int
    kind: StandingKind
    topic: str
    recurrence: Recurrence
    said: str
    phrase: str
    place: Place
    created_by: str
    status: ItemStatus
    next_at: datetime | None
    created_at: datetime

    def title(self) -> str:
        """``a brief every Monday at 09:00 (UTC)`` / ``a meeting on "review our burn" ...``."""
        what = f"a {self.kind.value}" + (f" on \u201c{self.topic}\u201d" if self.topic else "")
        return f"{what} {self.said}"


@dataclass(frozen=True)
class RunRecord:
    """What one run wrote (``standing_runs``)."""

    work_key: str
    item_id: int
    due_at: datetime
    outcome: str
    text: str
    facts: dict[str, str]
    model_calls: int


def _facts(text: str | None) -> dict[str, str] | None:
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def _item(r: Any) -> StandingItem:
    return StandingItem(
        id=int(r["id"]), kind=StandingKind(r["kind"]), topic=str(r["topic"]),
        recurrence=Recurrence.from_json(r["rule"]), said=str(r["said"]), phrase=str(r["phrase"]),
        place=Place(str(r["channel"]), str(r["chat_id"]), None if r["thread_id"] is None else int(r["thread_id"])),
        created_by=str(r["created_by"]), status=ItemStatus(r["status"]),
        next_at=parse_stamp(r["next_at"]) if r["next_at"] else None, created_at=parse_stamp(r["created_at"]))


class StandingStore:
    """The standing-work tables, on either backend."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, *, kind: StandingKind, topic: str, recurrence: Recurrence, phrase: str, place: Place,
                  created_by: str, now: datetime) -> StandingItem:
        """Store a new active item (its first run is scheduled by the caller: :meth:`move`)."""
        at = stamp(now)
        row = await self.db.fetchone(
            "INSERT INTO standing_items (kind, topic, rule, said, phrase, channel, chat_id, thread_id, created_by, "
            "status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?) "
            f"RETURNING {_COLUMNS}",
            (kind.value, topic, recurrence.to_json(), recurrence.said(), phrase, place.channel, place.chat_id,
             place.thread_id, created_by, at, at))
        assert row is not None
        return _item(row)

    async def get(self, item_id: int) -> StandingItem | None:
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM standing_items WHERE id = ?", (item_id,))
        return None if row is None else _item(row)

    async def items(self, *, include_removed: bool = False, place: tuple[str, str] | None = None,
                    ) -> list[StandingItem]:
        """The items (not removed ones, unless asked), by number; only ``place``'s (channel, chat) when given."""
        where, params = ["1 = 1"], []
        if not include_removed:
            where.append("status != 'removed'")
        if place is not None:
            where += ["channel = ?", "chat_id = ?"]
            params += list(place)
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM standing_items WHERE {' AND '.join(where)} "
                                      "ORDER BY id", tuple(params))
        return [_item(r) for r in rows]

    async def set_status(self, item_id: int, status: ItemStatus, *, was: tuple[ItemStatus, ...], now: datetime,
                         ) -> StandingItem | None:
        """Move the item to ``status`` if it is in one of ``was``; the item after, or None (nothing changed)."""
        marks = ", ".join("?" * len(was))
        row = await self.db.fetchone(
            f"UPDATE standing_items SET status = ?, updated_at = ?, next_at = CASE WHEN ? = 'active' THEN next_at "
            f"ELSE NULL END WHERE id = ? AND status IN ({marks}) RETURNING {_COLUMNS}",
            (status.value, stamp(now), status.value, item_id, *[w.value for w in was]))
        return None if row is None else _item(row)

    async def move(self, item_id: int, next_at: datetime, now: datetime) -> bool:
        """The active item's next run is at ``next_at``; False when it is not active (paused, removed)."""
        rows = await self.db.fetchall(
            "UPDATE standing_items SET next_at = ?, updated_at = ? WHERE id = ? AND status = 'active' RETURNING id",
            (stamp(next_at), stamp(now), item_id))
        return bool(rows)

    # -- runs -----------------------------------------------------------------------------------

    async def record_run(self, run: RunRecord, now: datetime) -> RunRecord:
        """Keep what a run wrote unless its key has a record already; the stored one."""
        await self.db.execute(
            "INSERT INTO standing_runs (work_key, item_id, due_at, outcome, text, facts, model_calls, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(work_key) DO NOTHING",
            (run.work_key, run.item_id, stamp(run.due_at), run.outcome, run.text,
             json.dumps(run.facts, sort_keys=True), run.model_calls, stamp(now)))
        stored = await self.run_of(run.work_key)
        assert stored is not None
        return stored

    async def run_of(self, work_key: str) -> RunRecord | None:
        r = await self.db.fetchone("SELECT work_key, item_id, due_at, outcome, text, facts, model_calls "
                                   "FROM standing_runs WHERE work_key = ?", (work_key,))
        if r is None:
            return None
        return RunRecord(str(r["work_key"]), int(r["item_id"]), parse_stamp(r["due_at"]), str(r["outcome"]),
                         str(r["text"]), _facts(r["facts"]) or {}, int(r["model_calls"]))

    async def previous(self, item_id: int, before: datetime) -> RunRecord | None:
        """The item's latest brief before ``before`` that went out (sent, or may have arrived: its row is done);
        the one the next brief compares with. A run that was missed, or never posted, does not count."""
        row = await self.db.fetchone(
            "SELECT r.work_key FROM standing_runs r JOIN scheduled_work w ON w.key = r.work_key "
            "WHERE r.item_id = ? AND r.due_at < ? AND r.outcome IN ('wrote', 'nothing_new') AND w.status = 'done' "
            "AND w.outcome IN ('sent', 'may_have_arrived') ORDER BY r.due_at DESC LIMIT 1", (item_id, stamp(before)))
        return None if row is None else await self.run_of(str(row["work_key"]))

    async def runs(self, item_id: int, limit: int = 10) -> list[RunRecord]:
        """The item's latest runs, newest first."""
        rows = await self.db.fetchall("SELECT work_key FROM standing_runs WHERE item_id = ? ORDER BY due_at DESC "
                                      "LIMIT ?", (item_id, limit))
        found = [await self.run_of(str(r["work_key"])) for r in rows]
        return [r for r in found if r is not None]
