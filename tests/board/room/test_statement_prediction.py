"""A member's statement and its prediction commit in one transaction with the meeting's checkpoint
(board/room/store.py ``statement`` with ``Checkpoint.also``), and a prediction that cannot be stored costs the
statement nothing (board/decisions/predictions/recording.py ``predictions_writer``: a round's predictions in one
INSERT, under a savepoint on PostgreSQL only; when that INSERT fails, each on its own)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from board.decisions.predictions.recording import predictions_writer, staked_claim
from board.room.decision import Prediction, Stance
from board.room.store import Checkpoint, MeetingStore, StatementRow
from board.storage import Database, Dialect, Tx

NOW = datetime(2026, 11, 25, 9, tzinfo=UTC)
STANCE = Stance(position="support", confidence=0.6, assumption="it pays",
                prediction=Prediction(claim="CAC stays under $50", probability=0.6, resolve_by="2027-03-31"))


def prediction_writer(db: Database, round_no: int, role: str, stance: Stance | None,
                      ) -> Callable[[Tx], Awaitable[None]] | None:
    claim = staked_claim("m-1", round_no, role, stance, model="m", now=NOW)
    return predictions_writer("m-1", [claim] if claim else [], dialect=db.dialect)


async def _meeting(db: Database) -> MeetingStore:
    await db.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                     "VALUES ('m-1', 'Prices', 'board', 'general', 'running', '2026-11-25')")
    return MeetingStore(db)


async def _said(db: Database) -> tuple[int, str | None]:
    rows = await db.fetchall("SELECT role FROM meeting_statements WHERE meeting_id = 'm-1'")
    checkpoint = await db.fetchone("SELECT checkpoint FROM meetings WHERE id = 'm-1'")
    return len(rows), checkpoint["checkpoint"] if checkpoint else None


@pytest.mark.backends
async def test_a_statement_its_prediction_and_the_checkpoint_commit_together(database: Database) -> None:
    async with database as db:
        store = await _meeting(db)
        write = prediction_writer(db, 1, "finance", STANCE)
        assert write is not None
        assert await store.statement("m-1", 1, "finance", "Lisbon.", model="m", cost_usd=0.0,
                                     checkpoint=Checkpoint({"round": 1}, None, write))
        predictions = await db.fetchall("SELECT role, claim, round FROM predictions WHERE meeting_id = 'm-1'")
        assert [(r["role"], r["claim"], r["round"]) for r in predictions] == [("finance", "CAC stays under $50", 1)]
        assert (await _said(db))[0] == 1
        # a meeting that ended meanwhile: nothing of the statement is written, its prediction neither
        await db.execute("UPDATE meetings SET status = 'ended' WHERE id = 'm-1'")
        later = prediction_writer(db, 2, "critic", STANCE)
        assert not await store.statement("m-1", 2, "critic", "No.", model="m", cost_usd=0.0,
                                         checkpoint=Checkpoint({"round": 2}, None, later))
        assert len(await db.fetchall("SELECT id FROM predictions")) == 1 and (await _said(db))[0] == 1


@pytest.mark.backends
async def test_a_prediction_that_cannot_be_stored_leaves_the_statement_stored(database: Database) -> None:
    async with database as db:
        store = await _meeting(db)
        await db.execute("ALTER TABLE predictions RENAME TO predictions_elsewhere")  # every insert fails now
        write = prediction_writer(db, 1, "finance", STANCE)
        assert write is not None
        assert await store.statement("m-1", 1, "finance", "Lisbon.", model="m", cost_usd=0.0,
                                     checkpoint=Checkpoint({"round": 1}, None, write))
        count, checkpoint = await _said(db)
        assert count == 1 and checkpoint is not None and '"round": 1' in checkpoint
        assert not await db.fetchall("SELECT id FROM predictions_elsewhere")


def test_a_stance_without_a_prediction_or_about_the_past_writes_nothing() -> None:
    assert staked_claim("m-1", 1, "finance", None, model="m", now=NOW) is None
    past = Stance(position="support", confidence=0.6, assumption="it pays",
                  prediction=Prediction(claim="Churn fell", probability=0.7, resolve_by="2026-11-01"))
    assert staked_claim("m-1", 1, "finance", past, model="m", now=NOW) is None
    assert predictions_writer("m-1", [], dialect=Dialect.SQLITE) is None


ROLES = ("research", "content", "finance", "strategy", "critic")


def _stance(n: int, probability: float = 0.6) -> Stance:
    claim = Prediction.model_construct(claim=f"Claim number {n} holds", probability=probability,
                                       resolve_by="2027-03-31")  # unvalidated: a probability the db refuses
    return Stance(position="support", confidence=0.6, assumption="it pays", prediction=claim)


async def _round(db: Database, store: MeetingStore, stances: list[Stance]) -> bool:
    claims = [staked_claim("m-1", 1, role, stance, model="m", now=NOW)
              for role, stance in zip(ROLES, stances, strict=True)]
    write = predictions_writer("m-1", [c for c in claims if c is not None], dialect=db.dialect)
    said = [StatementRow(1, role, f"{role} speaks.") for role in ROLES]
    return await store.statements("m-1", said, checkpoint=Checkpoint({"round": 1}, None, write))


async def test_a_rounds_predictions_are_one_insert_without_a_savepoint_on_sqlite(database: Database) -> None:
    """A round's five predictions: one INSERT in the round's transaction (was a SAVEPOINT, an INSERT and a RELEASE
    each: 15 round trips the next round waited for)."""
    async with database as db:
        store = await _meeting(db)
        express: Any = db
        seen: list[str] = []
        await express.on_express(lambda conn: conn.set_trace_callback(seen.append))  # where transactions run
        try:
            assert await _round(db, store, [_stance(n) for n in range(5)])
        finally:
            await express.on_express(lambda conn: conn.set_trace_callback(None))
        touching = [sql for sql in seen if "predictions" in sql or "SAVEPOINT" in sql]
        # one statement (SQLite's trace reports a statement with RETURNING once per step: the same text again)
        assert len(set(touching)) == 1 and touching[0].startswith("INSERT INTO predictions"), seen
        rows = await db.fetchall("SELECT role FROM predictions WHERE meeting_id = 'm-1' ORDER BY id")
        assert [r["role"] for r in rows] == list(ROLES)


@pytest.mark.backends
async def test_one_prediction_the_db_refuses_costs_the_rounds_others_nothing(database: Database) -> None:
    async with database as db:
        store = await _meeting(db)
        assert await _round(db, store, [_stance(n, 1.5 if n == 2 else 0.6) for n in range(5)])
        rows = await db.fetchall("SELECT role FROM predictions WHERE meeting_id = 'm-1' ORDER BY id")
        assert [r["role"] for r in rows] == [r for r in ROLES if r != "finance"]
        count, checkpoint = await _said(db)
        assert count == 5 and checkpoint is not None and '"round": 1' in checkpoint
