"""The board's MCP endpoint on ``sabha run``: streamable HTTP at ``server.mcp.path``, behind the owner's token.

:func:`mount_mcp` adds the path (POST, GET, DELETE) to the daemon's aiohttp application. Every request is
checked first (:meth:`McpEndpoint.handle`): without ``Authorization: Bearer <token>``, or with another token
(compared in constant time), it is answered 401 with a ``WWW-Authenticate: Bearer`` header and the log says
so (the client's address and what was wrong, never a token; once a minute per address and problem, the rest
counted); nothing of the board is reached. An
authenticated request goes to the SDK's session manager through :mod:`bot.mcp_server.asgi_bridge`.

The session manager lives in a task of its own (:meth:`McpEndpoint.start`, on the application's startup; its
anyio task group must be entered and left by one task) and is stopped with the server: sessions still open
then end, and a meeting an MCP client convened that is still running is cancelled with them (recorded as
cancelled, as any meeting the daemon's stop cuts short).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.mcp_server.asgi_bridge import serve_asgi

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from bot.mcp_server.board_tools import McpBoardParts
    from bot.mcp_server.config import McpEndpointSection

__all__ = ["MAX_SESSIONS", "REALM", "REFUSAL_LOG_S", "McpEndpoint", "mount_mcp"]

log = logging.getLogger("sabha.mcp")

REALM = "sabha-mcp"
MAX_SESSIONS = 64  # MCP sessions open at once (each client holds one; an idle one ends after 30 minutes)
IDLE_S = 30 * 60.0
REFUSAL_LOG_S = 60.0  # a refused client is logged once a minute per problem (a scanner does not flood the log)


class McpEndpoint:
    """The authenticated streamable-HTTP endpoint of one board's MCP server (see the module docstring)."""

    def __init__(self, server: MCPServer[Any], *, token: str, path: str) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        self.path = path
        self._token = token.encode("utf-8")
        # DNS-rebinding checks (Host/Origin) are left to the token: a page in a browser cannot know it, and the
        # daemon may sit behind a proxy under any name (web.base_url).
        server.streamable_http_app(streamable_http_path=path, max_sessions=MAX_SESSIONS, session_idle_timeout=IDLE_S,
                                   transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self.manager: StreamableHTTPSessionManager = server.session_manager
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._refused: dict[tuple[str, str], tuple[float, int]] = {}  # (address, problem) -> (logged at, left out)

    def refusal(self, request: web.Request) -> str | None:
        """Why ``request`` may not reach the board (None: it carries the owner's token)."""
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if not header:
            return "no Authorization header"
        if scheme.lower() != "bearer" or not given.strip():
            return "an Authorization header that is not 'Bearer <token>'"
        if not hmac.compare_digest(given.strip().encode("utf-8"), self._token):
            return "a wrong token"
        return None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """One request to the endpoint: refused without the owner's token, else answered by the MCP server."""
        problem = self.refusal(request)
        if problem is not None:
            self._log_refusal(request, problem)
            error = "invalid_token" if problem == "a wrong token" else "invalid_request"
            raise web.HTTPUnauthorized(
                headers={"WWW-Authenticate": f'Bearer realm="{REALM}", error="{error}"'},
                text=f"401: this MCP endpoint needs the owner's token: send 'Authorization: Bearer <token>' (got "
                     f"{problem})")
        if not self._ready.is_set():
            raise web.HTTPServiceUnavailable(text="503: the MCP endpoint is starting or stopping; try again")
        return await serve_asgi(self.manager.handle_request, request)

    def _log_refusal(self, request: web.Request, problem: str) -> None:
        """One warning per client address and problem a minute; the ones left out are counted in the next."""
        key = (request.remote or "?", problem)
        now = time.monotonic()
        last, skipped = self._refused.get(key, (-REFUSAL_LOG_S, 0))
        if now - last < REFUSAL_LOG_S:
            self._refused[key] = (last, skipped + 1)
            return
        if len(self._refused) > 1000:  # addresses seen long ago are forgotten
            self._refused = {k: v for k, v in self._refused.items() if now - v[0] < REFUSAL_LOG_S}
        self._refused[key] = (now, 0)
        more = f"; {skipped} more like it in the last {REFUSAL_LOG_S:g} s" if skipped else ""
        log.warning("mcp: refused %s %s from %s: %s (the endpoint needs 'Authorization: Bearer <token>', the token of "
                    "server.mcp.token)%s", request.method, request.path, key[0], problem, more)

    async def _run(self) -> None:
        try:
            async with self.manager.run():
                self._ready.set()
                await self._stop.wait()
        finally:
            self._ready.clear()

    async def start(self, _app: web.Application | None = None) -> None:
        """Start the session manager (the application's startup)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="mcp sessions")
            waiter = asyncio.create_task(self._ready.wait())
            await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if self._task.done():
                self._task.result()  # it could not start: say why

    async def stop(self, _app: web.Application | None = None) -> None:
        """End every session and the manager (the application's shutdown)."""
        self._stop.set()
        if self._task is not None:
            task, self._task = self._task, None
            try:
                await asyncio.wait_for(task, 10)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            except Exception:
                log.exception("mcp: stopping the MCP sessions failed")


def mount_mcp(app: web.Application, parts: McpBoardParts, section: McpEndpointSection) -> McpEndpoint:
    """The board's MCP endpoint at ``section.path`` on ``app`` (the daemon's, before it starts)."""
    from bot.mcp_server.board_tools import BoardDesk
    from bot.mcp_server.server import board_server

    token = section.secret()
    if token is None:
        raise ValueError("server.mcp is off or has no token")
    endpoint = McpEndpoint(board_server(BoardDesk(parts)), token=token, path=section.path)
    for method in ("POST", "GET", "DELETE"):
        app.router.add_route(method, section.path, endpoint.handle)
    app.on_startup.append(endpoint.start)
    app.on_shutdown.append(endpoint.stop)
    return endpoint
