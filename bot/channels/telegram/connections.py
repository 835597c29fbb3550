"""The Telegram client's connections: httpx's pool as PTB builds it, its check of idle connections made cheap.

httpcore looks at every connection of the pool each time a request joins or leaves it; for each idle one it asks
the network stream whether the server closed it (``get_extra_info("is_readable")``). The anyio stream answers
that by building its whole attribute table, a ``getpeername`` system call included, to find the raw socket, then
polls it. The channel's pool is sized to the turns in flight (``2 x cap + 8``), so after a burst each Bot API
request paid for dozens of idle connections: 10 % of the daemon's CPU in a 300-message burst (py-spy, issue 44),
about 0.7 ms a request with 64 idle connections (same process, the test server included).

:func:`cheap_idle_checks` wraps the pool's network backend so that each stream keeps its raw socket from the start
and answers ``is_readable`` with one ``poll`` of it, the same answer httpcore gets (a socket that is gone counts
as readable: closed). Everything else passes through unchanged. When httpx or httpcore no longer look as expected
(a new version), nothing is wrapped and the pool works as before.
"""

from __future__ import annotations

import logging
import select
import socket
from typing import Any

import httpcore
import httpx

__all__ = ["CheapIdleChecks", "cheap_idle_checks"]

log = logging.getLogger("sabha.telegram")


def _readable(sock: socket.socket | None) -> bool:
    """Whether ``sock`` has something to read (an idle HTTP connection: the server closed it); gone counts as yes."""
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class _Stream(httpcore.AsyncNetworkStream):
    """A network stream whose raw socket is looked up once."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._sock: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return _readable(self._sock)
        return self._inner.get_extra_info(info)


class CheapIdleChecks(httpcore.AsyncNetworkBackend):
    """A network backend whose streams answer ``is_readable`` from a socket kept at connect time."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self.inner.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self.inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def cheap_idle_checks(client: httpx.AsyncClient) -> bool:
    """Wrap the network backend of ``client``'s pool (before its first request); False when its shape is not the
    one this knows (then it is left alone)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(pool, httpcore.AsyncConnectionPool) or not isinstance(backend, httpcore.AsyncNetworkBackend):
        log.debug("telegram: httpx's pool is not the shape expected; its idle checks stay as they are")
        return False
    if not isinstance(backend, CheapIdleChecks):
        pool._network_backend = CheapIdleChecks(backend)  # httpcore has no public hook for it
    return True
