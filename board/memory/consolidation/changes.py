"""A consolidation plan applied, recorded and undone: the ``memory_changes`` table (migration 1300).

:meth:`ChangeStore.apply` applies a checked plan (:func:`board.memory.consolidation.plan.checked`) in one
transaction together with its record: a kill leaves the old facts or the new ones, never half. The record is keyed
by the run's ``scheduled_work`` key, so a run done again after a kill (claimed, applied, killed before the row was
finished) applies nothing twice. Inside the transaction every step's facts are read again: a step whose facts
changed since the model saw them (the person corrected or forgot one meanwhile) is left out, so the person's word
wins. Each step keeps every column of its facts before and after.

:meth:`ChangeStore.undo` restores exactly the facts before a change, in one transaction, except where something
newer stands: a fact changed or removed since the change (by the person, the owner or a later run) stays as it is
now, a fact with the same key kept since is not doubled, and nothing the person asked to forget after the change
(``memory_forgets``) comes back. What was left out is said (``undo_note``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.conversation.scope import DIRECT
from board.memory.consolidation.plan import Held, Merge, TidyPlan
from board.memory.facts import Fact, FactSource, Provenance
from board.storage import Database
from board.storage.database import Tx

__all__ = ["ChangeProblem", "ChangeStore", "FactChange", "MemoryChange", "MemoryChangeKind", "Undone", "held_of"]

_FACT_COLUMNS = ("user", "role", "key", "value", "scope", "created_at", "updated_at", "source", "source_entry",
                 "source_message", "source_session", "corrected_at")


class MemoryChangeKind(StrEnum):
    """What one step of a change did."""

    MERGED = "merged"        # several facts became one
    REWRITTEN = "rewritten"  # one fact's wording changed
    EXPIRED = "expired"      # a fact went (duplicate, contradicted, stale)


class ChangeProblem(ValueError):
    """Nothing was undone; ``str()`` says why (no such change, undone already)."""


@dataclass(frozen=True)
class FactChange:
    """One step: the facts before (every column), the fact after (None: expired), why."""

    kind: MemoryChangeKind
    before: tuple[dict[str, Any], ...]
    after: dict[str, Any] | None = None
    reason: str | None = None

    def line(self) -> str:
        """``merged: location "Pune" + city "Pune, India" -> location "Pune, India"``."""
        was = " + ".join(f"{b['key']} {json.dumps(b['value'], ensure_ascii=False)}" for b in self.before)
        if self.after is None:
            return f"{self.kind.value}{f' ({self.reason})' if self.reason else ''}: {was}"
        return f"{self.kind.value}: {was} -> {self.after['key']} {json.dumps(self.after['value'], ensure_ascii=False)}"


@dataclass(frozen=True)
class MemoryChange:
    """One applied consolidation run of one person's facts."""

    id: int
    user: str
    work_key: str
    created_at: str
    steps: tuple[FactChange, ...]
    profile_before: str | None
    profile_after: str | None
    model: str | None = None
    undone_at: str | None = None
    undo_note: str | None = None

    @property
    def empty(self) -> bool:
        return not self.steps and self.profile_before == self.profile_after

    def lines(self) -> list[str]:
        """The change as the owner reads it (``sabha memory changes``)."""
        head = f"change {self.id}: {self.user} at {self.created_at[:19].replace('T', ' ')} UTC"
        head += f" (model {self.model})" if self.model else ""
        head += f" [undone at {self.undone_at[:19].replace('T', ' ')} UTC]" if self.undone_at else ""
        out = [head, *(f"  {step.line()}" for step in self.steps)]
        if self.profile_before != self.profile_after:
            was = json.dumps(self.profile_before, ensure_ascii=False) if self.profile_before else "(none)"
            out.append(f"  profile: {was} -> {json.dumps(self.profile_after, ensure_ascii=False)}")
        if self.undo_note:
            out.append(f"  undo left as they are now: {self.undo_note}")
        if not self.undone_at and not self.empty:
            out.append(f"  to undo: sabha memory undo {self.id}")
        return out


@dataclass(frozen=True)
class Undone:
    """What :meth:`ChangeStore.undo` did: facts restored, and each thing left as it is now, with why."""

    change: MemoryChange
    restored: int
    kept: tuple[str, ...]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _held(row: Any) -> Held:
    where = Provenance(source=FactSource(row["source"]), entry=row["source_entry"], message=row["source_message"],
                       session=row["source_session"])
    fact = Fact(user=row["user"], role=row["role"], key=row["key"], value=row["value"], updated_at=row["updated_at"],
                provenance=where, scope=row["scope"], corrected_at=row["corrected_at"])
    return Held(int(row["id"]), fact, str(row["created_at"]))


async def held_of(db: Database | Tx, user: str, scope: str = DIRECT) -> list[Held]:
    """``user``'s facts kept in ``scope`` (the direct chats: where facts are heard), oldest first."""
    rows = await db.fetchall('SELECT * FROM memory_facts WHERE "user"=? AND scope=? ORDER BY updated_at, id',
                             (user, scope))
    return [_held(r) for r in rows]


def _change(row: Any) -> MemoryChange:
    steps = tuple(FactChange(MemoryChangeKind(s["kind"]), tuple(s["before"]), s.get("after"), s.get("reason"))
                  for s in json.loads(row["ops"] or "[]"))
    return MemoryChange(id=int(row["id"]), user=row["user"], work_key=row["work_key"], created_at=row["created_at"],
                  steps=steps, profile_before=row["profile_before"], profile_after=row["profile_after"],
                  model=row["model"], undone_at=row["undone_at"], undo_note=row["undo_note"])


def _insert_fact(row: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    names = ", ".join('"user"' if c == "user" else c for c in _FACT_COLUMNS)
    return (f"INSERT INTO memory_facts({names}) VALUES ({', '.join('?' * len(_FACT_COLUMNS))})",
            tuple(row[c] for c in _FACT_COLUMNS))


class ChangeStore:
    """Applies, lists and undoes consolidation changes; see the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def profile(self, user: str) -> str | None:
        """The short profile consolidation keeps of ``user`` (None: none yet)."""
        row = await self.db.fetchone('SELECT text FROM memory_profiles WHERE "user"=?', (user,))
        return None if row is None else str(row["text"])

    async def of_work(self, work_key: str) -> MemoryChange | None:
        """The change a run (its scheduled_work key) applied, if it did."""
        row = await self.db.fetchone("SELECT * FROM memory_changes WHERE work_key=?", (work_key,))
        return None if row is None else _change(row)

    async def get(self, change_id: int) -> MemoryChange | None:
        row = await self.db.fetchone("SELECT * FROM memory_changes WHERE id=?", (change_id,))
        return None if row is None else _change(row)

    async def changes(self, user: str | None = None, since: str | None = None, *, limit: int = 50,
                      empty: bool = False) -> list[MemoryChange]:
        """The latest changes (of ``user``, since the ISO moment ``since``), newest first; runs that changed nothing
        only with ``empty``."""
        sql, params = "SELECT * FROM memory_changes WHERE 1=1", []
        if user is not None:
            sql += ' AND "user"=?'
            params.append(user)
        if since is not None:
            sql += " AND created_at >= ?"
            params.append(since)
        rows = await self.db.fetchall(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit * 4))
        found = [_change(r) for r in rows]
        return [c for c in found if empty or not c.empty][:limit]

    # -- applying ------------------------------------------------------------------------------

    async def apply(self, user: str, work_key: str, plan: TidyPlan, seen: Sequence[Held], *,
                    model: str | None = None) -> MemoryChange | None:
        """Apply ``plan`` (checked against ``seen``, the facts the model saw) and record it, in one transaction;
        None when this run (``work_key``) applied its change already."""
        async with self.db.transaction() as tx:
            if await tx.fetchone("SELECT id FROM memory_changes WHERE work_key=?", (work_key,)) is not None:
                return None
            now_held = {h.id: h for h in await held_of(tx, user)}
            before = {h.id: h for h in seen}

            def unchanged(*ids: int) -> bool:
                return all(i in now_held and i in before and now_held[i].row() == before[i].row() for i in ids)

            steps = []
            for m in plan.merges:
                if unchanged(*m.ids):
                    steps.append(await self._merge(tx, m, now_held))
            for e in plan.expiries:
                if unchanged(e.id, *(() if e.by is None else (e.by,))):
                    h = now_held[e.id]
                    await tx.execute("DELETE FROM memory_facts WHERE id=?", (h.id,))
                    by = now_held.get(e.by) if e.by is not None else None
                    why = e.reason.value + (f" by {by.fact.key} {json.dumps(by.fact.value)}" if by else "")
                    steps.append(FactChange(MemoryChangeKind.EXPIRED, (h.row(),), None, why))
            row = await tx.fetchone('SELECT text FROM memory_profiles WHERE "user"=?', (user,))
            profile_before = None if row is None else str(row["text"])
            profile_after = plan.profile if plan.profile is not None else profile_before
            stamp = _now()
            created = await tx.fetchone(
                'INSERT INTO memory_changes("user", work_key, created_at, ops, profile_before, profile_after, model) '
                "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (user, work_key, stamp, json.dumps([_step_json(s) for s in steps], ensure_ascii=False),
                 profile_before, profile_after, model))
            assert created is not None
            if profile_after != profile_before and profile_after is not None:
                await tx.execute(
                    'INSERT INTO memory_profiles("user", text, updated_at, change_id) VALUES (?, ?, ?, ?) '
                    'ON CONFLICT("user") DO UPDATE SET text=excluded.text, updated_at=excluded.updated_at, '
                    "change_id=excluded.change_id", (user, profile_after, stamp, int(created["id"])))
        return MemoryChange(int(created["id"]), user, work_key, stamp, tuple(steps), profile_before, profile_after,
                            model)

    @staticmethod
    async def _merge(tx: Tx, m: Merge, held: dict[int, Held]) -> FactChange:
        facts = [held[i] for i in m.ids]
        into = next(h for h in facts if h.fact.key == m.key)
        updated = max(h.fact.updated_at for h in facts)  # the merged fact is as recent as its newest part
        others = [h.id for h in facts if h.id != into.id]
        if others:
            await tx.execute(f"DELETE FROM memory_facts WHERE id IN ({', '.join('?' * len(others))})", tuple(others))
        await tx.execute("UPDATE memory_facts SET value=?, updated_at=? WHERE id=?", (m.value, updated, into.id))
        after = {**into.row(), "value": m.value, "updated_at": updated}
        return FactChange(MemoryChangeKind.MERGED if others else MemoryChangeKind.REWRITTEN,
                          (into.row(), *(held[i].row() for i in others)), after)

    # -- undoing -------------------------------------------------------------------------------

    async def undo(self, change_id: int) -> Undone:
        """Restore the facts before change ``change_id`` (see the module docstring); :class:`ChangeProblem` when
        there is no such change or it was undone already."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM memory_changes WHERE id=?", (change_id,))
            if row is None:
                raise ChangeProblem(f"there is no memory change {change_id} (sabha memory changes lists them)")
            change = _change(row)
            if change.undone_at is not None:
                raise ChangeProblem(f"memory change {change_id} was undone already, at {change.undone_at[:19]}")
            forgot = await tx.fetchall('SELECT key FROM memory_forgets WHERE "user"=? AND at > ?',
                                       (change.user, change.created_at))
            forgotten = {r["key"] for r in forgot}
            restored, kept = 0, []
            for step in reversed(change.steps):
                done, why = await _undo_step(tx, step, forgotten, change.user)
                restored += done
                kept.extend(why)
            profile = await tx.fetchone('SELECT text FROM memory_profiles WHERE "user"=?', (change.user,))
            if change.profile_after != change.profile_before:
                if profile is not None and profile["text"] != change.profile_after:
                    kept.append("the profile (a later change rewrote it)")
                elif change.profile_before is None:
                    await tx.execute('DELETE FROM memory_profiles WHERE "user"=?', (change.user,))
                else:
                    await tx.execute('UPDATE memory_profiles SET text=?, updated_at=? WHERE "user"=?',
                                     (change.profile_before, _now(), change.user))
            note = "; ".join(kept) or None
            await tx.execute("UPDATE memory_changes SET undone_at=?, undo_note=? WHERE id=? AND undone_at IS NULL",
                             (_now(), note, change_id))
        return Undone(change, restored, tuple(kept))


def _step_json(step: FactChange) -> dict[str, Any]:
    return {"kind": step.kind.value, "before": list(step.before), "after": step.after, "reason": step.reason}


async def _undo_step(tx: Tx, step: FactChange, forgotten: set[str | None], user: str) -> tuple[int, list[str]]:
    """Undo one step inside ``tx``: (facts restored, what was left as it is now and why). Facts come back under
    ``user``, the change's person now (a linked person's key when the account was linked since)."""
    if None in forgotten or any(b["key"] in forgotten for b in step.before):
        return 0, [f"{', '.join(b['key'] for b in step.before)} (forgotten since)"]
    if step.after is not None:
        now = await tx.fetchone("SELECT value, updated_at FROM memory_facts WHERE id=?", (step.after["id"],))
        if now is None or now["value"] != step.after["value"] or now["updated_at"] != step.after["updated_at"]:
            return 0, [f"{step.after['key']} (changed since the change)"]
        first, *rest = step.before
        await tx.execute("UPDATE memory_facts SET key=?, value=?, updated_at=?, source=?, corrected_at=? WHERE id=?",
                         (first["key"], first["value"], first["updated_at"], first["source"], first["corrected_at"],
                          first["id"]))
        restored, kept = 1, list[str]()
    else:
        rest, restored, kept = list(step.before), 0, list[str]()
    for fact in ({**f, "user": user} for f in rest):
        clash = await tx.fetchone('SELECT id FROM memory_facts WHERE "user"=? AND role=? AND key=? AND scope=?',
                                  (fact["user"], fact["role"], fact["key"], fact["scope"]))
        if clash is not None:
            kept.append(f"{fact['key']} (kept again since, with a newer value)")
            continue
        await tx.execute(*_insert_fact(fact))
        restored += 1
    return restored, kept
