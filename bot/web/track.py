"""``GET /ui/track``: each advisor's track record and the predictions behind it (issue 27's calibration
on the web pages); ``POST /ui/track/predictions/{n}``: resolve one there.

Per advisor: the Brier score over its predictions resolved yes or no, how many that is, how many
could not be told and how many are still open, and the reliability table (stated probability bins
against how often they came true). The numbers are the board's own, read from the tallies the db keeps in
step (:mod:`board.decisions.predictions.tally`, what ``/stats`` and ``sabha board stats`` print: one read, not
every prediction), with the board's minimum (``board.meetings.min_resolved_predictions``): an advisor
with fewer resolved predictions gets the board's "too few resolved predictions" line, no score.

When the scores count the made-up predictions of ``sabha demo`` (:mod:`board.room.demo_history`), the
page says so above the cards, in ``/stats``'s words.

Below, the predictions (up to :data:`LISTED` of each kind): the open ones first (soonest due first, those
due now marked), each with a form (its CSRF token, like the other forms) to say how it turned out, Yes / No /
Can't tell; then the resolved ones, latest first, with their outcome. Resolving here is what ``/resolve`` and ``sabha
predictions resolve`` do (:func:`board.decisions.predictions.resolving.resolve_words`: one conditional
update, the resolution request cancelled). Every answer to the form, a refusal too (no outcome, resolved
already), is a 303 to the page, whose note says what changed or why not, with the scores as they now are:
a reload never sends the form again.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from board.decisions.predictions.resolving import resolve_words
from board.decisions.predictions.scoring import track_line
from board.decisions.predictions.store import Outcome, PredictionRow, PredictionStore, parse_outcome
from board.decisions.predictions.tally import read_tallies, records_of, totals_of
from bot.web.context import PREFIX, WebContext, context_of
from bot.web.conversations import when_label
from bot.web.numbers import whole_number
from bot.web.pages import page

__all__ = ["LISTED", "PredictionView", "routes"]

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
    store = PredictionStore(ctx.db)
    tallies = await read_tallies(ctx.db)
    records = records_of(tallies, min_resolved=minimum)
    totals = totals_of(tallies)
    labels = ctx.labels(None)
    advisors = [{"role": r.role, "label": labels.get(r.role, r.role), "record": r,
                 "line": track_line(r, minimum).removeprefix(f"{r.role}: ")} for r in records]
    today = ctx.clock.now().date().isoformat()
    open_ = [_view(r, labels, today) for r in await store.query(status="open", limit=LISTED)]
    resolved = [_view(r, labels, today) for r in await store.latest_resolved(limit=LISTED)]
    return page(request, "track.html", active="track", title="Track record", advisors=advisors,
                minimum=minimum, total=totals.total, open=totals.open, note=note, demo=totals.demo,
                open_predictions=open_, resolved_predictions=resolved)


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
