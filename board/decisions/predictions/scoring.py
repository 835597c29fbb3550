"""Scoring advisors against outcomes: the Brier score and the reliability table (pure functions).

For one advisor, over its predictions resolved yes or no (outcome 1 or 0):

- the **Brier score** is the mean of ``(p - outcome)^2``: 0 is perfect, 0.25 is what always saying
  50 % earns, 1 is always certain and always wrong. "Can't tell" (``unknown``) is not scored; it is
  counted apart, as are the predictions still open.
- the **reliability table** puts each stated probability in one of ten bins, ``[0, 0.1)``,
  ``[0.1, 0.2)`` ... ``[0.9, 1.0]`` (1.0 falls in the last), and gives per bin the count, the mean
  stated probability and the observed frequency (the share that came true). A calibrated advisor's
  70 % claims come true about 70 % of the time.

An advisor with fewer resolved predictions than the board's minimum gets no score (``brier`` None);
:func:`format_stats` says "too few resolved predictions (n=3)" instead of pretending.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from board.decisions.predictions.store import Outcome, PredictionRow

__all__ = [
    "BINS",
    "DEFAULT_MIN_RESOLVED",
    "Bin",
    "TrackRecord",
    "bin_index",
    "brier",
    "format_stats",
    "how_to_score",
    "reliability",
    "track_line",
    "track_records",
]

#: how many equal-width probability bins the reliability table has
BINS = 10
#: resolved predictions an advisor needs before it is given a score (config
#: ``board.meetings.min_resolved_predictions``)
DEFAULT_MIN_RESOLVED = 5


def bin_index(probability: float, bins: int = BINS) -> int:
    """The bin of a stated probability: 0.0-0.0999.. -> 0, ..., 0.9-1.0 -> bins-1. Rounded to 9
    places first so 0.7 (0.7 * 10 = 7.000000000000001) and 0.3 land where a person expects."""
    return min(math.floor(round(probability * bins, 9)), bins - 1)


@dataclass(frozen=True)
class Bin:
    """One row of a reliability table."""

    low: float
    high: float
    count: int
    mean_p: float
    observed: float  # the share of the bin's predictions that came true


def _scored(pairs: Iterable[tuple[float, Outcome]]) -> list[tuple[float, int]]:
    return [(p, 1 if o is Outcome.YES else 0) for p, o in pairs if o in (Outcome.YES, Outcome.NO)]


def brier(pairs: Iterable[tuple[float, Outcome]]) -> float | None:
    """Mean of (p - outcome)^2 over the yes/no pairs; None when there are none."""
    scored = _scored(pairs)
    if not scored:
        return None
    return math.fsum((p - o) ** 2 for p, o in scored) / len(scored)


def reliability(pairs: Iterable[tuple[float, Outcome]], bins: int = BINS) -> list[Bin]:
    """The non-empty bins of the yes/no pairs, lowest first."""
    grouped: dict[int, list[tuple[float, int]]] = {}
    for p, o in _scored(pairs):
        grouped.setdefault(bin_index(p, bins), []).append((p, o))
    return [Bin(low=i / bins, high=(i + 1) / bins, count=len(items),
                mean_p=math.fsum(p for p, _ in items) / len(items),
                observed=sum(o for _, o in items) / len(items))
            for i, items in sorted(grouped.items())]


@dataclass(frozen=True)
class TrackRecord:
    """One advisor's record: resolved yes/no (``n``), can't tell, still open, the score and the table
    (``brier`` None and ``bins`` empty while ``n`` is under the minimum)."""

    role: str
    n: int
    unknown: int
    open: int
    brier: float | None
    bins: tuple[Bin, ...]
    models: tuple[str, ...]

    @property
    def scored(self) -> bool:
        """True when the advisor has enough resolved predictions to be given a score."""
        return self.brier is not None


def track_records(rows: Sequence[PredictionRow], *, min_resolved: int = DEFAULT_MIN_RESOLVED) -> list[TrackRecord]:
    """Every advisor with a prediction, best scored first, then the unscored by name."""
    by_role: dict[str, list[PredictionRow]] = {}
    for row in rows:
        by_role.setdefault(row.role, []).append(row)
    records = []
    for role, mine in by_role.items():
        pairs = [(r.probability, r.outcome) for r in mine if r.outcome is not None]
        n = len(_scored(pairs))
        enough = n >= max(1, min_resolved)
        records.append(TrackRecord(
            role=role, n=n, unknown=sum(1 for r in mine if r.outcome is Outcome.UNKNOWN),
            open=sum(1 for r in mine if r.outcome is None),
            brier=brier(pairs) if enough else None, bins=tuple(reliability(pairs)) if enough else (),
            models=tuple(sorted({r.model for r in mine if r.model})),
        ))
    return sorted(records, key=lambda t: (t.brier is None, t.brier or 0.0, t.role))


def track_line(record: TrackRecord, min_resolved: int = DEFAULT_MIN_RESOLVED) -> str:
    """``finance: Brier 0.123 over 12 resolved (2 can't tell, 3 open)`` or the too-few line."""
    extra = f"{record.unknown} can't tell, {record.open} open"
    if record.brier is None:
        return f"{record.role}: too few resolved predictions (n={record.n}); a score needs {min_resolved}; {extra}"
    return f"{record.role}: Brier {record.brier:.3f} over {record.n} resolved ({extra})"


def format_stats(records: Sequence[TrackRecord], *, min_resolved: int = DEFAULT_MIN_RESOLVED,
                 fenced: bool = False) -> str:
    """The advisors' track records with their reliability tables, for ``/stats`` and ``sabha board stats``
    (``fenced``: each table in a Markdown code block, so a chat shows its columns in a fixed-width font)."""
    if not records:
        return ("No predictions yet. Members state them in board meetings (/meeting <topic>); once their "
                "resolve-by date comes, resolve them with /resolve <n> yes|no|unknown.")
    lines = ["Advisor track record (Brier score: 0 is perfect, 0.25 is always saying 50%; lower is better):"]
    for record in records:
        lines.append("- " + track_line(record, min_resolved))
        if record.bins:
            lines += ["```"] if fenced else []
            lines.append("  stated p    count  mean p  came true")
            lines += [f"  {b.low:.1f}-{b.high:.1f}  {b.count:>7}  {b.mean_p:>6.3f}  {b.observed:>9.3f}"
                      for b in record.bins]
            lines += ["```"] if fenced else []
    if not any(record.scored for record in records):
        lines += how_to_score(records, min_resolved)
    return "\n".join(lines)


def how_to_score(records: Sequence[TrackRecord], min_resolved: int = DEFAULT_MIN_RESOLVED) -> list[str]:
    """While no advisor has a score: how many predictions are resolved, how many more the closest advisor
    needs and how to resolve one (:func:`board.commands.predictions.stats_text` adds where a score is seen
    at once: ``sabha demo``)."""
    resolved = sum(record.n for record in records)
    closest = max(records, key=lambda record: (record.n, record.role))
    more = max(1, min_resolved) - closest.n
    progress = (f"{resolved} prediction{'' if resolved == 1 else 's'} resolved so far" if resolved
                else "no prediction is resolved yet")
    closest_says = f" ({closest.role} needs {more} more)" if resolved else ""
    return [f"No score yet: {progress}; an advisor is scored once {min_resolved} of its own are "
            f"resolved{closest_says}.",
            "To resolve one: /predictions lists the open ones and /resolve <n> yes|no|unknown records how it turned "
            "out (or the Track record page, /ui/track, once the web pages are on)."]
