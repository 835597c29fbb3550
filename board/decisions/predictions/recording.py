"""What a meeting calls when a member's statement carries a prediction: :func:`staked_claim` (what to store)
and :func:`predictions_writer` (the write of a round's predictions, for its statements' own transaction), or
:func:`record_prediction` (on its own).

Recording never costs the meeting anything: a failure is logged and the meeting goes on (the
statement and its stance are stored by the meeting regardless, so the prediction is still in the
record of what was said).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from board.decisions.predictions.store import Claim, ClaimRow, PredictionStore, claim_key, store_claims
from board.storage import Database, Dialect, Tx

__all__ = ["Staked", "StakedClaim", "predictions_writer", "record_prediction", "staked_claim"]

T = TypeVar("T")

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


@dataclass(frozen=True)
class StakedClaim:
    """A member's prediction as a round stores it: who staked it, in which round, on which model, when."""

    round_no: int
    role: str
    claim: Claim
    model: str | None
    now: datetime


def staked_claim(meeting_id: str, round_no: int, role: str, stance: Staked | None, *, model: str | None,
                 now: datetime) -> StakedClaim | None:
    """The stance's prediction to store with its statement (:func:`predictions_writer`); None when it has none
    (or one about the past)."""
    p = _claim(meeting_id, role, stance, now)
    return None if p is None else StakedClaim(round_no, role, p, model, now)


def predictions_writer(meeting_id: str, claims: Sequence[StakedClaim], *,
                       dialect: Dialect) -> Callable[[Tx], Awaitable[None]] | None:
    """The write of the claims inside a transaction the caller holds (the meeting's statements and their
    predictions commit together with its checkpoint); None when there are none.

    One INSERT for all of them (a round's predictions: one round trip to the db, not three per prediction). A
    prediction that cannot be stored is logged and left out alone; the statements are stored all the same: on
    SQLite a failing statement rolls back alone and the transaction goes on, so no savepoint is needed; on
    PostgreSQL a failing statement aborts the transaction, so the INSERT runs under a savepoint there. When the
    INSERT of all fails, each is tried on its own (under a savepoint each), so one bad claim costs no other."""
    if not claims:
        return None
    batch = list({(c.role, claim_key(c.claim.claim)): c for c in claims}.values())  # a claim once (the latest)
    guarded = dialect is not Dialect.SQLITE  # PostgreSQL (and any backend but SQLite)

    async def write(tx: Tx) -> None:
        try:
            stored = await _guarded(tx, guarded, lambda: store_claims(tx, meeting_id, [_row(c) for c in batch]))
        except Exception:
            log.warning("meeting %s: the round's %d predictions could not be stored together; one at a time",
                        meeting_id, len(batch), exc_info=True)
            for c in batch:
                await _one(tx, meeting_id, c)
            return
        for c in batch:
            _logged(meeting_id, c, stored.get((c.role, claim_key(c.claim.claim))))

    return write


async def _one(tx: Tx, meeting_id: str, c: StakedClaim) -> None:
    try:
        stored = await _guarded(tx, True, lambda: store_claims(tx, meeting_id, [_row(c)]))
    except Exception:  # a prediction that cannot be stored must not end the meeting
        log.exception("meeting %s: could not record %s's prediction %r", meeting_id, c.role, c.claim.claim)
        return
    _logged(meeting_id, c, stored.get((c.role, claim_key(c.claim.claim))))


async def _guarded(tx: Tx, savepoint: bool, work: Callable[[], Awaitable[T]]) -> T:
    """``work()`` under a savepoint (rolled back alone when it raises) if ``savepoint``, else as it is."""
    if not savepoint:
        return await work()
    await tx.execute("SAVEPOINT prediction")
    try:
        result = await work()
    except BaseException:
        await tx.execute("ROLLBACK TO SAVEPOINT prediction")
        await tx.execute("RELEASE SAVEPOINT prediction")
        raise
    await tx.execute("RELEASE SAVEPOINT prediction")
    return result


def _row(c: StakedClaim) -> ClaimRow:
    return ClaimRow(c.round_no, c.role, c.claim, c.model, c.now)


def _logged(meeting_id: str, c: StakedClaim, prediction_id: int | None) -> None:
    if prediction_id is None:
        log.info("meeting %s: %s restated %r, resolved already: kept as it was", meeting_id, c.role, c.claim.claim)
        return
    log.info("meeting %s: %s predicts %r (p=%.2f, by %s): prediction #%d", meeting_id, c.role, c.claim.claim,
             c.claim.probability, c.claim.resolve_by, prediction_id)
