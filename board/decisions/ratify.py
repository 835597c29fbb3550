"""Ratification: a meeting's decision is *proposed* until the owner ratifies, vetoes or sends it back.

A decision is the decision of one meeting, so its id is the meeting's id (``m-20261125-101500-ab12``;
a unique prefix works too). :class:`DecisionBook` owns its verdict (:class:`Verdict`) in the state
db (migration ``0810_decision_ratification``): the current verdict, who ruled and when (from the
board's one clock, :mod:`board.clock`) on the meeting row, and every ruling in
``decision_rulings``. A ruling is one transaction that checks the verdict it changes, so two
presses of the same button (or a press racing ``sabha decisions ratify``) change it once; the
second is told it is :attr:`Outcome.ALREADY` done.

What may follow what: a proposed decision may be ratified, vetoed or sent back (revisit); a
ratified one may still be sent back (things changed); a vetoed one, or one sent back, is final
(the follow-up meeting decides anew). A veto drops the decision's open action items (status
``dropped``: no reminders). Listeners (:meth:`DecisionBook.subscribe`) hear of every change after
it is committed: the channels take the buttons off the decision message, the scheduler cancels
the dropped items' reminders, the board convenes the follow-up meeting of a revisit.

Values only cross this module's boundary (:class:`DecisionRecord`, :class:`RulingResult`,
:class:`DecisionChange`); the words said to the user are :mod:`board.commands.decisions`'.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from board.clock import Clock
from board.storage import Database, Dialect, Row, Tx

__all__ = ["DecisionBook", "DecisionChange", "DecisionRecord", "Listener", "Outcome", "Place", "Ruling", "RulingResult",
           "Verdict", "verdicts"]

log = logging.getLogger("sabha.decisions")


class Verdict(StrEnum):
    """Where a decision stands."""

    PROPOSED = "proposed"
    RATIFIED = "ratified"
    VETOED = "vetoed"
    REVISIT = "revisit"


#: verdict now -> the verdicts it may become
ALLOWED: Mapping[Verdict, frozenset[Verdict]] = {
    Verdict.PROPOSED: frozenset({Verdict.RATIFIED, Verdict.VETOED, Verdict.REVISIT}),
    Verdict.RATIFIED: frozenset({Verdict.REVISIT}),
    Verdict.VETOED: frozenset(),
    Verdict.REVISIT: frozenset(),
}


class Outcome(StrEnum):
    """What became of a ruling."""

    DONE = "done"  # the verdict changed
    ALREADY = "already"  # it already had that verdict: nothing changed
    FINAL = "final"  # it has another verdict that this one may not follow: nothing changed
    NOT_FOUND = "not_found"  # no such meeting (or none proposed here, without an id)
    NO_DECISION = "no_decision"  # the meeting reached no decision
    AMBIGUOUS = "ambiguous"  # the prefix names several meetings


@dataclass(frozen=True)
class DecisionRecord:
    """A meeting's decision and where it stands."""

    meeting_id: str
    topic: str
    recommendation: str
    verdict: Verdict
    started_at: str
    channel: str | None = None
    chat_id: str | None = None
    thread_id: int | None = None
    ruled_by: str | None = None
    ruled_by_name: str | None = None
    ruled_at: str | None = None
    reason: str | None = None
    follow_up_id: str | None = None
    revisit_of: str | None = None
    actions: tuple[str, ...] = ()  # the decision's action items, as tasks
    is_group: bool | None = None  # whether the meeting's place is a group chat (None: recorded before it was kept)

    @property
    def place(self) -> tuple[str, str] | None:
        """(channel, chat id) the meeting was called from (None: the terminal's ``sabha meeting``)."""
        return (self.channel, self.chat_id) if self.channel and self.chat_id else None


@dataclass(frozen=True)
class Ruling:
    """What the owner asks: a verdict, by whom, through which channel, and why."""

    verdict: Verdict
    by: str  # "<channel>:<sender id>"
    via: str  # the channel (telegram, whatsapp, console) or "cli"
    by_name: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.verdict is Verdict.PROPOSED:
            raise ValueError("a ruling ratifies, vetoes or sends back; it cannot make a decision proposed again")


@dataclass(frozen=True)
class RulingResult:
    """The outcome of :meth:`DecisionBook.rule`; ``record`` is the decision as it stands after it."""

    outcome: Outcome
    record: DecisionRecord | None = None
    dropped: tuple[int, ...] = ()  # action item ids a veto dropped
    candidates: tuple[str, ...] = ()  # for AMBIGUOUS: the meetings the prefix names


@dataclass(frozen=True)
class DecisionChange:
    """A committed change of verdict, for listeners."""

    record: DecisionRecord
    previous: Verdict
    dropped: tuple[int, ...] = ()


Listener = Callable[[DecisionChange], Awaitable[None]]
#: where decisions were made: (channel, chat id), or (channel, chat id, thread id) for one topic
Place = tuple[str, str] | tuple[str, str, int | None]

_COLUMNS = ("id, topic, decision, started_at, channel, chat_id, thread_id, ratification, ruled_by, ruled_by_name, "
            "ruled_at, ruling_reason, follow_up_id, revisit_of, is_group")


def _record(row: Row) -> DecisionRecord:
    decision = json.loads(row["decision"]) if row["decision"] else {}
    return DecisionRecord(
        meeting_id=row["id"], topic=row["topic"], recommendation=str(decision.get("recommendation") or ""),
        verdict=Verdict(row["ratification"] or Verdict.PROPOSED), started_at=row["started_at"],
        channel=row["channel"], chat_id=row["chat_id"], thread_id=row["thread_id"], ruled_by=row["ruled_by"],
        ruled_by_name=row["ruled_by_name"], ruled_at=row["ruled_at"], reason=row["ruling_reason"],
        follow_up_id=row["follow_up_id"], revisit_of=row["revisit_of"],
        is_group=None if row["is_group"] is None else bool(row["is_group"]),
        actions=tuple(str(a.get("task") or "") for a in decision.get("action_items") or [] if isinstance(a, dict)),
    )


@dataclass(eq=False)
class DecisionBook:
    """Decisions and their verdicts; see the module docstring."""

    db: Database
    clock: Clock
    listeners: list[Listener] = field(default_factory=list)

    def subscribe(self, listener: Listener) -> None:
        """Hear of every committed change of verdict (a failing listener is logged, never undoes it)."""
        self.listeners.append(listener)

    async def find(self, ref: str) -> RulingResult:
        """The decision of meeting ``ref`` (its id or a unique prefix) as a result: DONE with the
        record, NOT_FOUND, AMBIGUOUS (with the candidates) or NO_DECISION (with the meeting's record)."""
        ref = ref.strip()
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM meetings WHERE id = ?", (ref,))
        if not rows and ref:
            like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            rows = await self.db.fetchall(
                f"SELECT {_COLUMNS} FROM meetings WHERE lower(id) LIKE lower(?) ESCAPE '\\' "
                "ORDER BY started_at DESC LIMIT 6", (like,))
        if not rows:
            return RulingResult(Outcome.NOT_FOUND)
        if len(rows) > 1:
            return RulingResult(Outcome.AMBIGUOUS, candidates=tuple(r["id"] for r in rows))
        record = _record(rows[0])
        return RulingResult(Outcome.DONE if rows[0]["decision"] else Outcome.NO_DECISION, record)

    async def latest(self, place: Place | None, verdict: Verdict = Verdict.PROPOSED) -> DecisionRecord | None:
        """The most recent decision with ``verdict`` made by a meeting called from ``place``
        (channel, chat id[, thread id: that topic only]); from anywhere when ``place`` is None."""
        rows = await self.recent(place=place, verdict=verdict, limit=1)
        return rows[0] if rows else None

    async def recent(self, *, place: Place | None = None, verdict: Verdict | None = None,
                     limit: int = 20) -> list[DecisionRecord]:
        """Decisions, newest first; only those of ``place`` (a topic's only, when it names the
        thread: a bare /veto in one topic never rules on another topic's decision) and with
        ``verdict`` when given."""
        where: list[str] = ["decision IS NOT NULL"]
        params: list[str | int] = []
        if place is not None:
            where.append("channel = ? AND chat_id = ?")
            params += [place[0], place[1]]
            if len(place) == 3:
                where.append("COALESCE(thread_id, 0) = ?")
                params.append(place[2] or 0)
        if verdict is Verdict.PROPOSED:
            where.append("(ratification IS NULL OR ratification = 'proposed')")
        elif verdict is not None:
            where.append("ratification = ?")
            params.append(verdict.value)
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM meetings WHERE {' AND '.join(where)} "
                                      "ORDER BY started_at DESC, rowid DESC LIMIT ?", (*params, limit))
        return [_record(r) for r in rows]

    async def counts(self) -> dict[Verdict, int]:
        """How many decisions stand at each verdict (``/status``)."""
        rows = await self.db.fetchall("SELECT COALESCE(ratification, 'proposed') AS v, COUNT(*) AS n FROM meetings "
                                      "WHERE decision IS NOT NULL GROUP BY v")
        return {Verdict(r["v"]): int(r["n"]) for r in rows}

    async def rule(self, ref: str, ruling: Ruling) -> RulingResult:
        """Give decision ``ref`` the verdict ``ruling`` asks for, once (see the module docstring)."""
        found = await self.find(ref)
        if found.outcome is not Outcome.DONE or found.record is None:
            return found
        meeting_id = found.record.meeting_id
        at = self.clock.now().isoformat(timespec="seconds")
        async with self.db.transaction() as tx:
            result = await _rule(tx, self.db.dialect, meeting_id, ruling, at)
        if result.outcome is Outcome.DONE and result.record is not None:
            log.info("decision %s %s by %s via %s%s%s", meeting_id, ruling.verdict.value, ruling.by, ruling.via,
                     f" ({len(result.dropped)} open action item(s) dropped)" if result.dropped else "",
                     f"; reason: {ruling.reason}" if ruling.reason else "")
            await self._tell(DecisionChange(result.record, found.record.verdict, result.dropped))
        return result

    async def link_follow_up(self, meeting_id: str, follow_up_id: str) -> None:
        """Record that meeting ``follow_up_id`` revisits the decision of ``meeting_id``."""
        await self.db.execute("UPDATE meetings SET follow_up_id = ? WHERE id = ?", (follow_up_id, meeting_id))
        await self.db.execute("UPDATE meetings SET revisit_of = ? WHERE id = ?", (meeting_id, follow_up_id))

    async def rulings(self, meeting_id: str) -> list[dict[str, Any]]:
        """Every ruling on a decision, oldest first (``sabha decisions show``)."""
        rows = await self.db.fetchall("SELECT verdict, previous, by_id, by_name, reason, via, at, dropped FROM "
                                      "decision_rulings WHERE meeting_id = ? ORDER BY id", (meeting_id,))
        return [{**dict(r), "dropped": json.loads(r["dropped"])} for r in rows]

    async def _tell(self, change: DecisionChange) -> None:
        for listener in list(self.listeners):
            try:
                await listener(change)
            except Exception:  # the verdict is recorded either way
                log.exception("decision %s: a listener of its %s failed", change.record.meeting_id,
                              change.record.verdict.value)


async def _rule(tx: Tx, dialect: Dialect, meeting_id: str, ruling: Ruling, at: str) -> RulingResult:
    """The ruling as one transaction: check (the row locked on PostgreSQL, so two replicas ruling at
    once queue and the second sees the first's verdict), change, drop, record."""
    lock = " FOR UPDATE" if dialect is Dialect.POSTGRES else ""
    row = await tx.fetchone(f"SELECT {_COLUMNS} FROM meetings WHERE id = ?{lock}", (meeting_id,))
    if row is None:
        return RulingResult(Outcome.NOT_FOUND)
    current = _record(row)
    if current.verdict is ruling.verdict:
        return RulingResult(Outcome.ALREADY, current)
    if ruling.verdict not in ALLOWED[current.verdict]:
        return RulingResult(Outcome.FINAL, current)
    await tx.execute("UPDATE meetings SET ratification = ?, ruled_by = ?, ruled_by_name = ?, ruled_at = ?, "
                     "ruling_reason = ? WHERE id = ?",
                     (ruling.verdict.value, ruling.by, ruling.by_name, at, ruling.reason, meeting_id))
    dropped: tuple[int, ...] = ()
    if ruling.verdict is Verdict.VETOED:
        dropped = tuple(int(r["id"]) for r in await tx.fetchall(
            "UPDATE action_items SET status = 'dropped', done_at = ?, done_by = ? "
            "WHERE meeting_id = ? AND status = 'open' RETURNING id", (at, ruling.by, meeting_id)))
        dropped = tuple(sorted(dropped))
    await tx.execute("INSERT INTO decision_rulings(meeting_id, verdict, previous, by_id, by_name, reason, via, at, "
                     "dropped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (meeting_id, ruling.verdict.value, current.verdict.value, ruling.by, ruling.by_name,
                      ruling.reason, ruling.via, at, json.dumps(list(dropped))))
    after = await tx.fetchone(f"SELECT {_COLUMNS} FROM meetings WHERE id = ?", (meeting_id,))
    assert after is not None  # updated in this transaction
    return RulingResult(Outcome.DONE, _record(after), dropped)


async def verdicts(db: Database, meeting_ids: list[str]) -> dict[str, Verdict]:
    """The verdict of each of ``meeting_ids`` that has a decision (listings of meetings show it)."""
    if not meeting_ids:
        return {}
    marks = ", ".join("?" for _ in meeting_ids)
    rows = await db.fetchall(f"SELECT id, ratification FROM meetings WHERE decision IS NOT NULL AND id IN ({marks})",
                             tuple(meeting_ids))
    return {r["id"]: Verdict(r["ratification"] or Verdict.PROPOSED) for r in rows}
