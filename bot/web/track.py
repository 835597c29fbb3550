"""``GET /ui/track``: each advisor's track record (issue 27's calibration on the web pages).

Per advisor: the Brier score over its predictions resolved yes or no, how many that is, how many
could not be told and how many are still open, and the reliability table (stated probability bins
against how often they came true). The numbers are the board's own
(:func:`board.decisions.predictions.scoring.track_records`, the functions ``/stats`` and ``sabha board
stats`` print), with the board's minimum (``board.meetings.min_resolved_predictions``): an advisor
with fewer resolved predictions gets the board's "too few resolved predictions" line, no score.
Predictions are resolved in a chat (``/resolve``, the buttons of a resolution request) or with
``sabha predictions resolve``; this page only reads.
"""

from __future__ import annotations

from aiohttp import web

from board.decisions.predictions.scoring import track_line, track_records
from board.decisions.predictions.store import PredictionStore
from bot.web.context import context_of
from bot.web.pages import page

__all__ = ["MAX_PREDICTIONS", "routes"]

MAX_PREDICTIONS = 100_000  # read for the scores (a board makes a few per meeting)


async def track_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    minimum = ctx.min_resolved_predictions
    rows = await PredictionStore(ctx.db).query(status="all", limit=MAX_PREDICTIONS)
    records = track_records(rows, min_resolved=minimum)
    labels = ctx.labels(None)
    advisors = [{"role": r.role, "label": labels.get(r.role, r.role), "record": r,
                 "line": track_line(r, minimum).removeprefix(f"{r.role}: ")} for r in records]
    return page(request, "track.html", active="track", title="Track record", advisors=advisors, minimum=minimum,
                total=len(rows), open=sum(1 for r in rows if r.is_open))


def routes() -> list[web.RouteDef]:
    """The page's route (relative to ``/ui``)."""
    return [web.get("/track", track_page)]
