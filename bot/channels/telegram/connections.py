"""The Telegram client's connections: httpx's pool as PTB builds it, its check of idle connections made cheap.

httpcore looks at every connection of the pool each time a request joins or leaves it; for each idle one it asks
the network stream whether the server closed it (``get_extra_info("is_readable")``). The anyio stream answers
that by building its whole attribute table, a ``getpeername`` system call included, to find the raw socket, then
polls it. The channel's pool is sized to the turns in flight (``2 x cap + 8``), so after a burst each Bot API
request paid for dozens of idle connections: 10 % of the daemon's CPU in a 300-message burst (py-spy, issue 44),
about 0.7 ms a request with 64 idle connections (same process, the test server included).

:func:`cheap_idle_checks` wraps the pool's network backend so that each stream keeps its raw socket from the start
and answers ``is_readable`` from one ``poll`` over the sockets of all its streams, taken at the first question of a
scan and kept for that turn of the event loop (at most :data:`SNAPSHOT_S`): the same answer httpcore gets, asking
one socket at a time (a socket that is gone counts as readable: closed), for one system call a scan instead of one
a connection. A stream opened after the snapshot is polled alone. Everything else passes through unchanged.

The scan itself was quadratic: httpcore 1.0's ``_assign_requests_to_connections`` builds a list of every
connection for each idle one, to compare the pool's size with its keep-alive limit (``len([c.is_idle() for c in
connections])`` is the number of connections, idle or not). 64 idle connections made ~4,100 calls a scan, ~0.8 ms,
and a request takes at least two scans. :class:`_LinearPool` is the same method reading ``len(connections)``: the
same decisions (``is_idle`` changes nothing), linear. (httpcore2, under the OpenAI SDK, scans in one pass already.)

When httpx or httpcore no longer look as expected (another major version, another pool class), nothing is changed
and the pool works as before.
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import time
import weakref
from typing import Any

import httpcore
import httpx

__all__ = ["CheapIdleChecks", "cheap_idle_checks"]

log = logging.getLogger("sabha.telegram")

#: The longest a snapshot of which sockets are readable is used (it is also dropped at the next turn of the loop).
SNAPSHOT_S = 0.001


def _readable(sock: socket.socket | None) -> bool:
    """Whether ``sock`` has something to read (an idle HTTP connection: the server closed it); gone counts as yes."""
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class _Snapshot:
    """Which of the backend's sockets were readable at one moment (one ``poll``)."""

    def __init__(self, streams: list[_Stream]) -> None:
        self.taken = time.monotonic()
        self.closed: set[_Stream] = set()
        self.ready: set[int] = set()
        poll = select.poll()
        for stream in streams:
            fd = stream.fd()
            if fd < 0:
                self.closed.add(stream)
            else:
                poll.register(fd, select.POLLIN)
        self.checked = set(streams)
        self.ready = {fd for fd, _ in poll.poll(0)} if len(self.closed) < len(streams) else set()

    def readable(self, stream: _Stream) -> bool | None:
        """The answer for ``stream`` (None: it was not there when the snapshot was taken)."""
        if stream not in self.checked:
            return None
        return stream in self.closed or stream.fd() in self.ready


class _Stream(httpcore.AsyncNetworkStream):
    """A network stream whose raw socket is looked up once; it asks its backend whether it is readable."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, backend: CheapIdleChecks) -> None:
        self._inner = inner
        self._backend = backend
        self._sock: socket.socket | None = inner.get_extra_info("socket")
        backend.streams.add(self)

    def fd(self) -> int:
        """The socket's file descriptor, -1 once it is gone."""
        return -1 if self._sock is None else self._sock.fileno()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        self._backend.streams.discard(self)
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        self._backend.streams.discard(self)
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout), self._backend)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return self._backend.readable(self)
        return self._inner.get_extra_info(info)


class CheapIdleChecks(httpcore.AsyncNetworkBackend):
    """A network backend whose streams answer ``is_readable`` from a socket kept at connect time."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner
        self.streams: weakref.WeakSet[_Stream] = weakref.WeakSet()  # open (not closed through aclose)
        self._snapshot: _Snapshot | None = None
        self.polls = 0  # snapshots taken (one poll system call each)

    def readable(self, stream: _Stream) -> bool:
        """Whether ``stream``'s socket is readable (or gone), from this moment's snapshot."""
        snapshot = self._snapshot
        if snapshot is None or time.monotonic() - snapshot.taken > SNAPSHOT_S:
            snapshot = self._snapshot = _Snapshot(list(self.streams))
            self.polls += 1
            try:
                asyncio.get_running_loop().call_soon(self._forget, snapshot)
            except RuntimeError:  # no loop running here: nothing would drop it
                self._snapshot = None
        answer = snapshot.readable(stream)
        return _readable(stream._sock) if answer is None else answer

    def _forget(self, snapshot: _Snapshot) -> None:
        if self._snapshot is snapshot:
            self._snapshot = None

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self.inner.connect_tcp(host, port, timeout, local_address, socket_options), self)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self.inner.connect_unix_socket(path, timeout, socket_options), self)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class _LinearPool(httpcore.AsyncConnectionPool):
    """httpcore 1.0's pool with its scan made linear (see the module docstring); nothing else differs."""

    def _assign_requests_to_connections(self) -> list[httpcore.AsyncConnectionInterface]:
        closing_connections = []
        # Connections closed, expired, or idle beyond the keep-alive limit go (httpcore 1.0.9's rule, whose
        # list of every connection's is_idle() is the number of connections).
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif connection.has_expired() or (
                    connection.is_idle() and len(self._connections) > self._max_keepalive_connections):
                self._connections.remove(connection)
                closing_connections.append(connection)
        # Queued requests get a connection: an available one, a new one, or a new one in place of an idle one.
        queued_requests = [request for request in self._requests if request.is_queued()]
        for pool_request in queued_requests:
            origin = pool_request.request.url.origin
            available = next((c for c in self._connections if c.can_handle_request(origin) and c.is_available()),
                             None)
            if available is not None:
                pool_request.assign_to_connection(available)
            elif len(self._connections) < self._max_connections:
                connection = self.create_connection(origin)
                self._connections.append(connection)
                pool_request.assign_to_connection(connection)
            else:
                idle = next((c for c in self._connections if c.is_idle()), None)
                if idle is not None:
                    self._connections.remove(idle)
                    closing_connections.append(idle)
                    connection = self.create_connection(origin)
                    self._connections.append(connection)
                    pool_request.assign_to_connection(connection)
        return closing_connections


def cheap_idle_checks(client: httpx.AsyncClient) -> bool:
    """Make ``client``'s pool scan linear and wrap its network backend (before its first request); False when its
    shape is not the one this knows (then it is left alone)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if (type(pool) not in (httpcore.AsyncConnectionPool, _LinearPool) or not httpcore.__version__.startswith("1.")
            or not isinstance(backend, httpcore.AsyncNetworkBackend)):
        log.debug("telegram: httpx's pool is not the shape expected; its idle checks stay as they are")
        return False
    assert isinstance(pool, httpcore.AsyncConnectionPool)
    pool.__class__ = _LinearPool  # httpcore has no public hook for either
    if not isinstance(backend, CheapIdleChecks):
        pool._network_backend = CheapIdleChecks(backend)
    return True
