"""``GET /ui/track``: each advisor's track record and the predictions behind it (issue 27's calibration
on the web pages); ``POST /ui/track/predictions/{n}``: resolve one there.

Per advisor: the Brier score over its predictions resolved yes or no, how many that is, how many
could not be told and how many are still open, and the reliability table (stated probability bins
against how often they came true). The numbers are the board's own
(:func:`board.decisions.predictions.scoring.track_records`, the functions ``/stats`` and ``sabha board
stats`` print), with the board's minimum (``board.meetings.min_resolved_predictions``): an advisor
with fewer resolved predictions gets the board's "too few resolved predictions" line, no score.

When the scores count the made-up predictions of ``sabha demo`` (:mod:`board.room.demo_history`), the
page says so above the cards, in ``/stats``'s words.

Below, every prediction: the open ones first (soonest due first, those due now marked), each with a
form (its CSRF token, like the other forms) to say how it turned out, Yes / No / Can't tell; then the
resolved ones, latest first, with their outcome. Resolving here is what ``/resolve`` and ``sabha
predictions resolve`` do (:func:`board.decisions.predictions.resolving.resolve_words`: one conditional
update, the resolution request cancelled). Every answer to the form, a refusal too (no outcome, resolved
already), is a 303 to the page, whose note says what changed or why not, with the scores as they now are:
a reload never sends the form again.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from board.decisions.predictions.resolving import resolve_words
from board.decisions.predictions.scoring import track_line, track_records
from board.decisions.predictions.store import Outcome, PredictionRow, PredictionStore, parse_outcome
from board.room.demo_history import is_demo
from bot.web.context import PREFIX, WebContext, context_of
from bot.web.conversations import when_label
from bot.web.numbers import whole_number
from bot.web.pages import page

__all__ = ["MAX_PREDICTIONS", "PredictionView", "routes"]

MAX_PREDICTIONS = 100_000  # read for the scores (a board makes a few per meeting)
LISTED = 300  # predictions listed on the page
SAID = {Outcome.YES: "came true", Outcome.NO: "did not come true", Outcome.UNKNOWN: "can't tell (not scored)"}


@dataclass(frozen=True)
class PredictionView:
    """One prediction as the page lists it."""

    id: int
    advisor: str  # "📊 Finance"
    claim: str
    percent: int  # the stated probability, 0..100
    due: str  # the resolve-by date, ISO (YYYY-MM-DD)
    due_now: bool  # open and its date has come
    meeting_id: str
    topic: str
    outcome: str  # "" while open; yes / no / unknown
    said: str  # "came true" ...
    resolved: str  # when, as read


def _view(row: PredictionRow, labels: dict[str, str], today: str) -> PredictionView:
    return PredictionView(id=row.id, advisor=labels.get(row.role, row.role.capitalize()), claim=row.claim,
                          percent=round(row.probability * 100), due=row.resolve_by,
                          due_now=row.is_open and row.resolve_by <= today, meeting_id=row.meeting_id,
                          topic=row.topic, outcome=row.outcome.value if row.outcome else "",
                          said=SAID[row.outcome] if row.outcome else "", resolved=when_label(row.resolved_at))


async def render_track(request: web.Request, *, note: tuple[str, str] | None = None) -> web.Response:
    """The track record page; ``note`` (kind, text) on top."""
    ctx = context_of(request)
    minimum = ctx.min_resolved_predictions
    rows = await PredictionStore(ctx.db).query(status="all", limit=MAX_PREDICTIONS)
    records = track_records(rows, min_resolved=minimum)
    labels = ctx.labels(None)
    advisors = [{"role": r.role, "label": labels.get(r.role, r.role), "record": r,
                 "line": track_line(r, minimum).removeprefix(f"{r.role}: ")} for r in records]
    today = ctx.clock.now().date().isoformat()
    open_ = [_view(r, labels, today) for r in rows if r.is_open][:LISTED]
    resolved = sorted((r for r in rows if not r.is_open), key=lambda r: (r.resolved_at or "", r.id), reverse=True)
    return page(request, "track.html", active="track", title="Track record", advisors=advisors,
                minimum=minimum, total=len(rows), open=sum(1 for r in rows if r.is_open), note=note,
                demo=any(is_demo(r.meeting_id) for r in rows),
                open_predictions=open_, resolved_predictions=[_view(r, labels, today) for r in resolved][:LISTED])


async def track_page(request: web.Request) -> web.Response:
    """The page, with the note a resolve left (``?note=``)."""
    ctx = context_of(request)
    return await render_track(request, note=ctx.take_note(request.query.get("note", "")))


async def _resolve(ctx: WebContext, number: int, outcome: Outcome) -> tuple[bool, str]:
    """Resolve prediction ``number``; (changed, what to tell the owner)."""
    store = PredictionStore(ctx.db)
    changed, text = await resolve_words(store, [str(number), outcome.value], by="owner (web)",
                                        now=ctx.clock.now(), schedule=ctx.schedule)
    if not changed:
        return False, text
    return True, f"Recorded: prediction #{number} {SAID[outcome]}."


async def resolve_prediction(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    number = whole_number(request.match_info["n"])
    if number is None or await PredictionStore(ctx.db).get(number) is None:
        raise web.HTTPNotFound(text="No such prediction; the list is at /ui/track.")
    form = await request.post()
    outcome = parse_outcome(str(form.get("outcome") or ""))
    if outcome is None:
        note = ("problem", "Say how it turned out: Yes, No or Can't tell.")
    else:
        changed, text = await _resolve(ctx, number, outcome)
        note = ("ok" if changed else "problem", text)
    # every outcome is a redirect to the page: a reload there sends nothing again
    raise web.HTTPSeeOther(f"{PREFIX}/track?note={ctx.note(*note)}#prediction-{number}")


def routes() -> list[web.RouteDef]:
    """The page's routes (relative to ``/ui``)."""
    return [web.get("/track", track_page), web.post("/track/predictions/{n}", resolve_prediction)]
