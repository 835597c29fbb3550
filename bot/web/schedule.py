"""``GET /ui/schedule``: the standing work (``/every``, ``sabha schedule``) with each item's place, its next run
and what its runs cost this month; ``POST /ui/schedule/{n}/pause|resume|remove``: change one there.

The owner signed in to the pages is the owner, so the forms do what ``/standing pause|resume|remove`` does
(:class:`board.schedule.standing.StandingWork`: a pause cancels the pending run, a resume schedules the next one
from now). Every answer to a form, a refusal too (paused already, an unknown item), is a 303 to the page, whose
note says what changed or why not: a reload never sends the form again. Setting an item stays a chat's or the
terminal's (``/every`` in the place it is to run, ``sabha schedule add``): the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from board.schedule.dates import describe
from board.schedule.recurrence import EVERY_UNDERSTOOD
from board.schedule.standing import StandingProblem
from board.schedule.standing_store import ItemStatus, StandingItem
from bot.web.context import PREFIX, context_of
from bot.web.numbers import whole_number
from bot.web.pages import page

__all__ = ["StandingView", "routes"]

VERBS = ("pause", "resume", "remove")


@dataclass(frozen=True)
class StandingView:
    """One standing item as the page lists it."""

    id: int
    what: str  # "a brief every Monday at 09:00 (UTC)"
    place: str
    status: str  # active | paused
    next_run: str  # "Mon 2026-11-30 09:00 UTC", or ""
    cost: str  # "$0.00"


async def _view(item: StandingItem, cost: float) -> StandingView:
    next_run = describe(item.next_at, item.recurrence.tz()) if item.status is ItemStatus.ACTIVE and item.next_at \
        else ""
    return StandingView(id=item.id, what=item.title(), place=str(item.place), status=item.status.value,
                        next_run=next_run, cost=f"${cost:.2f}")


async def schedule_page(request: web.Request) -> web.Response:
    """The page, with the note a form left (``?note=``)."""
    ctx = context_of(request)
    work = ctx.standing
    items = [await _view(item, await work.month_cost(item)) for item in await work.items()]
    return page(request, "schedule.html", active="schedule", title="Schedule", items=items,
                note=ctx.take_note(request.query.get("note", "")), example=EVERY_UNDERSTOOD.split(", ")[0])


async def change_item(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    verb = request.match_info["verb"]
    number = whole_number(request.match_info["n"])
    if verb not in VERBS or number is None:
        raise web.HTTPNotFound(text="No such standing item; the list is at /ui/schedule.")
    change = {"pause": ctx.standing.pause, "resume": ctx.standing.resume, "remove": ctx.standing.remove}[verb]
    try:
        item = await change(number)
    except StandingProblem as problem:
        note = ("problem", str(problem).replace("/standing lists them", "the list is below"))
    else:
        state = f"; next run {describe(item.next_at, item.recurrence.tz())}" if item.next_at else ""
        note = ("ok", f"{verb.capitalize()}d #{item.id} {item.title()}{state}.")
    raise web.HTTPSeeOther(f"{PREFIX}/schedule?note={ctx.note(*note)}#standing-{number}")


def routes() -> list[web.RouteDef]:
    """The page's routes (relative to ``/ui``)."""
    return [web.get("/schedule", schedule_page), web.post("/schedule/{n}/{verb}", change_item)]
