"""The owner's pages (all under ``/ui/``; :mod:`bot.web.app` guards them).

``GET /ui/`` the board (advisors, emoji, model, soul version and load state, last activity);
``/ui/sessions`` and ``/ui/sessions/{id}`` conversations as a person reads them
(:mod:`bot.web.conversations`: advisor, place, last activity, preview; who said what, in Markdown);
``/ui/meetings``, ``/ui/meetings/new`` (POST ``/ui/meetings`` starts one), ``/ui/meetings/{id}`` one
meeting, live while it runs (:mod:`bot.web.meeting_stream`), with the owner's contribution box and
controls (:mod:`bot.web.meeting_table`); ``/ui/decisions`` decisions and action
items (:mod:`bot.web.decisions`); ``/ui/track`` the advisors' track record and the predictions to
resolve (:mod:`bot.web.track`); ``/ui/cost`` cost per day and per role as SVG charts (nothing spent:
why, and no empty chart); ``/ui/login`` (GET shows the link's Sign in button or how to get a link;
POST redeems it), POST ``/ui/logout``; ``/ui/static/{file}``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from board.commands.decisions import verdict_label
from board.conversation.sessions import SessionRef
from board.decisions.ratify import Outcome, verdicts
from board.envelope import Envelope
from board.roles import GENERAL
from board.room.convene import MeetingInProgress
from board.storage import Database, Dialect
from bot.web.auth import COOKIE, LinkVerdict, client_of, csrf_token, session_of, set_cookie
from bot.web.context import PREFIX, WebContext, context_of
from bot.web.conversations import ConversationItem, conversation_item, transcript_line, when_label
from bot.web.meeting_table import table_box
from bot.web.numbers import clamped, whole_number
from bot.web.render import bar_chart, render_page
from bot.web.rulings import meeting_actions, proposed, ruling_view
from bot.web.view import ELSEWHERE, MeetingView, events_from_record

__all__ = ["MAX_TOPIC", "error_page", "page", "render_meeting", "routes"]

log = logging.getLogger("sabha.web")

STATIC = Path(__file__).parent / "static"
MAX_TOPIC = 2000  # characters of a meeting topic
MAX_ROUNDS = 5
TRANSCRIPT_ENTRIES = 400
MAX_CONVERSATIONS = 100  # listed on the Conversations page: the ones last written to
PREVIEW_ENTRIES = 40  # of each transcript's end, read for its places and its last message
PREVIEW_READS = 4  # transcripts read at once for the list
NAV = (("board", "/ui/", "Board"), ("chat", "/ui/chat", "Chat"), ("sessions", "/ui/sessions", "Conversations"),
       ("meetings", "/ui/meetings", "Meetings"), ("decisions", "/ui/decisions", "Decisions"),
       ("track", "/ui/track", "Track record"), ("schedule", "/ui/schedule", "Schedule"),
       ("cost", "/ui/cost", "Cost"), ("ops", "/ui/ops", "Operations"), ("new", "/ui/meetings/new", "New meeting"))
OFFLINE = "offline"  # the model that answers without a key, and costs nothing
STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}


def page(request: web.Request, template: str, *, status: int = 200, **context: Any) -> web.Response:
    """A rendered page with the common context (nav, CSRF token, signed-in state)."""
    body = render_page(template, nav=NAV, csrf=csrf_token(request), signed_in=session_of(request) is not None,
                       prefix=PREFIX, **context)
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")


def error_page(request: web.Request, status: int, title: str, text: str, *, hint: str = "",
               headers: Mapping[str, str] | None = None) -> web.Response:
    """A readable error page (unknown ids, bad input, refusals): ``text`` as plain text (it may quote the
    request), ``hint`` (the daemon's own words) as inline Markdown."""
    response = page(request, "error.html", status=status, title=title, text=text, hint=hint, active="")
    keep = CIMultiDict((k, v) for k, v in (headers or {}).items() if k.lower() in ("www-authenticate", "retry-after"))
    response.headers.extend(keep)
    return response


# -- login --------------------------------------------------------------------------------


async def login_form(request: web.Request) -> web.Response:
    token = request.query.get("token", "")
    return page(request, "login.html", token=token[:200], active="", title="Sign in", problem="")


_LINK_PROBLEMS = {
    LinkVerdict.UNKNOWN: "This login link is not one Sabha made (mistyped or cut short?).",
    LinkVerdict.USED: "This login link was used already: each link works once.",
    LinkVerdict.EXPIRED: "This login link has expired.",
}


async def login(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    client = client_of(request)
    form = await request.post()
    token = str(form.get("token") or "").strip()[:200]
    # a valid link always signs in (tokens are 256-bit: guessing is hopeless); only failures count, so
    # junk posted through the same reverse proxy never locks the owner out (bot.web.auth.LoginLimiter)
    verdict = await ctx.auth.links.redeem(token, by=client) if token else LinkVerdict.UNKNOWN
    if verdict is not LinkVerdict.OK:
        if ctx.auth.limiter.failed(client):
            log.warning("web: too many failed login attempts from %s", client)
            return error_page(request, 429, "Too many attempts",
                              "Too many failed login attempts from here; wait a minute, then use a fresh link.",
                              headers={"Retry-After": "60"})
        log.info("web: refused a login from %s (%s link)", client, verdict.value)
        return page(request, "login.html", status=403, token="", active="", title="Sign in",
                    problem=_LINK_PROBLEMS[verdict] + " Run `sabha web link` for a new one.")
    value, session = ctx.auth.signer.issue()
    await ctx.auth.sessions.add(session, by=client)
    log.info("web: the owner signed in from %s", client)
    response = web.HTTPSeeOther(f"{PREFIX}/")
    set_cookie(response, request, value, ctx.settings.session_ttl_s)
    raise response


async def logout(request: web.Request) -> web.StreamResponse:
    session = session_of(request)  # the guard found it live
    if session is not None:
        await context_of(request).auth.sessions.revoke(session)
        log.info("web: the owner signed out (%s)", client_of(request))
    response = web.HTTPSeeOther(f"{PREFIX}/login")
    response.del_cookie(COOKIE, path="/")
    raise response


# -- the board and conversations --------------------------------------------------------------


async def last_activity(db: Database, roles: Sequence[str]) -> dict[str, str]:
    """When each of ``roles`` last called a model (as read: ``29 Nov 2026, 06:49 UTC``), from the ledger: one
    statement, one lookup of the index ``llm_calls_by_role`` per role (not a scan of the ledger)."""
    if not roles:
        return {}
    one = "SELECT CAST(? AS TEXT) AS role, (SELECT MAX(ts) FROM llm_calls WHERE role = ?) AS ts"
    sql = " UNION ALL ".join([one] * len(roles))
    rows = await db.fetchall(sql, tuple(value for role in roles for value in (role, role)))
    return {str(r["role"]): when_label(str(r["ts"])) for r in rows if r["ts"] is not None}


async def board_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    profiles = ctx.souls.profiles()
    activity = await last_activity(ctx.db, [profile.role for profile in profiles])
    status = {s.role: s for s in ctx.souls.status()}
    advisors = []
    for profile in profiles:
        soul = status.get(profile.role)
        advisors.append({
            "role": profile.role, "label": profile.label, "title": profile.title,
            "model": ctx.runner.model_for(profile), "version": (soul.version or "")[:12] if soul else "",
            "state": ("error: " + soul.error) if soul and soul.error else f"loaded ({profile.source})",
            "ok": not (soul and soul.error), "last": activity.get(profile.role, "never"),
        })
    return page(request, "board.html", active="board", title="The board", advisors=advisors,
                roster=ctx.roster, running=ctx.room.running())


async def _latest(ctx: WebContext, refs: list[SessionRef]) -> list[SessionRef]:
    """The :data:`MAX_CONVERSATIONS` of ``refs`` last written to (an old conversation still in use is one)."""
    async def when(ref: SessionRef) -> str:
        last = await ctx.transcripts.last_active(ref.session_id)
        return last.isoformat() if last is not None else ref.created_at

    times = [await when(ref) for ref in refs]  # a stat (files) or one row each: no transcript is read
    ranked = sorted(zip(times, range(len(refs)), strict=True), reverse=True)[:MAX_CONVERSATIONS]
    return [refs[i] for _, i in ranked]


async def sessions_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    refs = await _latest(ctx, await ctx.sessions.list(include_archived=True))
    labels = ctx.labels(None)
    reading = asyncio.Semaphore(PREVIEW_READS)

    async def item(ref: SessionRef) -> ConversationItem:
        async with reading:  # the file store reads in threads: a few at once
            return conversation_item(ref, await ctx.transcripts.tail(ref.session_id, PREVIEW_ENTRIES), labels)

    items = list(await asyncio.gather(*(item(ref) for ref in refs)))
    items.sort(key=lambda item: item.last_iso, reverse=True)
    return page(request, "sessions.html", active="sessions", title="Conversations",
                current=[i for i in items if not i.earlier], earlier=[i for i in items if i.earlier])


async def session_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    ref = await ctx.sessions.find(request.match_info["sid"])
    if ref is None:
        raise web.HTTPNotFound(text="No conversation with that id; the list is at /ui/sessions.")
    entries = await ctx.transcripts.tail(ref.session_id, TRANSCRIPT_ENTRIES)  # files or rows, by backend
    entries = [e for e in entries if e.get("type") != "session"]
    labels = ctx.labels(None)
    item = conversation_item(ref, entries, labels)
    return page(request, "session.html", active="sessions", title=f"{item.advisor} · {item.where}", item=item,
                lines=[transcript_line(e, ref, labels) for e in entries])


# -- meetings ---------------------------------------------------------------------------------


async def meetings_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    rows = await ctx.meetings.list(100)
    return page(request, "meetings.html", active="meetings", title="Meetings", meetings=rows,
                running=set(ctx.room.running()), verdict_label=verdict_label,
                verdicts=await verdicts(ctx.db, [r.id for r in rows]))


def _rosters(ctx: WebContext) -> list[str]:
    return list(ctx.roster_names)


def new_meeting_form(request: web.Request, *, status: int = 200, problem: str = "",
                     values: Mapping[str, str] | None = None) -> web.Response:
    ctx = context_of(request)
    defaults = {"topic": "", "roster": ctx.roster,
                "rounds": str(ctx.room.meeting_settings.max_turns_per_agent),
                "mode": "parallel" if ctx.room.meeting_settings.parallel else "sequential"}
    return page(request, "new_meeting.html", status=status, active="new", title="New meeting", problem=problem,
                values={**defaults, **(values or {})}, rosters=_rosters(ctx), nonce=ctx.new_nonce(),
                max_topic=MAX_TOPIC, max_rounds=MAX_ROUNDS)


async def new_meeting(request: web.Request) -> web.Response:
    return new_meeting_form(request)


def _meeting_input(ctx: WebContext, form: Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """The form's values and what is wrong with them ("" when nothing)."""
    values = {k: str(form.get(k) or "").strip() for k in ("topic", "roster", "rounds", "mode")}
    topic = " ".join(values["topic"].split())
    if not topic:
        return values, "Give the meeting a topic: what should the board decide?"
    if len(topic) > MAX_TOPIC:
        values["topic"] = topic[:MAX_TOPIC]
        return values, f"The topic is {len(topic):,} characters long; keep it under {MAX_TOPIC:,} (cut to fit below)."
    if values["roster"] not in _rosters(ctx):
        return values, f"Unknown roster {values['roster'][:40]!r}; pick one of the list."
    rounds = whole_number(values["rounds"])
    if rounds is None or not 1 <= rounds <= MAX_ROUNDS:
        return values, f"Rounds must be a whole number from 1 to {MAX_ROUNDS}."
    if values["mode"] not in ("parallel", "sequential"):
        return values, "Mode must be parallel or sequential."
    values["topic"] = topic
    return values, ""


async def start_meeting(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    form = await request.post()
    nonce = str(form.get("nonce") or "")
    started = await ctx.started_by(nonce)
    if started is not None:  # the same form sent twice (after a restart too): one meeting, the one it started
        raise web.HTTPSeeOther(f"{PREFIX}/meetings/{started}")
    values, problem = _meeting_input(ctx, form)
    if problem:
        return new_meeting_form(request, status=400, problem=problem, values=values)
    room = ctx.room
    if not room.meeting_settings.enabled:
        return new_meeting_form(request, status=409, problem="Board meetings are off in the config "
                                "(board.meetings.enabled); turn them on to hold one.", values=values)
    # the chair's conversation of the web chat: the meeting's notices, reminders and prediction requests
    # land in /ui/chat/general, where the owner reads them
    envelope = Envelope(channel="web", text=f"/meeting {values['topic']}", sender="owner", chat_id=GENERAL,
                        sender_name="the owner (web)", is_owner=True, received_at=ctx.clock.now(),
                        role_hint=GENERAL)
    if nonce and nonce in ctx.nonces:  # a twin POST started it while this one read the db
        raise web.HTTPSeeOther(f"{PREFIX}/meetings/{ctx.nonces[nonce]}")
    from board.room.pending import StartRequest

    asked = StartRequest(values["topic"], envelope=envelope, roster=values["roster"],
                         overrides={"max_turns_per_agent": int(values["rounds"]),
                                    "parallel": values["mode"] == "parallel"})
    try:
        called = await room.call(asked)
    except MeetingInProgress as exc:
        return new_meeting_form(request, status=409, problem=str(exc), values=values)
    except ValueError as exc:
        return new_meeting_form(request, status=400, problem=f"Cannot convene the board: {exc}", values=values)
    if called.waiting is not None:  # above board.meetings.confirm_over_usd: its estimate and Start are in the chat
        log.info("web: meeting request %d waits for the owner's Start (%s)", called.waiting.id,
                 called.estimate.summary())
        raise web.HTTPSeeOther(f"{PREFIX}/chat/{GENERAL}")
    run = called.run
    assert run is not None
    ctx.remember(nonce, run.id, run.topic)  # before any await: a second POST racing this one finds it
    await ctx.keep_nonce(nonce, run.id)
    log.info("web: the owner started meeting %s (%s roster, %s rounds, %s)", run.id, values["roster"],
             values["rounds"], values["mode"])
    raise web.HTTPSeeOther(f"{PREFIX}/meetings/{run.id}")


async def meeting_view(ctx: WebContext, meeting_id: str) -> tuple[MeetingView, bool] | None:
    """The meeting's view and whether it is live (in the feed, not ended); None if unknown."""
    row = await ctx.meetings.get(meeting_id)
    log_ = ctx.feed.log(meeting_id)
    labels = ctx.labels(row.roster if row is not None else None)
    running = meeting_id in ctx.room.running()
    if (log_ is not None and log_.events) or running:  # live: from the feed (empty while it is starting)
        view = MeetingView(meeting_id, labels=labels, topic=row.topic if row else ctx.topics.get(meeting_id, ""))
        for item in list(log_.events if log_ is not None else ()):
            view.apply(item.seq, item.event)
        return view, not view.ended
    if row is None or row.id != meeting_id:
        return None
    view = MeetingView(meeting_id, topic=row.topic, labels=labels, from_record=True)
    for seq, event in enumerate(events_from_record(row, await ctx.meetings.details(row.id)), start=1):
        view.apply(seq, event)
    if view.ended:
        return view, False
    if row.id in ctx.room.running():
        view.phase = "running"
    elif ctx.db.dialect is Dialect.POSTGRES:  # replicas share the state: another one runs it
        view.phase += ELSEWHERE
        return view, True
    else:
        view.phase = "stopped without an end (a crash?)"
    return view, False


async def render_meeting(request: web.Request, meeting_id: str, *, status: int = 200,
                         note: tuple[str, str] | None = None) -> web.Response:
    """Meeting ``meeting_id``'s page (404 when unknown); ``note`` (kind, text) on top; its decision's
    state and rulings (:mod:`bot.web.rulings`; proposed while the live page waits for the record)."""
    ctx = context_of(request)
    found = await meeting_view(ctx, meeting_id)
    if found is None:
        raise web.HTTPNotFound(text=f"No meeting {meeting_id[:80]!r}; the list is at /ui/meetings.")
    view, live = found
    decision = await ctx.decisions.find(meeting_id) if view.decision else None
    record = decision.record if decision is not None and decision.record is not None \
        and decision.record.meeting_id == meeting_id and decision.outcome is Outcome.DONE else None
    ruling = ruling_view(record) if record is not None else proposed(meeting_id)
    items = await meeting_actions(ctx.meetings, meeting_id, ctx.clock.now(), ctx.reminders.zone) \
        if view.decision else []
    return page(request, "meeting.html", status=status, active="meetings", title=f"Meeting: {view.topic[:80]}",
                v=view, live=live, ruling=ruling, note=note, items=items, table=table_box() if live else None)


async def meeting_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    return await render_meeting(request, request.match_info["id"],
                                note=ctx.take_note(request.query.get("note", "")))


# -- cost -------------------------------------------------------------------------------------


async def cost_page(request: web.Request) -> web.Response:
    ctx = context_of(request)
    days = clamped(request.query.get("days"), 1, 365, 14)
    since = ctx.clock.now() - timedelta(days=days)
    by_day = await ctx.ledger.summary(since=since, by="day")
    by_role = await ctx.ledger.summary(since=since, by="role")
    total = await ctx.ledger.total(since=since)
    charts: dict[str, Any] = {"day_chart": None, "role_chart": None}
    if total.cost_usd > 0:  # nothing spent: no empty chart, the reason instead (cost.html)
        charts = {"day_chart": bar_chart([(r.key or "?", r.cost_usd) for r in by_day],
                                         title=f"Cost per day, {days} days"),
                  "role_chart": bar_chart([(r.key or "(none)", r.cost_usd) for r in by_role],
                                          title=f"Cost per role, {days} days")}
    models = {ctx.runner.model_for(profile) for profile in ctx.souls.profiles()}
    return page(request, "cost.html", active="cost", title="Cost", days=days, total=total, by_role=by_role,
                offline=bool(models) and all(m.split("/", 1)[0] == OFFLINE for m in models), **charts)


async def static_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    path = STATIC / name
    if "/" in name or name.startswith(".") or path.suffix not in STATIC_TYPES or not path.is_file():
        raise web.HTTPNotFound()
    return web.Response(body=path.read_bytes(), content_type=STATIC_TYPES[path.suffix],
                        headers={"Cache-Control": "max-age=300"})


def routes() -> list[web.RouteDef]:
    """The pages' routes (relative to ``/ui``)."""
    return [
        web.get("/", board_page), web.get("/login", login_form), web.post("/login", login),
        web.post("/logout", logout), web.get("/sessions", sessions_page), web.get("/sessions/{sid}", session_page),
        web.get("/meetings", meetings_page), web.get("/meetings/new", new_meeting),
        web.post("/meetings", start_meeting), web.get("/meetings/{id}", meeting_page),
        web.get("/cost", cost_page), web.get("/static/{name}", static_file),
    ]
