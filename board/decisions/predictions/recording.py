"""What a meeting calls when a member's statement carries a prediction: :func:`prediction_writer` (the write,
for the statement's own transaction) or :func:`record_prediction` (on its own).

Recording never costs the meeting anything: a failure is logged and the meeting goes on (the
statement and its stance are stored by the meeting regardless, so the prediction is still in the
record of what was said).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from board.decisions.predictions.store import Claim, PredictionStore, store_claim
from board.storage import Database, Tx

__all__ = ["Staked", "prediction_writer", "record_prediction"]

log = logging.getLogger("sabha.predictions")


class Staked(Protocol):
    """A member's stance, as far as its prediction goes (:class:`board.room.decision.Stance` is one)."""

    @property
    def prediction(self) -> Claim | None: ...


async def record_prediction(db: Database, meeting_id: str, round_no: int, role: str, stance: Staked | None, *,
                            model: str | None, now: datetime) -> int | None:
    """Store the stance's prediction, if it has one; its id (None when there is none or it failed)."""
    p = _claim(meeting_id, role, stance, now)
    if p is None:
        return None
    try:
        prediction_id = await PredictionStore(db).record(meeting_id, round_no, role, p, model=model, now=now)
    except Exception:  # a prediction that cannot be stored must not end the meeting
        log.exception("meeting %s: could not record %s's prediction %r", meeting_id, role, p.claim)
        return None
    log.info("meeting %s: %s predicts %r (p=%.2f, by %s): prediction #%d", meeting_id, role, p.claim,
             p.probability, p.resolve_by, prediction_id)
    return prediction_id


def _claim(meeting_id: str, role: str, stance: Staked | None, now: datetime) -> Claim | None:
    """The stance's prediction if it is one (it resolves today or later)."""
    if stance is None or stance.prediction is None:
        return None
    p = stance.prediction
    if p.resolve_by < now.date().isoformat():
        log.info("meeting %s: %s's prediction %r resolves by %s, before today: not a prediction, not recorded",
                 meeting_id, role, p.claim, p.resolve_by)
        return None
    return p


def prediction_writer(meeting_id: str, round_no: int, role: str, stance: Staked | None, *, model: str | None,
                      now: datetime) -> Callable[[Tx], Awaitable[None]] | None:
    """The write of the stance's prediction inside a transaction the caller holds (the meeting's statement and
    its prediction commit together: one round trip to the db fewer than three, and no second connection
    waiting on the first's write lock); None when the stance has none. It runs under a savepoint: a prediction
    that cannot be stored is logged and rolled back alone, and the statement is stored all the same."""
    p = _claim(meeting_id, role, stance, now)
    if p is None:
        return None

    async def write(tx: Tx) -> None:
        await tx.execute("SAVEPOINT prediction")
        try:
            prediction_id = await store_claim(tx, meeting_id, round_no, role, p, model=model, now=now)
        except Exception:  # a prediction that cannot be stored must not end the meeting
            log.exception("meeting %s: could not record %s's prediction %r", meeting_id, role, p.claim)
            await tx.execute("ROLLBACK TO SAVEPOINT prediction")
            await tx.execute("RELEASE SAVEPOINT prediction")
            return
        await tx.execute("RELEASE SAVEPOINT prediction")
        log.info("meeting %s: %s predicts %r (p=%.2f, by %s): prediction #%d", meeting_id, role, p.claim,
                 p.probability, p.resolve_by, prediction_id)

    return write
