"""The web sub-application, mounted at ``/ui/`` on the daemon's own aiohttp server.

:func:`mount_web` builds a :class:`WebContext` (the board's parts the pages use, the meeting feed, the settings, the
login machinery), puts the guard's :class:`bot.web.auth.WebAuth` on the main application (so
any route there, the web chat's too, can use :func:`bot.web.auth.owner_required`), subscribes
the feed to the board's meetings and adds the sub-application. Handlers reach the context with
one typed lookup, :func:`bot.web.context.context_of`, never through module globals.

Middlewares of the sub-app, outermost first: :func:`security_headers` (a strict
Content-Security-Policy: only the daemon's own scripts, styles and images; no framing; no
referrer, so a login link never leaks), :func:`error_pages` (an HTTP error becomes a readable
page for a browser: its text plain, only a refusal's fixed hint as Markdown, :mod:`bot.web.refusals`),
:func:`auth_required` (everything but the login page and the static
files needs the owner's session; a POST also its CSRF token).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aiohttp import web

from bot.web.auth import (
    LOGIN_PATH,
    WEB_AUTH,
    Handler,
    LoginLimiter,
    LoginLinks,
    SessionSigner,
    WebAuth,
    WebSessions,
    check_request,
    live_session,
    shared_signing_key,
)
from bot.web.context import PREFIX, WEB, WebContext
from bot.web.meeting_feed import MeetingFeed
from bot.web.refusals import hint_of, said_of

if TYPE_CHECKING:
    from board.app import Parts
    from bot.config.loaded import LoadedConfig

__all__ = ["PREFIX", "WEB", "WebContext", "build_web", "mount_web", "server_url"]

log = logging.getLogger("sabha.web")

OPEN_PATHS = (f"{PREFIX}/login", f"{PREFIX}/static/")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Strict headers on every answer of the sub-app."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        _secure(exc)
        raise
    _secure(response)
    return response


def _secure(response: web.StreamResponse) -> None:
    if response.prepared:
        return
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CSP)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Cache-Control", "no-store")


@web.middleware
async def error_pages(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A browser asking for a page gets a readable page for an HTTP error, not a bare text."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400 or "text/html" not in request.headers.get("Accept", ""):
            raise
        from bot.web.pages import error_page

        return error_page(request, exc.status, exc.reason, said_of(exc), hint=hint_of(exc), headers=exc.headers)


@web.middleware
async def auth_required(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Only the owner's session reaches a page (the login page and static files excepted)."""
    if not request.path.startswith(OPEN_PATHS):
        await check_request(request)
    elif request.path.startswith(LOGIN_PATH):
        await live_session(request)  # the login page shows "signed in" only for a session not signed out
    return await handler(request)


def build_web(ctx: WebContext) -> web.Application:
    """The sub-application (routes of :mod:`bot.web.pages`, :mod:`bot.web.decisions`, :mod:`bot.web.track`,
    :mod:`bot.web.meeting_stream` and :mod:`bot.web.meeting_table`)."""
    from bot.web import decisions, meeting_stream, meeting_table, ops, pages, schedule, track

    sub = web.Application(middlewares=[security_headers, error_pages, auth_required], client_max_size=256 * 1024)
    sub[WEB] = ctx
    sub.add_routes(pages.routes())
    sub.add_routes(decisions.routes())
    sub.add_routes(track.routes())
    sub.add_routes(schedule.routes())
    sub.add_routes(ops.routes())
    sub.add_routes(meeting_stream.routes())
    sub.add_routes(meeting_table.routes())
    return sub


def server_url(loaded: LoadedConfig, port: int | None) -> str:
    """Where the owner's browser reaches this daemon: ``web.base_url``, else host and port."""
    web_settings = loaded.config.web
    if web_settings.base_url:
        return web_settings.base_url
    host = loaded.config.server.host
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port if port is not None else loaded.config.server.port}"


async def mount_web(app: web.Application, parts: Parts, loaded: LoadedConfig) -> WebContext:
    """Mount the pages at ``/ui/`` on ``app`` (the daemon's application, before it starts), over the board's
    ``parts``."""
    settings = loaded.config.web.settings()
    clock = parts.clock
    key = await shared_signing_key(parts.db, loaded.data_dir)
    auth = WebAuth(
        signer=SessionSigner(key, settings.session_ttl_s, clock),
        links=LoginLinks(parts.db, clock),
        limiter=LoginLimiter(settings.login_attempts_per_minute, clock),
        sessions=WebSessions(parts.db, clock),
    )
    feed = MeetingFeed()
    parts.room.subscribe(feed)
    ctx = WebContext.of(parts, settings=settings, auth=auth, feed=feed, server_url=server_url(loaded, None))
    ctx.lease_s = loaded.config.replicas.lease_s
    app[WEB_AUTH] = auth
    app[WEB] = ctx

    async def end_streams(_app: web.Application) -> None:
        feed.close()  # open live pages end their streams, so the server stops without waiting for them

    app.on_shutdown.append(end_streams)

    async def to_pages(request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently(f"{PREFIX}/")

    app.router.add_get(PREFIX, to_pages)
    app.add_subapp(PREFIX, build_web(ctx))
    return ctx
