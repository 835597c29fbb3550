"""An ASGI application answered from an aiohttp handler: :func:`serve_asgi`.

The MCP SDK's streamable-HTTP transport is an ASGI application (Starlette underneath); the daemon's server is
aiohttp. Rather than a second listener and a second HTTP stack (another port, its own timeouts, its own
signal handling), one request is translated: the aiohttp request becomes the ASGI ``scope`` and ``receive``
(the body in chunks, then ``http.disconnect`` once the answer is complete or the client has gone), and the
application's ``send`` messages become an aiohttp :class:`~aiohttp.web.StreamResponse` (its headers as sent,
the body streamed as it comes: a Server-Sent Events stream stays open for as long as the application writes
to it). Only what HTTP/1.1 ASGI needs is supported (no websockets, no lifespan: the caller runs the
application's own life, see :mod:`bot.mcp_server.endpoint`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

__all__ = ["DISCONNECT_POLL_S", "ASGIApp", "serve_asgi"]

log = logging.getLogger("sabha.mcp")

Message = MutableMapping[str, Any]
ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]

#: How often a request whose body was read looks whether its client is still connected (aiohttp does not
#: cancel a handler whose client went away; a stream left open is ended within this much).
DISCONNECT_POLL_S = 1.0
CHUNK = 64 * 1024


def _scope(request: web.Request) -> dict[str, Any]:
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    sock = transport.get_extra_info("sockname") if transport is not None else None
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}", "method": request.method,
        "scheme": request.scheme, "path": request.path, "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode("latin-1"), "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
        "state": {}, "extensions": {},
    }


class _Exchange:
    """One request's ``receive`` and ``send``, and the response they build."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response: web.StreamResponse | None = None
        self.started: Message | None = None
        self.finished = asyncio.Event()
        self.body_done = False

    def _gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def receive(self) -> Message:
        if not self.body_done:
            chunk = await self.request.content.read(CHUNK)
            more = bool(chunk) and not self.request.content.at_eof()
            if not more:
                self.body_done = True
            return {"type": "http.request", "body": chunk, "more_body": more}
        while not self.finished.is_set() and not self._gone():  # the body is read: wait for the end of it all
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.finished.wait(), DISCONNECT_POLL_S)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.started = message
        elif kind == "http.response.body":
            response = await self._prepared()
            try:
                body = bytes(message.get("body", b""))
                if body:
                    await response.write(body)
                if not message.get("more_body", False):
                    await response.write_eof()
                    self.finished.set()
            except (ConnectionError, RuntimeError) as exc:  # the client went away mid-answer
                self.finished.set()
                raise OSError(f"client disconnected: {exc}") from exc
        else:
            raise RuntimeError(f"unsupported ASGI message {kind!r}")

    async def _prepared(self) -> web.StreamResponse:
        if self.response is None:
            if self.started is None:
                raise RuntimeError("ASGI body sent before http.response.start")
            headers: CIMultiDict[str] = CIMultiDict()
            for name, value in self.started.get("headers", []):
                headers.add(bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
            self.response = web.StreamResponse(status=int(self.started["status"]), headers=headers)
            await self.response.prepare(self.request)
        return self.response


async def serve_asgi(app: ASGIApp, request: web.Request) -> web.StreamResponse:
    """``request`` answered by the ASGI application ``app`` (see the module docstring)."""
    exchange = _Exchange(request)
    try:
        await app(_scope(request), exchange.receive, exchange.send)
    except OSError:
        log.debug("mcp: the client of %s %s went away", request.method, request.path)
    finally:
        exchange.finished.set()
    if exchange.response is None and exchange.started is not None:  # headers only, no body message
        response = await exchange._prepared()
        await response.write_eof()
    if exchange.response is None:
        raise web.HTTPInternalServerError(text="the MCP endpoint gave no answer")
    return exchange.response
