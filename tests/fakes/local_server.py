"""A small aiohttp server on 127.0.0.1 and a free port, the base of the fake APIs."""

from __future__ import annotations

import asyncio
from typing import Self

from aiohttp import web


class LocalServer:
    """Start on 127.0.0.1:0 with ``start()`` / ``async with``; subclasses add routes in :meth:`routes`."""

    name = "fake server"

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._closing = asyncio.Event()

    def routes(self, app: web.Application) -> None:
        """Add the API's routes to ``app``."""
        raise NotImplementedError

    async def start(self) -> Self:
        """Listen on a free port of 127.0.0.1."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.routes(app)
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server  # noqa: SLF001 - the only way to learn the bound port
        assert server is not None and server.sockets
        self._port = server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Wake pending delays and close the server."""
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._port is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._port
