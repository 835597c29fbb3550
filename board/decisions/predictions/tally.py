"""Track records read from stored tallies (migration ``1325_prediction_tallies``), not recomputed.

Triggers on ``predictions`` keep, per advisor, model, demo-or-not and reliability bin, how many predictions are
open, can't tell and scored, the sum of their squared errors, of their stated probabilities and how many came
true. A track record is then one small read (a few rows per advisor) whatever the number of predictions:
:func:`read_tallies` is one statement, :func:`records_of` builds the same
:class:`~board.decisions.predictions.scoring.TrackRecord` values that
:func:`~board.decisions.predictions.scoring.track_records` computes from every row
(tests/board/decisions/test_prediction_tallies.py holds them equal after every kind of write, on both
backends). ``/stats``, ``sabha board stats``, the web's track record page and every meeting's framing read these.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from board.decisions.predictions.scoring import BINS, DEFAULT_MIN_RESOLVED, Bin, TrackRecord
from board.storage import Database

__all__ = ["Tally", "TallyTotals", "read_tallies", "records_of", "stored_track_records", "totals_of"]

#: the bin of a prediction open or resolved "can't tell" (not in the reliability table)
UNSCORED_BIN = -1


@dataclass(frozen=True)
class Tally:
    """One stored row: the predictions of ``role`` spoken by ``model`` (demo or not) in reliability bin ``bin``
    (:data:`UNSCORED_BIN` for the open and can't-tell ones)."""

    role: str
    model: str
    demo: bool
    bin: int
    open: int
    unknown: int
    scored: int
    sum_sq: float
    sum_p: float
    came_true: int

    @property
    def count(self) -> int:
        """How many predictions this row stands for."""
        return self.open + self.unknown + self.scored


@dataclass(frozen=True)
class TallyTotals:
    """Counts over every advisor: all predictions, the open ones, and whether any is made up (``sabha demo``)."""

    total: int
    open: int
    demo: bool


async def read_tallies(db: Database) -> list[Tally]:
    """Every stored tally (one statement; a few rows per advisor, however many predictions)."""
    rows = await db.fetchall("SELECT role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p, came_true "
                             "FROM prediction_tallies")
    return [Tally(role=str(r["role"]), model=str(r["model"]), demo=bool(r["demo"]), bin=int(r["bin"]),
                  open=int(r["open_n"]), unknown=int(r["unknown_n"]), scored=int(r["scored_n"]),
                  sum_sq=float(r["sum_sq"]), sum_p=float(r["sum_p"]), came_true=int(r["came_true"]))
            for r in rows]


def totals_of(tallies: Sequence[Tally]) -> TallyTotals:
    """How many predictions there are, how many open, and whether any is the demo's."""
    return TallyTotals(total=sum(t.count for t in tallies), open=sum(t.open for t in tallies),
                       demo=any(t.demo and t.count > 0 for t in tallies))


def _record(role: str, mine: list[Tally], min_resolved: int) -> TrackRecord:
    n = sum(t.scored for t in mine)
    enough = n >= max(1, min_resolved)
    bins: dict[int, list[Tally]] = {}
    for t in mine:
        if t.bin != UNSCORED_BIN and t.scored > 0:
            bins.setdefault(t.bin, []).append(t)
    table = tuple(Bin(low=i / BINS, high=(i + 1) / BINS, count=(count := sum(t.scored for t in items)),
                      mean_p=math.fsum(t.sum_p for t in items) / count,
                      observed=sum(t.came_true for t in items) / count)
                  for i, items in sorted(bins.items()))
    return TrackRecord(role=role, n=n, unknown=sum(t.unknown for t in mine), open=sum(t.open for t in mine),
                       brier=math.fsum(t.sum_sq for t in mine) / n if enough else None,
                       bins=table if enough else (),
                       models=tuple(sorted({t.model for t in mine if t.model and t.count > 0})))


def records_of(tallies: Sequence[Tally], *, min_resolved: int = DEFAULT_MIN_RESOLVED,
               roles: Collection[str] | None = None, demo: bool = True) -> list[TrackRecord]:
    """The track records of every advisor with a prediction (only ``roles`` when given; without the demo's
    made-up ones when ``demo`` is False), ordered as :func:`~board.decisions.predictions.scoring.track_records`
    orders them: best scored first, then the unscored by name."""
    by_role: dict[str, list[Tally]] = {}
    for t in tallies:
        if t.count <= 0 or (roles is not None and t.role not in roles) or (t.demo and not demo):
            continue
        by_role.setdefault(t.role, []).append(t)
    records = [_record(role, mine, min_resolved) for role, mine in by_role.items()]
    return sorted(records, key=lambda t: (t.brier is None, t.brier or 0.0, t.role))


async def stored_track_records(db: Database, *, min_resolved: int = DEFAULT_MIN_RESOLVED,
                               roles: Collection[str] | None = None, demo: bool = True) -> list[TrackRecord]:
    """:func:`records_of` the stored tallies: the track records in one read."""
    return records_of(await read_tallies(db), min_resolved=min_resolved, roles=roles, demo=demo)
