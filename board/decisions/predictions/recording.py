"""What a meeting calls when a member's statement carries a prediction: :func:`record_prediction`.

Recording never costs the meeting anything: a failure is logged and the meeting goes on (the
statement and its stance are stored by the meeting regardless, so the prediction is still in the
record of what was said).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from board.decisions.predictions.store import Claim, PredictionStore
from board.storage import Database

__all__ = ["Staked", "record_prediction"]

log = logging.getLogger("sabha.predictions")


class Staked(Protocol):
    """A member's stance, as far as its prediction goes (:class:`board.room.decision.Stance` is one)."""

    @property
    def prediction(self) -> Claim | None: ...


async def record_prediction(db: Database, meeting_id: str, round_no: int, role: str, stance: Staked | None, *,
                            model: str | None, now: datetime) -> int | None:
    """Store the stance's prediction, if it has one; its id (None when there is none or it failed)."""
    if stance is None or stance.prediction is None:
        return None
    p = stance.prediction
    if p.resolve_by < now.date().isoformat():
        log.info("meeting %s: %s's prediction %r resolves by %s, before today: not a prediction, not recorded",
                 meeting_id, role, p.claim, p.resolve_by)
        return None
    try:
        prediction_id = await PredictionStore(db).record(meeting_id, round_no, role, p, model=model, now=now)
    except Exception:  # a prediction that cannot be stored must not end the meeting
        log.exception("meeting %s: could not record %s's prediction %r", meeting_id, role, p.claim)
        return None
    log.info("meeting %s: %s predicts %r (p=%.2f, by %s): prediction #%d", meeting_id, role, p.claim,
             p.probability, p.resolve_by, prediction_id)
    return prediction_id
