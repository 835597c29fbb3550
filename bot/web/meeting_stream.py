"""``GET /ui/meetings/{id}/events``: a meeting live, as Server-Sent Events.

The stream is one more meeting subscriber (a :class:`bot.web.meeting_feed.Listener` of the feed). It
starts after the last event the page has: the ``Last-Event-ID`` header when the browser
reconnects, else ``?after=<seq>`` (the page says which event it was rendered up to). It folds
the whole log into a :class:`bot.web.view.MeetingView` and sends each later event, numbered
with its sequence as the SSE ``id``, as the page operations it causes (append a statement,
re-render the stances, the scoreboard, the decision or the phase: HTML made here by the same
templates as the page, so the page's JavaScript only places it; the decision with its action items as
stored, their due dates in ``/actions``' words: :func:`bot.web.rulings.meeting_actions`). It then follows the meeting
live; ``: ping`` comments every :data:`PING_S`; each event is rendered once for all its
watchers (:attr:`bot.web.meeting_feed.MeetingLog.frames`); the stream ends after the meeting's end event.

A slow browser never slows the meeting: the feed drops a listener whose queue is full and this
handler then closes the connection; the browser reconnects with its ``Last-Event-ID`` and is
replayed what it missed. A meeting the feed no longer holds (the daemon restarted) gets one
``reload`` event: the page reloads and renders it from the state db. At most
:data:`MAX_WATCHERS` streams per meeting (503 past it).

With replicas (a PostgreSQL state), a meeting may run on a replica other than the one serving the page: its
page is then drawn from the stored record and its stream (``?source=record``) follows the record, read
again every :data:`RECORD_POLL_S`, numbered as the page was, so any replica may serve either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from aiohttp import web

from board.room.meeting.events import MeetingEvent
from bot.web.context import WebContext, context_of
from bot.web.meeting_feed import FeedEvent
from bot.web.numbers import MAX_NUMBER, clamped
from bot.web.render import parts
from bot.web.rulings import meeting_actions
from bot.web.view import ELSEWHERE, MeetingView, Region, StatementView, events_from_record

__all__ = ["MAX_WATCHERS", "PING_S", "RECORD_POLL_S", "event_ops", "routes", "sse_frame"]

log = logging.getLogger("sabha.web")

PING_S = 15.0
MAX_WATCHERS = 200
#: How often a stream that follows a meeting's record (another replica runs it) reads it again.
RECORD_POLL_S = 1.0


def sse_frame(data: dict[str, Any], *, event_id: int | None = None, event: str | None = None) -> bytes:
    """One SSE message (``data`` as one JSON line)."""
    head = (f"id: {event_id}\n" if event_id is not None else "") + (f"event: {event}\n" if event else "")
    return (head + "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n\n").encode()


def event_ops(view: MeetingView, said: StatementView | None, regions: set[Region],
              items: list[dict[str, Any]] | None = None) -> list[dict[str, str]]:
    """The page operations one folded event causes (HTML rendered by ``meeting_parts.html``); ``items``: the
    decision's stored action items (:func:`bot.web.rulings.meeting_actions`), for the decision region."""
    macros = parts("meeting_parts.html")
    ops: list[dict[str, str]] = []
    if said is not None:
        ops.append({"op": "append", "target": "statements", "id": f"ev-{said.seq}",
                    "html": str(macros.statement(said))})
    for region in sorted(regions):
        drawn = macros.decision(view, items=items) if region is Region.DECISION else getattr(macros, region.value)(view)
        ops.append({"op": "replace", "target": f"region-{region.value}", "html": str(drawn)})
    return ops


async def _items(ctx: WebContext, view: MeetingView, regions: set[Region]) -> list[dict[str, Any]] | None:
    """The decision's action items when the event re-draws the decision (None otherwise)."""
    if Region.DECISION not in regions or not view.decision:
        return None
    return await meeting_actions(ctx.meetings, view.meeting_id, ctx.clock.now(), ctx.reminders.zone)


def _after(request: web.Request) -> int:
    for raw in (request.headers.get("Last-Event-ID"), request.query.get("after")):
        found = clamped(raw, 0, MAX_NUMBER, -1)  # past every event there is, for a number too long
        if found >= 0:
            return found
    return 0


async def meeting_events(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    meeting_id = request.match_info["id"]
    after = _after(request)
    known = ctx.feed.log(meeting_id)
    row = await ctx.meetings.get(meeting_id)
    live = known is not None or meeting_id in ctx.room.running()
    if not live and (row is None or row.id != meeting_id):
        raise web.HTTPNotFound(text=f"No meeting {meeting_id[:80]!r}.")
    if known is not None and ctx.feed.watchers(meeting_id) >= MAX_WATCHERS:
        raise web.HTTPServiceUnavailable(text="Too many pages are watching this meeting; close a few tabs.",
                                         headers={"Retry-After": "5"})
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no", "X-Content-Type-Options": "nosniff"})
    await response.prepare(request)
    try:
        if request.query.get("source") == "record" and row is not None and row.id == meeting_id:
            view = MeetingView(meeting_id, labels=ctx.labels(row.roster), from_record=True)
            await _follow_record(ctx, view, after, response)
        elif not live:  # not in the live feed: let the page render it from the record
            await response.write(sse_frame({"kind": "reload"}, event="reload"))
            return response
        else:
            view = MeetingView(meeting_id, labels=ctx.labels(row.roster if row is not None else None))
            await _follow(ctx, view, after, response)
    except ConnectionResetError:
        return response  # the browser went away: leaving the listener was all there was to clean
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


async def _follow(ctx: WebContext, view: MeetingView, after: int, response: web.StreamResponse) -> None:
    feed, meeting_id = ctx.feed, view.meeting_id
    last = 0
    with feed.listen(meeting_id) as (listener, meeting_log):

        async def send(item: FeedEvent) -> None:
            nonlocal last
            said, regions = view.apply(item.seq, item.event)
            last = item.seq
            if item.seq > after:
                frame = meeting_log.frames.get(item.seq)
                if frame is None:  # every watcher folds the same events: the first renders, the rest reuse
                    ops = event_ops(view, said, regions, await _items(ctx, view, regions))
                    frame = meeting_log.frames[item.seq] = sse_frame(
                        {"seq": item.seq, "kind": str(item.event.kind), "ended": view.ended, "ops": ops},
                        event_id=item.seq)
                await response.write(frame)

        for item in list(meeting_log.events):
            await send(item)
        while not view.ended:
            try:
                queued = await asyncio.wait_for(listener.queue.get(), PING_S)
            except TimeoutError:
                await response.write(b": ping\n\n")
                continue
            if queued is None or listener.overflowed:
                log.info("web: closing a slow or stale stream of meeting %s at event %d", meeting_id, last)
                return
            if queued.seq > last:
                await send(queued)


def _said(event: MeetingEvent) -> tuple[str, str, int | None, str]:
    """What identifies an event drawn from the record, to see that a later reading still begins with it."""
    return str(event.kind), event.role or "", event.round, event.text or ""


async def _follow_record(ctx: WebContext, view: MeetingView, after: int, response: web.StreamResponse) -> None:
    """Follow a meeting from its stored record (another replica runs it; the page was drawn from the record):
    every :data:`RECORD_POLL_S` read it again and send the events past those sent, numbered as the page's; the
    stream ends with the meeting, when the daemon stops, or with a ``reload`` when a reading no longer begins
    with what was sent (the page is drawn again). The state store away: the stream ends and the browser comes
    back with its ``Last-Event-ID``."""
    store = ctx.meetings
    meeting_id = view.meeting_id
    sent: list[tuple[str, str, int | None, str]] = []
    quiet = 0.0
    while not ctx.feed.closed:
        try:
            row = await store.get(meeting_id)
            events = events_from_record(row, await store.details(meeting_id)) if row is not None else []
        except Exception as exc:  # noqa: BLE001 - an outage: the browser reconnects
            log.info("web: the record of meeting %s cannot be read (%s); ending its stream", meeting_id, exc)
            return
        said = [_said(e) for e in events]
        if said[:len(sent)] != sent:
            await response.write(sse_frame({"kind": "reload"}, event="reload"))
            return
        for seq, event in enumerate(events[len(sent):], start=len(sent) + 1):
            statement, regions = view.apply(seq, event)
            if not (view.ended or view.phase.endswith(ELSEWHERE) or meeting_id in ctx.room.running()):
                view.phase += ELSEWHERE  # as the page said it
            sent.append(said[seq - 1])
            if seq > after:
                quiet = 0.0
                ops = event_ops(view, statement, regions, await _items(ctx, view, regions))
                await response.write(sse_frame({"seq": seq, "kind": str(event.kind), "ended": view.ended,
                                                "ops": ops}, event_id=seq))
        if view.ended:
            return
        await asyncio.sleep(RECORD_POLL_S)
        quiet += RECORD_POLL_S
        if quiet >= PING_S:
            quiet = 0.0
            await response.write(b": ping\n\n")


def routes() -> list[web.RouteDef]:
    """The stream's route (relative to ``/ui``)."""
    return [web.get("/meetings/{id}/events", meeting_events)]
