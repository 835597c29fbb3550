"""Predictions in the state db (migration ``0820_predictions``): recorded as members state them,
resolved by the owner.

A member's stance may carry a :class:`~board.room.decision.Prediction`; :meth:`PredictionStore.record`
keeps one row per (meeting, advisor, claim): a member who restates the same claim in a later round
updates its probability and date instead of counting twice (the Brier score would otherwise weigh a
claim by how often it was repeated). The row keeps the round and the model that spoke.

:meth:`PredictionStore.resolve` is one conditional UPDATE (``WHERE outcome IS NULL``): a button pressed
twice, two channels at once, or ``/resolve`` after the CLI resolved it, changes the row once and the
later ones are told it was already resolved and how.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from board.storage import Database, Tx

__all__ = ["Claim", "ClaimRow", "Outcome", "PredictionRow", "PredictionStore", "Resolution", "claim_key",
           "parse_outcome", "store_claim", "store_claims"]


class Claim(Protocol):
    """A prediction as a member staked it (:class:`board.room.decision.Prediction` is one)."""

    @property
    def claim(self) -> str: ...

    @property
    def probability(self) -> float: ...

    @property
    def resolve_by(self) -> str:
        """ISO date (YYYY-MM-DD) by which the claim can be checked."""
        ...


class Outcome(StrEnum):
    """How a prediction turned out: yes (it came true), no, or unknown (can't tell: not scored)."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


_OUTCOME_WORDS: dict[str, Outcome] = {
    "yes": Outcome.YES, "y": Outcome.YES, "true": Outcome.YES, "right": Outcome.YES, "happened": Outcome.YES,
    "no": Outcome.NO, "n": Outcome.NO, "false": Outcome.NO, "wrong": Outcome.NO,
    "unknown": Outcome.UNKNOWN, "cant-tell": Outcome.UNKNOWN, "can't-tell": Outcome.UNKNOWN,
    "canttell": Outcome.UNKNOWN, "unclear": Outcome.UNKNOWN, "?": Outcome.UNKNOWN,
}


def parse_outcome(word: str) -> Outcome | None:
    """``yes`` / ``no`` / ``unknown`` (also ``can't tell``, ``true``, ``false`` ...); None if none of them."""
    return _OUTCOME_WORDS.get("-".join(word.strip().lower().split()))


@dataclass(frozen=True)
class PredictionRow:
    """One prediction as stored, with the meeting it was made in and where that meeting ran."""

    id: int
    meeting_id: str
    topic: str
    round: int
    role: str
    model: str | None
    claim: str
    probability: float
    resolve_by: str
    created_at: str
    outcome: Outcome | None
    resolved_at: str | None
    resolved_by: str | None
    channel: str | None
    chat_id: str | None
    thread_id: int | None

    @property
    def is_open(self) -> bool:
        """Not resolved yet."""
        return self.outcome is None


@dataclass(frozen=True)
class Resolution:
    """What :meth:`PredictionStore.resolve` did: ``changed`` False when it was already resolved
    (``row`` then says how) or does not exist (``row`` None)."""

    row: PredictionRow | None
    changed: bool


def claim_key(claim: str) -> str:
    """The claim folded (case, spaces, a final full stop): one row per claim and member in a meeting."""
    return " ".join(claim.lower().split()).rstrip(".")


_SELECT = ("SELECT p.*, m.topic, m.channel, m.chat_id, m.thread_id FROM predictions p "
           "JOIN meetings m ON m.id = p.meeting_id")


async def store_claim(run: Tx, meeting_id: str, round_no: int, role: str, prediction: Claim, *,
                      model: str | None, now: datetime) -> int:
    """:meth:`PredictionStore.record` on ``run``: the db, or a transaction the caller holds (a meeting stores a
    member's statement and its prediction in one)."""
    key = claim_key(prediction.claim)
    rows = await run.fetchall(
        "INSERT INTO predictions(meeting_id, round, role, model, claim, claim_key, probability, resolve_by, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(meeting_id, role, claim_key) DO UPDATE SET "
        "round = excluded.round, model = excluded.model, probability = excluded.probability, "
        "resolve_by = excluded.resolve_by WHERE predictions.outcome IS NULL RETURNING id",
        (meeting_id, round_no, role, model, prediction.claim, key, prediction.probability,
         prediction.resolve_by, now.isoformat(timespec="seconds")))
    if rows:
        return int(rows[0]["id"])
    row = await run.fetchone("SELECT id FROM predictions WHERE meeting_id = ? AND role = ? AND claim_key = ?",
                             (meeting_id, role, key))  # resolved already: kept as it was
    return int(row["id"]) if row else 0


@dataclass(frozen=True)
class ClaimRow:
    """One prediction to store with :func:`store_claims`."""

    round_no: int
    role: str
    claim: Claim
    model: str | None
    now: datetime


async def store_claims(run: Tx, meeting_id: str, rows: list[ClaimRow]) -> dict[tuple[str, str], int]:
    """Several members' predictions in one INSERT (a round's, in the transaction of its statements: one round
    trip to the db), each as :func:`store_claim` stores one; the ids by (role, claim key). A claim restated
    after it was resolved is kept as it was and has no id here. ``rows`` must not hold the same (role, claim
    key) twice (PostgreSQL refuses to update a row twice in one statement)."""
    if not rows:
        return {}
    found = await run.fetchall(
        "INSERT INTO predictions(meeting_id, round, role, model, claim, claim_key, probability, resolve_by, "
        "created_at) VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows))
        + " ON CONFLICT(meeting_id, role, claim_key) DO UPDATE SET round = excluded.round, model = excluded.model, "
        "probability = excluded.probability, resolve_by = excluded.resolve_by WHERE predictions.outcome IS NULL "
        "RETURNING id, role, claim_key",
        tuple(v for r in rows for v in (meeting_id, r.round_no, r.role, r.model, r.claim.claim,
                                        claim_key(r.claim.claim), r.claim.probability, r.claim.resolve_by,
                                        r.now.isoformat(timespec="seconds"))))
    return {(str(f["role"]), str(f["claim_key"])): int(f["id"]) for f in found}


class PredictionStore:
    """Reads and writes predictions."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, meeting_id: str, round_no: int, role: str, prediction: Claim, *,
                     model: str | None, now: datetime) -> int:
        """Store (or, for a claim the member made before in this meeting, update) a prediction; its id."""
        return await store_claim(self.db, meeting_id, round_no, role, prediction, model=model, now=now)

    async def query(self, *, status: str = "open", place: tuple[str, str] | None = None, role: str | None = None,
                   meeting_id: str | None = None, limit: int = 200) -> list[PredictionRow]:
        """Predictions, soonest resolve-by first: ``status`` open, resolved or all; only those of meetings
        started from ``place`` (channel, chat id), of ``role`` or of ``meeting_id`` when given."""
        where: list[str] = []
        params: list[object] = []
        if status == "open":
            where.append("p.outcome IS NULL")
        elif status == "resolved":
            where.append("p.outcome IS NOT NULL")
        if place is not None:
            where += ["m.channel = ?", "m.chat_id = ?"]
            params += [place[0], place[1]]
        if role is not None:
            where.append("p.role = ?")
            params.append(role)
        if meeting_id is not None:
            where.append("p.meeting_id = ?")
            params.append(meeting_id)
        sql = (_SELECT + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY p.resolve_by, p.id LIMIT ?")
        return [_row(r) for r in await self.db.fetchall(sql, (*params, limit))]

    async def latest_resolved(self, *, limit: int = 200) -> list[PredictionRow]:
        """The resolved predictions, latest resolution first (read by the index on ``resolved_at``)."""
        rows = await self.db.fetchall(_SELECT + " WHERE p.resolved_at IS NOT NULL AND p.outcome IS NOT NULL "
                                                "ORDER BY p.resolved_at DESC, p.id DESC LIMIT ?", (limit,))
        return [_row(r) for r in rows]

    async def get(self, prediction_id: int) -> PredictionRow | None:
        """One prediction by id."""
        row = await self.db.fetchone(_SELECT + " WHERE p.id = ?", (prediction_id,))
        return _row(row) if row else None

    async def resolve(self, prediction_id: int, outcome: Outcome, *, by: str, now: datetime,
                      place: tuple[str, str] | None = None) -> Resolution:
        """Resolve an open prediction once (``place``: only one of a meeting started there)."""
        row = await self.get(prediction_id)
        if row is None or (place is not None and (row.channel, row.chat_id) != place):
            return Resolution(None, False)
        changed = bool(await self.db.fetchall(
            "UPDATE predictions SET outcome = ?, resolved_at = ?, resolved_by = ? WHERE id = ? AND outcome IS NULL "
            "RETURNING id", (outcome.value, now.isoformat(timespec="seconds"), by, prediction_id)))
        return Resolution(await self.get(prediction_id), changed)

    async def due(self, today: str, *, limit: int = 200) -> list[PredictionRow]:
        """Open predictions whose resolve-by date (ISO) is ``today`` or earlier."""
        rows = await self.db.fetchall(_SELECT + " WHERE p.outcome IS NULL AND p.resolve_by <= ? "
                                                "ORDER BY p.resolve_by, p.id LIMIT ?", (today, limit))
        return [_row(r) for r in rows]


def _row(r: Any) -> PredictionRow:
    get = r.__getitem__  # an aiosqlite.Row
    outcome = get("outcome")
    return PredictionRow(
        id=int(get("id")), meeting_id=get("meeting_id"), topic=get("topic"), round=int(get("round")),
        role=get("role"), model=get("model"), claim=get("claim"), probability=float(get("probability")),
        resolve_by=get("resolve_by"), created_at=get("created_at"),
        outcome=Outcome(outcome) if outcome else None, resolved_at=get("resolved_at"),
        resolved_by=get("resolved_by"), channel=get("channel"), chat_id=get("chat_id"),
        thread_id=get("thread_id"),
    )
