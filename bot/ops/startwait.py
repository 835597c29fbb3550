"""Start-up while the state store cannot be reached yet (PostgreSQL still starting, its network not up).

:class:`StoreWait` calls an opener until it returns. A :class:`board.storage.StorageError` marked
``retryable`` (the server cannot be reached now: refused, timed out, starting up, out of connections)
is waited out with a capped backoff (:data:`BACKOFF_S`), each try logged with what to check; anything
else (a refused login, a missing database or role, a bad config) is raised at once, so ``sabha run``
exits with code 2 and one line: restarting cannot fix those.

While it waits, a stand-in HTTP server (:class:`StandIn`) holds ``server.host:server.port``:
``/healthz`` answers 200 (the process lives; ``status: starting``, the problem, which try and when the next
one is: ``waiting_for``), ``/readyz`` 503 with the problem, anything else 503 (a webhook is delivered again
later: nothing can be stored yet).
systemd gets ``STATUS=`` with the problem and ``EXTEND_TIMEOUT_USEC`` (a start that waits is not killed
by ``TimeoutStartSec``; the daemon's ``WATCHDOG=1`` pings run meanwhile). Once the stand-in listens,
``on_waiting(port)`` is called (the daemon writes ``daemon.json`` with phase ``starting`` there, so ``sabha status``
finds it: :mod:`bot.ops.runtime`). A stop asked for meanwhile (SIGTERM, SIGINT) ends the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from aiohttp import web

from board import __version__
from board.storage import StorageError
from bot.ops.listen import bind_site
from bot.ops.logs import redact
from bot.ops.notify import Notifier

__all__ = ["BACKOFF_S", "StandIn", "StoreWait", "Waited"]

log = logging.getLogger("sabha.daemon")

#: Seconds between tries: the 1st, 2nd ... wait (the last repeats).
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)

T = TypeVar("T")


@dataclass(frozen=True)
class Waited(Generic[T]):
    """What :meth:`StoreWait.open` gives back: the opened value (None: a stop was asked for while waiting)
    and the port the stand-in server held (None: it never ran), for the real server to take over."""

    value: T | None
    port: int | None = None


class StandIn:
    """The HTTP server that answers while the state store cannot be reached; see the module docstring."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.problem = "the state store is not reachable yet"
        self.started = time.monotonic()
        self.tries = 0  # the tries made so far
        self.next_try_at = ""  # UTC ISO 8601: when the next one is made
        self._runner: web.AppRunner | None = None

    async def start(self) -> int:
        """Listen; the port it took (``server.port`` 0 picks one)."""
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_route("*", "/{tail:.*}", self._other)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        try:
            self.port = await bind_site(self._runner, self.host, self.port, "port")
        except OSError:
            await self.close()
            raise
        return self.port

    def _reason(self) -> str:
        return redact(f"state store unreachable: {self.problem}")

    def waiting_for(self) -> dict[str, object]:
        """What the start waits for: ``what``, the redacted ``problem``, ``try`` (tries made), ``next_try_at``."""
        return {"what": "the state store", "problem": self._reason(), "try": self.tries,
                "next_try_at": self.next_try_at}

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "starting", "version": __version__,
                                  "uptime_s": round(time.monotonic() - self.started, 1),
                                  "waiting_for": self.waiting_for(), "problem": self._reason()})

    async def _readyz(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "not ready", "ready": False, "reasons": [self._reason()],
                                  "checks": {"phase": "starting", "storage": {"ok": False, "problem": self._reason()}}},
                                 status=503)

    async def _other(self, request: web.Request) -> web.Response:
        return web.Response(status=503, headers={"Retry-After": "30"},
                            text="Sabha is starting: its state store cannot be reached yet, so nothing can be "
                                 "stored; deliver again later\n")

    async def close(self) -> None:
        """Stop listening (the real server takes the port next)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class StoreWait:
    """Opens the state store at start, waiting out an outage; see the module docstring."""

    def __init__(self, *, host: str, port: int, where: str, notifier: Notifier, stop: asyncio.Event,
                 backoff: tuple[float, ...] = BACKOFF_S, on_waiting: Callable[[int], None] | None = None) -> None:
        self.host = host
        self.port = port
        self.where = where  # "PostgreSQL at host:port": what the log tells the person to check
        self.notifier = notifier
        self.stop = stop
        self.backoff = backoff
        self.on_waiting = on_waiting
        self.tries = 0

    async def open(self, opener: Callable[[], Awaitable[T]]) -> Waited[T]:
        """``opener()``'s value once it succeeds; raises what waiting cannot fix."""
        stand_in: StandIn | None = None
        try:
            while True:
                self.tries += 1
                try:
                    value = await opener()
                except StorageError as exc:
                    if not exc.retryable:
                        raise
                    if stand_in is None:
                        stand_in = StandIn(self.host, self.port)
                        self.port = await stand_in.start()
                        if self.on_waiting is not None:
                            self.on_waiting(self.port)
                    if not await self._wait_out(exc, stand_in):
                        return Waited(None, self.port if stand_in else None)
                    continue
                if self.tries > 1:
                    log.info("state store reached after %d tries; starting", self.tries)
                return Waited(value, stand_in.port if stand_in is not None else None)
        finally:
            if stand_in is not None:
                await stand_in.close()

    async def _wait_out(self, exc: StorageError, stand_in: StandIn) -> bool:
        """Log, tell systemd, wait the next backoff step; False when a stop was asked for meanwhile."""
        delay = self.backoff[min(self.tries, len(self.backoff)) - 1]
        problem = " ".join(str(exc).split())
        stand_in.problem = problem
        stand_in.tries = self.tries
        stand_in.next_try_at = (datetime.now(UTC) + timedelta(seconds=delay)).isoformat(timespec="seconds")
        log.warning("cannot reach the state store yet (try %d): %s; trying again in %g s. Check that %s runs and "
                    "accepts connections from this host (state.url, firewall); /readyz answers 503 meanwhile "
                    "(http on %s:%s)", self.tries, problem, delay, self.where, self.host, stand_in.port)
        status = redact(f"not ready: waiting for the state store ({problem}); try {self.tries}, next in {delay:g} s")
        self.notifier.extend_timeout(delay + 30, status)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), delay)
        if self.stop.is_set():
            log.info("stopped while waiting for the state store")
            return False
        return True
