"""The decisions page and what the owner does there: rule on decisions, date, snooze and close actions.

``GET /ui/decisions`` lists the open action items (due date, OVERDUE) and the decisions with
their state (:mod:`bot.web.rulings`). Its forms, each a POST with the page's CSRF token:

- ``/ui/decisions/{id}/ratify|veto|revisit`` (``reason``: optional for a veto, required for a
  revisit) run the very ``/ratify``, ``/veto``, ``/revisit`` commands of
  :mod:`board.commands.decisions` through :meth:`board.commands.registry.CommandRegistry.run_command`, as the owner on
  the ``web`` channel (so the ruling is recorded ``by web:owner``, ``via web``): a veto drops the
  open action items and their reminders, a revisit schedules the follow-up meeting, and the page
  shows the command's own words. A second press finds the verdict given and changes nothing
  (``already ratified``). The live meeting page carries the same forms (``back=meeting``);
- ``/ui/actions/{n}/done|due|snooze`` call :class:`board.decisions.reminders.Reminders` as ``/done``,
  ``/due`` and ``/snooze`` do (``when``: what ``/due`` takes; ``length``: a day by default): the
  reminder is cancelled or moved; a date the board cannot read is answered with its words and
  nothing changes.

A form that did something redirects (303) back to its page, which shows what was said once
(:meth:`bot.web.context.WebContext.note`); one that did not is answered by that page at once
with the problem (400 bad input, 409 nothing to change) and the typed value kept. An unknown
decision or item is a 404 page.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from board.decisions.ratify import DecisionRecord, Outcome, Verdict
from board.decisions.reminders import ActionProblem, Changed
from board.envelope import Envelope
from board.routing.router import Route
from board.schedule.dates import UNDERSTOOD
from bot.web.context import PREFIX, WebContext, context_of
from bot.web.numbers import whole_number
from bot.web.pages import page, render_meeting
from bot.web.rulings import action_view, ruling_view

__all__ = ["MAX_REASON", "OWNER", "SNOOZE_CHOICES", "routes"]

log = logging.getLogger("sabha.web")

#: who rules from the web: the owner, on the ``web`` channel (recorded as ``web:owner``)
OWNER = "owner"
OWNER_NAME = "the owner (web)"
MAX_REASON = 500  # characters of a veto's or revisit's reason
MAX_WHEN = 100  # characters of a due date as typed
#: the Snooze form's lengths (value, label); "" is /snooze's default, a day
SNOOZE_CHOICES = (("1h", "1 hour"), ("", "1 day"), ("3d", "3 days"), ("1w", "1 week"))
_VERBS = {"ratify": Verdict.RATIFIED, "veto": Verdict.VETOED, "revisit": Verdict.REVISIT}
_DID = {Verdict.RATIFIED: "ratified", Verdict.VETOED: "vetoed", Verdict.REVISIT: "sent back for a revisit"}


# -- the page -----------------------------------------------------------------------------------


async def render_decisions(request: web.Request, *, status: int = 200, note: tuple[str, str] | None = None,
                           typed: Mapping[int, str] | None = None) -> web.Response:
    """The decisions page; ``note`` (kind, text) on top; ``typed``: item -> the due date typed (kept on a problem)."""
    ctx = context_of(request)
    decided = [row for row in await ctx.meetings.list(100) if row.decision]
    records = {r.meeting_id: r for r in await ctx.decisions.recent(limit=200)}
    rulings = {}
    for row in decided:
        record = records.get(row.id) or (await ctx.decisions.find(row.id)).record
        if record is not None:
            rulings[row.id] = ruling_view(record)
    actions = await ctx.meetings.actions(include_done=True, limit=500)
    now, zone = ctx.clock.now(), ctx.reminders.zone
    return page(request, "decisions.html", status=status, active="decisions", title="Decisions and actions",
                decisions=decided, rulings=rulings, note=note, typed=dict(typed or {}),
                snooze_choices=SNOOZE_CHOICES, understood=UNDERSTOOD,
                open_actions=[action_view(a, now, zone, ctx.reminders.who) for a in actions
                              if a.status == "open"],
                done_actions=[a for a in actions if a.status != "open"][-50:])


async def decisions_page(request: web.Request) -> web.Response:
    return await render_decisions(request, note=context_of(request).take_note(request.query.get("note", "")))


def _back(form: Mapping[str, Any]) -> str:
    """Which page a form came from: ``meeting`` (the meeting page) or ``decisions``."""
    return "meeting" if str(form.get("back") or "") == "meeting" else "decisions"


def _done(ctx: WebContext, back: str, meeting_id: str, text: str) -> web.HTTPSeeOther:
    """Back to the form's page, which shows ``text`` once."""
    token = ctx.note("ok", text)
    if back == "meeting":
        return web.HTTPSeeOther(f"{PREFIX}/meetings/{meeting_id}?note={token}#ruling-{meeting_id}")
    return web.HTTPSeeOther(f"{PREFIX}/decisions?note={token}#d-{meeting_id}")


async def _refused(request: web.Request, back: str, meeting_id: str, status: int, text: str) -> web.Response:
    """The form's page at once, with what was wrong (nothing changed)."""
    if back == "meeting":
        return await render_meeting(request, meeting_id, status=status, note=("problem", text))
    return await render_decisions(request, status=status, note=("problem", text))


# -- rulings ------------------------------------------------------------------------------------


async def _decision(ctx: WebContext, meeting_id: str) -> tuple[DecisionRecord | None, Outcome]:
    """The decision of exactly ``meeting_id`` (no prefixes on the web: a form names its decision)."""
    found = await ctx.decisions.find(meeting_id)
    if found.record is None or found.record.meeting_id != meeting_id:
        return None, Outcome.NOT_FOUND
    return found.record, found.outcome


async def rule(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    meeting_id, verb = request.match_info["id"], request.match_info["verb"]
    verdict = _VERBS.get(verb)
    if verdict is None:
        raise web.HTTPNotFound(text=f"There is no {verb[:20]!r} for a decision: ratify, veto or revisit.")
    form = await request.post()
    back = _back(form)
    reason = " ".join(str(form.get("reason") or "").split())
    async with ctx.rulings:  # read, rule, read again: a second press waits and finds it ruled
        return await _rule(request, ctx, meeting_id, verdict, back, reason)


async def _rule(request: web.Request, ctx: WebContext, meeting_id: str, verdict: Verdict, back: str,
                reason: str) -> web.StreamResponse:
    verb = request.match_info["verb"]
    record, outcome = await _decision(ctx, meeting_id)
    if record is None:
        raise web.HTTPNotFound(text=f"No decision {meeting_id[:80]!r}: no meeting has that id (it may have been "
                                    "removed); the decisions are listed at /ui/decisions.")
    if outcome is Outcome.NO_DECISION:
        return await _refused(request, "decisions", meeting_id, 409, f"Meeting {meeting_id} \u201c{record.topic}"
                              f"\u201d reached no decision, so there is nothing to {verb}.")
    if len(reason) > MAX_REASON:
        return await _refused(request, back, meeting_id, 400, f"The reason is {len(reason):,} characters long; "
                              f"keep it under {MAX_REASON}. Nothing changed.")
    if verdict is Verdict.REVISIT and not reason and record.verdict not in (Verdict.VETOED, Verdict.REVISIT):
        return await _refused(request, back, meeting_id, 400, f"Say why the board should revisit decision "
                              f"{meeting_id} \u201c{record.topic}\u201d: the reason goes on the follow-up meeting's "
                              "agenda. Nothing changed.")
    text = meeting_id if verdict is Verdict.RATIFIED else f"{meeting_id} {reason}".strip()
    envelope = Envelope(channel="web", text=f"/{verb} {text}", sender=OWNER, chat_id=OWNER, sender_name=OWNER_NAME,
                        is_owner=True, received_at=ctx.clock.now())
    reply = await ctx.commands.run_command(envelope, Route(kind="command", role="general", text=text,
                                                        session_key=f"web:{OWNER}", command=verb))
    after, _ = await _decision(ctx, meeting_id)
    if after is not None and after.verdict is verdict and record.verdict is not verdict:
        log.info("web: the owner %s decision %s", _DID[verdict], meeting_id)
        raise _done(ctx, back, meeting_id, reply.text)
    return await _refused(request, back, meeting_id, 409, reply.text)  # already so, or final: the command's words


# -- action items -------------------------------------------------------------------------------


def _number(request: web.Request) -> int:
    word = request.match_info["n"]
    number = whole_number(word)
    if number is None:
        raise web.HTTPNotFound(text=f"No action item #{word[:20]}; the list is at /ui/decisions.")
    return number


async def _open_item(ctx: WebContext, number: int) -> None:
    """404 unless item ``number`` exists (a closed one is answered by the board's own words)."""
    if await ctx.meetings.action(number) is None:
        raise web.HTTPNotFound(text=f"No open action item #{number}; it may be done already, or the number is "
                                    "wrong: the list is at /ui/decisions.")


def _said(changed: Changed, ctx: WebContext) -> str:
    row = changed.row
    return (f"#{row.id} {row.task} (owed by {ctx.reminders.who(row.owner)}) is now due {changed.when.said}; the "
            "reminder goes to the chat where its meeting was held then.")


async def action_done(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    number = _number(request)
    await _open_item(ctx, number)
    try:
        row = await ctx.reminders.done(number, by=f"web:{OWNER}")
    except ActionProblem as problem:
        return await render_decisions(request, status=409, note=("problem", str(problem)))
    log.info("web: the owner closed action item #%s", row.id)
    token = ctx.note("ok", f"Done: #{row.id} {row.task} (owed by {ctx.reminders.who(row.owner)}), "
                                f"from {row.meeting_id}.")
    raise web.HTTPSeeOther(f"{PREFIX}/decisions?note={token}#actions")


async def action_due(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    number = _number(request)
    await _open_item(ctx, number)
    form = await request.post()
    when = " ".join(str(form.get("when") or "").split())
    if not when or len(when) > MAX_WHEN:
        zone = ctx.reminders.zone
        return await render_decisions(request, status=400, typed={number: when[:MAX_WHEN]}, note=(
            "problem", f"Say when item #{number} is due, e.g. friday, +2h or 2026-12-15 (I understand {UNDERSTOOD}; "
                       f"times are {getattr(zone, 'key', None) or zone}). Nothing changed."))
    try:
        changed = await ctx.reminders.set_due(number, when)
    except ActionProblem as problem:
        return await render_decisions(request, status=400, typed={number: when}, note=("problem", str(problem)))
    log.info("web: the owner set action item #%s due %s", number, changed.when.said)
    token = ctx.note("ok", _said(changed, ctx))
    raise web.HTTPSeeOther(f"{PREFIX}/decisions?note={token}#a-{number}")


async def action_snooze(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    number = _number(request)
    await _open_item(ctx, number)
    form = await request.post()
    length = " ".join(str(form.get("length") or "").split())[:MAX_WHEN]
    try:
        changed = await ctx.reminders.snooze(number, length)
    except ActionProblem as problem:
        return await render_decisions(request, status=400, note=("problem", str(problem)))
    log.info("web: the owner snoozed action item #%s to %s", number, changed.when.said)
    token = ctx.note("ok", f"Snoozed #{changed.row.id} {changed.row.task}: the reminder comes again "
                           f"{changed.when.said}.")
    raise web.HTTPSeeOther(f"{PREFIX}/decisions?note={token}#a-{number}")


def routes() -> list[web.RouteDef]:
    """The decisions page's routes (relative to ``/ui``)."""
    return [
        web.get("/decisions", decisions_page), web.post("/decisions/{id}/{verb}", rule),
        web.post("/actions/{n}/done", action_done), web.post("/actions/{n}/due", action_due),
        web.post("/actions/{n}/snooze", action_snooze),
    ]
