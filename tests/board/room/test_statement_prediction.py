"""A member's statement and its prediction commit in one transaction with the meeting's checkpoint
(board/room/store.py ``statement`` with ``Checkpoint.also``), and a prediction that cannot be stored costs the
statement nothing (board/decisions/predictions/recording.py ``prediction_writer``, under a savepoint)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from board.decisions.predictions.recording import prediction_writer
from board.room.decision import Prediction, Stance
from board.room.store import Checkpoint, MeetingStore
from board.storage import Database

NOW = datetime(2026, 11, 25, 9, tzinfo=UTC)
STANCE = Stance(position="support", confidence=0.6, assumption="it pays",
                prediction=Prediction(claim="CAC stays under $50", probability=0.6, resolve_by="2027-03-31"))


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
        write = prediction_writer("m-1", 1, "finance", STANCE, model="m", now=NOW)
        assert write is not None
        assert await store.statement("m-1", 1, "finance", "Lisbon.", model="m", cost_usd=0.0,
                                     checkpoint=Checkpoint({"round": 1}, None, write))
        predictions = await db.fetchall("SELECT role, claim, round FROM predictions WHERE meeting_id = 'm-1'")
        assert [(r["role"], r["claim"], r["round"]) for r in predictions] == [("finance", "CAC stays under $50", 1)]
        assert (await _said(db))[0] == 1
        # a meeting that ended meanwhile: nothing of the statement is written, its prediction neither
        await db.execute("UPDATE meetings SET status = 'ended' WHERE id = 'm-1'")
        later = prediction_writer("m-1", 2, "critic", STANCE, model="m", now=NOW)
        assert not await store.statement("m-1", 2, "critic", "No.", model="m", cost_usd=0.0,
                                         checkpoint=Checkpoint({"round": 2}, None, later))
        assert len(await db.fetchall("SELECT id FROM predictions")) == 1 and (await _said(db))[0] == 1


@pytest.mark.backends
async def test_a_prediction_that_cannot_be_stored_leaves_the_statement_stored(database: Database) -> None:
    async with database as db:
        store = await _meeting(db)
        await db.execute("ALTER TABLE predictions RENAME TO predictions_elsewhere")  # every insert fails now
        write = prediction_writer("m-1", 1, "finance", STANCE, model="m", now=NOW)
        assert write is not None
        assert await store.statement("m-1", 1, "finance", "Lisbon.", model="m", cost_usd=0.0,
                                     checkpoint=Checkpoint({"round": 1}, None, write))
        count, checkpoint = await _said(db)
        assert count == 1 and checkpoint is not None and '"round": 1' in checkpoint
        assert not await db.fetchall("SELECT id FROM predictions_elsewhere")


def test_a_stance_without_a_prediction_or_about_the_past_writes_nothing() -> None:
    assert prediction_writer("m-1", 1, "finance", None, model="m", now=NOW) is None
    past = Stance(position="support", confidence=0.6, assumption="it pays",
                  prediction=Prediction(claim="Churn fell", probability=0.7, resolve_by="2026-11-01"))
    assert prediction_writer("m-1", 1, "finance", past, model="m", now=NOW) is None
