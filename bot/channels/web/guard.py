"""Who may use the web chat: the owner's login and the CSRF check, as the chat's routes need them.

The chat pages are the owner's, behind the web UI's login (:mod:`bot.web`): a signed session
cookie, and a CSRF token on every POST. The routes take a :class:`Guard` (a parameter of
:func:`bot.channels.web.routes.chat_routes`), so the channel does not depend on how the login is
made and its tests can use a guard of their own. :class:`LockedGuard` refuses everything: the
chat is never served without a login.
"""

from __future__ import annotations

from typing import Protocol

from aiohttp import web

from bot.web import auth
from bot.web.auth import CSRF_HEADER

__all__ = ["CSRF_HEADER", "Guard", "LockedGuard", "WebAuthGuard", "daemon_guard"]



class Guard(Protocol):
    """The owner's login, as the chat routes use it."""

    async def refusal(self, request: web.Request) -> web.StreamResponse | None:
        """None when ``request`` comes from the logged-in owner; else what to answer instead
        (401, or a redirect to the page that asks for a login link)."""
        ...

    async def signed_in(self, request: web.Request) -> bool:
        """Whether the login ``request`` came with is still there now (a stream asks again while it is open)."""
        ...

    def csrf_token(self, request: web.Request) -> str:
        """The CSRF token the owner's page must send back with each POST."""
        ...

    def csrf_ok(self, request: web.Request, token: str | None) -> bool:
        """Whether ``token`` is the CSRF token of the owner's session."""
        ...


class LockedGuard:
    """No login is available: every request is refused (503, saying why)."""

    def __init__(self, why: str) -> None:
        self.why = why

    async def refusal(self, request: web.Request) -> web.StreamResponse | None:
        return web.Response(status=503, text=f"The web chat is not available: {self.why}")

    async def signed_in(self, request: web.Request) -> bool:
        return False

    def csrf_token(self, request: web.Request) -> str:
        return ""

    def csrf_ok(self, request: web.Request, token: str | None) -> bool:
        return False



class WebAuthGuard:
    """The web pages' login (:mod:`bot.web.auth`): the signed session cookie, its CSRF token.
    Without a session a browser's page view is sent to the login page, anything else is 401; a
    POST without the session's CSRF token is 403 (all raised, as :func:`bot.web.auth.check_request` does)."""

    async def refusal(self, request: web.Request) -> web.StreamResponse | None:
        await auth.check_request(request)
        return None

    async def signed_in(self, request: web.Request) -> bool:
        return await auth.still_signed_in(request)

    def csrf_token(self, request: web.Request) -> str:
        return auth.csrf_token(request)

    def csrf_ok(self, request: web.Request, token: str | None) -> bool:
        return auth.csrf_ok(request, token)


def daemon_guard() -> Guard:
    """The guard the daemon puts on the chat: the web pages' owner login."""
    return WebAuthGuard()
