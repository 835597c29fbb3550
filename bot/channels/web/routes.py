"""The web chat's HTTP surface under ``/ui/chat``: the page, the POST of a message, the SSE feed.

- ``GET /ui/chat`` redirects to the chat with the chair (``/ui/chat/general``).
- ``GET /ui/chat/{advisor}`` is the page (:mod:`.page`); 404 with the advisors for an unknown one;
  ``GET /ui/chat/assets/{chat.js,chat.css}`` its script and styles (the pages' CSP allows no inline script).
- ``POST /ui/chat/{advisor}/messages`` takes ``{"text", "client_id"}`` (:mod:`.inbound`) with the
  CSRF token in header ``X-CSRF-Token`` (403 without it). It answers 202 only once
  the message is stored (the intake's durable claim): ``{"ok": true, "duplicate": ..., "seq": ...}``;
  a client id seen before answers the same, with ``duplicate: true``, and is not answered again.
  Refusals are JSON ``{"error": "<what to do>"}`` with 400 / 404 / 413 / 503; nothing is stored.
- ``GET /ui/chat/{advisor}/events`` is the conversation over Server-Sent Events: every outbox row
  after ``Last-Event-ID`` (``entry`` events, id = seq), the answer being written (``draft``, then
  ``delta``), then what comes; a page that opens (no ``Last-Event-ID``) also gets the conversation's
  messages written elsewhere (``history`` events, no id: :mod:`.history`), placed among the rows by time
  (a page that reconnects gets them after the rows, and shows each once), then those written while it
  follows (every :data:`HISTORY_POLL_S` seconds the conversation's mark is checked, and only when it changed
  is the history read again; a history that cannot be read is left out, never ending the stream);
  a comment every :data:`PING_S` seconds keeps proxies from closing it. At each of those polls the owner's
  login is checked anew: signed out or expired, the stream ends (the page's reconnect is refused).

Every route asks the :class:`.guard.Guard` first: nothing is served without the owner's login.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from aiohttp import web

from bot.channels.web.chat_feed import FeedEvent, FeedKind
from bot.channels.web.guard import CSRF_HEADER, Guard
from bot.channels.web.history import HistoryMark, SharedLine
from bot.channels.web.host import ChannelClosed, ChatHost
from bot.channels.web.inbound import BadMessage, body_limit, read_message
from bot.channels.web.page import ASSETS, asset, render_page
from bot.channels.web.store import OutboxEntry
from bot.channels.webhook import BodyTooLarge, read_body
from bot.intake.intake import StorageUnavailable
from bot.web.app import CSP
from bot.web.numbers import MAX_NUMBER, clamped

__all__ = ["HISTORY_POLL_S", "PING_S", "PREFIX", "chat_routes"]

log = logging.getLogger("sabha.web.chat")

PREFIX = "/ui/chat"
PING_S = 15.0
#: How often a following page's conversation is read for messages written elsewhere (the terminal, Telegram).
HISTORY_POLL_S = 3.0
#: The web pages' headers (:mod:`bot.web.app`): only the daemon's own scripts and styles, no framing, no referrer.
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _last_event_id(request: web.Request) -> int:
    for raw in (request.headers.get("Last-Event-ID"), request.query.get("after")):
        found = clamped(raw, 0, MAX_NUMBER, -1)  # past every event there is, for a number too long
        if found >= 0:
            return found
    return 0


class _Routes:
    """The handlers, bound to one channel and one guard."""

    def __init__(self, channel: ChatHost, guard: Guard) -> None:
        self.channel, self.guard = channel, guard

    def _advisor(self, request: web.Request) -> str | None:
        advisor = request.match_info["advisor"]
        return advisor if advisor in self.channel.advisors() else None

    def _unknown(self, request: web.Request) -> str:
        return (f"There is no advisor {request.match_info['advisor']!r}. Advisors: "
                f"{', '.join(self.channel.advisors())}.")

    async def index(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.guard.refusal(request)
        if refusal is not None:
            return refusal
        raise web.HTTPFound(f"{PREFIX}/general")

    async def page(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.guard.refusal(request)
        if refusal is not None:
            return refusal
        advisor = self._advisor(request)
        csrf = self.guard.csrf_token(request)
        if advisor is None:
            return web.Response(status=404, content_type="text/html", headers=SECURITY_HEADERS,
                                text=render_page(self.channel, None, csrf, error=self._unknown(request)))
        return web.Response(content_type="text/html", text=render_page(self.channel, advisor, csrf),
                            headers=SECURITY_HEADERS)

    async def asset(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.guard.refusal(request)
        if refusal is not None:
            return refusal
        name = request.match_info["name"]
        if name not in ASSETS:
            raise web.HTTPNotFound(text=f"no file {name!r} here")
        return web.Response(text=asset(name), content_type=ASSETS[name],
                            headers={**SECURITY_HEADERS, "Cache-Control": "private, max-age=300"})

    async def post(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.guard.refusal(request)
        if refusal is not None:
            return refusal
        advisor = self._advisor(request)
        if advisor is None:
            return _error(404, self._unknown(request))
        limit = self.channel.max_chars
        try:
            posted = read_message(await read_body(request, body_limit(limit)), limit)
        except BodyTooLarge:
            return _error(413, f"That message is over the limit of {limit:,} characters; send the part that "
                               "matters, or a summary.")
        except BadMessage as exc:
            return _error(exc.status, str(exc))
        if not self.guard.csrf_ok(request, request.headers.get(CSRF_HEADER) or posted.csrf):
            return _error(403, "The page's security token is missing or out of date; reload the page and send "
                               "the message again.")
        try:
            entry, fresh = await self.channel.receive(advisor, posted.text, posted.client_id)
        except StorageUnavailable:
            return _error(503, "The message could not be saved right now; send it again in a moment.")
        except ChannelClosed as exc:
            return _error(503, str(exc))
        return web.json_response({"ok": True, "duplicate": not fresh, "seq": entry.seq}, status=202)

    async def events(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.guard.refusal(request)
        if refusal is not None:
            return refusal
        advisor = self._advisor(request)
        if advisor is None:
            return _error(404, self._unknown(request))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                               "X-Accel-Buffering": "no", "X-Content-Type-Options": "nosniff"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError, ConnectionError, asyncio.CancelledError):
            await self._feed(request, response, advisor)
        return response

    async def _signed_in(self, request: web.Request) -> bool:
        """Whether the owner's login that opened this stream is still there (not signed out, not expired)."""
        try:
            return await self.guard.signed_in(request)
        except Exception as exc:  # noqa: BLE001 - unknown: end the stream; the page's reconnect is checked anew
            log.info("web chat: could not check a following page's login: %s", exc)
            return False

    async def _feed(self, request: web.Request, response: web.StreamResponse, conversation: str) -> None:
        """Replay the outbox after the page's last event and the drafts, then follow (see the module docstring)."""
        channel, after = self.channel, _last_event_id(request)
        with channel.feed.follow(conversation) as (follower, drafts), channel.streams.open():
            await response.write(b"retry: 1000\n\n")
            sent, finished = after, set[str]()
            # opening: the history among the rows; reconnecting: after them (the page shows each message once)
            mark = await _mark(channel, conversation)  # before the read: a write after it is news at the next poll
            read = await _history(channel, conversation)
            history = read or []
            rows = await channel.outbox.since(conversation, after)
            for event in _in_time_order(rows, history) if after == 0 else _in_time_order(rows, []):
                await _send(response, event)
                entry = event.data
                if event.seq is not None:
                    sent = event.seq
                    if entry.get("reply_to") and entry.get("kind") != "question":
                        finished.add(str(entry["reply_to"]))
            for draft in drafts:
                if draft.reply_to not in finished:
                    await _send(response, draft.snapshot())
            if after != 0:
                for line in history:
                    await _send(response, FeedEvent(FeedKind.HISTORY, line.to_json()))
            elsewhere = _Elsewhere(channel, conversation, history)
            elsewhere.mark = mark if read is not None else None
            while not channel.feed.closed:
                if follower.dropped and follower.queue.empty():
                    log.info("web chat: a page following %s fell behind; closed (it reconnects and catches up)",
                             conversation)
                    return
                try:
                    event = await asyncio.wait_for(follower.queue.get(), HISTORY_POLL_S)
                except TimeoutError:
                    if not await self._signed_in(request):
                        log.info("web chat: the login of a page following %s is gone; its stream ends", conversation)
                        return
                    await elsewhere.news(response)
                    continue
                if event.kind is FeedKind.CLOSE:
                    return
                if event.kind is FeedKind.ENTRY:
                    if event.seq is None or event.seq <= sent:
                        continue  # replayed from the outbox already
                    sent = event.seq
                    reply_to = event.data.get("reply_to")
                    if reply_to and event.data.get("kind") != "question":
                        finished.add(str(reply_to))
                elif str(event.data.get("reply_to")) in finished:
                    continue  # its reply is shown: a late draft event would show the text twice
                await _send(response, event)


class _Elsewhere:
    """What a following page is shown of its conversation written elsewhere after it opened: every
    :data:`HISTORY_POLL_S` seconds with nothing else to send, the history is read again and what is new in it
    is sent (a ``: ping`` comment every :data:`PING_S` seconds when there is nothing)."""

    def __init__(self, channel: ChatHost, conversation: str, shown: Sequence[SharedLine]) -> None:
        self.channel, self.conversation = channel, conversation
        self.known = {line.entry_id for line in shown}
        self.quiet = 0.0
        self.mark: HistoryMark | None = None  # the conversation as last read (None: read it at the next poll)

    async def news(self, response: web.StreamResponse) -> None:
        mark = await _mark(self.channel, self.conversation)
        lines: list[SharedLine] | None = []
        if mark is None or mark != self.mark:  # a quiet conversation is not read again
            lines = await _history(self.channel, self.conversation)
        self.mark = mark if lines is not None else None
        lines = lines or []
        fresh = [line for line in lines if line.entry_id not in self.known]
        for line in fresh:
            self.known.add(line.entry_id)
            await _send(response, FeedEvent(FeedKind.HISTORY, line.to_json()))
        self.quiet = 0.0 if fresh else self.quiet + HISTORY_POLL_S
        if self.quiet >= PING_S:
            await response.write(b": ping\n\n")
            self.quiet = 0.0


async def _history(channel: ChatHost, conversation: str) -> list[SharedLine] | None:
    """The conversation's history from elsewhere; None while the store cannot be read (logged): the page's own
    rows go out all the same, and a following page reads it again at its next poll."""
    try:
        return await channel.history(conversation)
    except Exception as exc:  # noqa: BLE001 - a db or disk hiccup must not end the stream
        log.info("web chat: could not read the conversation %s: %s", conversation, exc)
        return None


async def _mark(channel: ChatHost, conversation: str) -> HistoryMark | None:
    try:
        return await channel.history_mark(conversation)
    except Exception as exc:  # noqa: BLE001 - as _history: unknown, so read the history next
        log.info("web chat: could not check the conversation %s: %s", conversation, exc)
        return None


def _time(at: str) -> datetime | None:
    try:
        found = datetime.fromisoformat(at)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def _places(entries: Sequence[OutboxEntry], history: Sequence[SharedLine]) -> list[int]:
    """Where each message of the history goes: before ``entries[i]`` (``len(entries)``: after them all). After
    the chat's own message it followed in the transcript (and that message's replies), before the one it
    preceded; between them, before the first row written in a later second (the transcript's times are seconds)."""
    asked = {entry.key.removeprefix("q:"): i for i, entry in enumerate(entries) if entry.key.startswith("q:")}
    answered = {entry.reply_to: i for i, entry in enumerate(entries) if entry.reply_to}
    places, floor = [], 0
    for line in history:
        low = floor
        if line.after is not None:
            low = max(low, asked.get(line.after, -1) + 1, answered.get(line.after, -1) + 1)
        high = max(low, asked.get(line.before, len(entries)) if line.before is not None else len(entries))
        when, place = line.when(), low
        while place < high and when is not None and (_time(entries[place].created_at) or when) < when:
            place += 1
        places.append(place)
        floor = place
    return places


def _in_time_order(entries: Sequence[OutboxEntry], history: Sequence[SharedLine]) -> Iterator[FeedEvent]:
    """The outbox rows (in seq order) with the shared history's messages (oldest first) placed among them."""
    places = _places(entries, history)
    waiting = 0
    for i, entry in enumerate(entries):
        while waiting < len(history) and places[waiting] <= i:
            yield FeedEvent(FeedKind.HISTORY, history[waiting].to_json())
            waiting += 1
        yield FeedEvent.entry(entry)
    for line in history[waiting:]:
        yield FeedEvent(FeedKind.HISTORY, line.to_json())


async def _send(response: web.StreamResponse, event: FeedEvent) -> None:
    data = json.dumps(event.data, ensure_ascii=False)
    head = f"id: {event.seq}\n" if event.seq is not None else ""
    await response.write(f"{head}event: {event.kind.value}\ndata: {data}\n\n".encode())


def chat_routes(channel: ChatHost, guard: Guard) -> list[web.RouteDef]:
    """The chat's routes for ``channel``, every one behind ``guard``."""
    routes = _Routes(channel, guard)
    return [web.get(PREFIX, routes.index), web.get(f"{PREFIX}/", routes.index),
            web.get(f"{PREFIX}/assets/{{name}}", routes.asset), web.get(f"{PREFIX}/{{advisor}}", routes.page),
            web.post(f"{PREFIX}/{{advisor}}/messages", routes.post),
            web.get(f"{PREFIX}/{{advisor}}/events", routes.events)]
