"""The front desk: the channels' webhooks received on a thread and an event loop of their own
(``server.front_desk_port``).

One event loop serves the board's turns, and an acknowledgement on it needs about five turns of
that loop, so its latency is the loop's busiest moments (notes/daemon-latency.md). The front desk
listens on its own port, in its own thread with its own event loop and its own connection to the
state store, and does only what must come before the 200:

1. a ``POST`` to a channel's webhook path is read (size limit; the server's
   :class:`~bot.channels.webhook.BodyGate`);
2. its channel looks at it (:meth:`bot.channels.base.ServesWebhook.front_desk`, a pure function: the
   signature or secret token, the kind of request): refused (401/403 ..., never stored), relayed
   (a request whose answer the channel must write, e.g. Slack's URL check or a slash command: posted
   to the main port and its answer passed back) or stored;
3. stored as it came in ``held_webhooks`` (a header carrying a secret of the config as its digest), committed
   with the requests arriving meanwhile (group commit through a connection of the desk's thread:
   :mod:`bot.channels.held.journal`); a store that cannot be written
   answers 503 (the sender delivers it again);
4. answered 200;
5. the main loop is told (``call_soon_threadsafe``): :meth:`WebhookHold.kick` hands the stored
   requests to their channels on the main port, oldest first, one consumer, where each channel's own
   handler does what it always did (parse, admission, dedupe on the message id, the durable claim in
   the inbox, lanes); the row is deleted once the channel answered.

A kill between 3 and the end of 5 leaves the row: handed over at the next start (:meth:`WebhookHold.release`);
a message the inbox has already is skipped there, so nothing is answered twice. The journal is the table the
daemon already uses for what arrives while the channels start: no second one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp
from aiohttp import web

from board.storage import Database, Dialect
from board.storage.url import StateURL
from board.telemetry.spans import span
from bot.channels.held.hold import MAX_HELD_BYTES, WebhookHold, own_headers
from bot.channels.held.journal import DatabaseWriter, Journal, JournalWriter, SqliteWriter
from bot.channels.webhook import BODY_GATE, BodyGate, BodyTooLarge, DeskVerdict, read_body
from bot.ops.interpreter import SWITCH_INTERVAL_S
from bot.ops.listen import bind_site

__all__ = ["DeskCheck", "DeskLimits", "FrontDesk"]

log = logging.getLogger("sabha.webhook")

STOP_WAIT_S = 10.0  # at most this long for the front desk's thread to end at a stop


#: A channel's look at a request on the front desk: (headers, raw body) -> verdict. Runs on the front desk's
#: thread: it must not touch what the main loop changes (pure checks: a signature, a secret, the body's kind).
DeskCheck = Callable[[Mapping[str, str], bytes], DeskVerdict]


@dataclass(frozen=True)
class DeskLimits:
    """The front desk's server limits (from ``server``: the same as the main port's)."""

    body_timeout_s: float
    max_pending_bodies: int
    idle_timeout_s: float


class FrontDesk:
    """See the module docstring. ``checks``: webhook path -> its channel's check; ``main_base``: the main port's
    ``http://host:port`` (relayed requests go there)."""

    def __init__(self, *, url: StateURL, opener: Callable[[], Awaitable[Database]], host: str, port: int,
                 checks: Mapping[str, DeskCheck], hold: WebhookHold, main_base: str, limits: DeskLimits) -> None:
        self.url = url  # state.url: SQLite is written through a connection of the desk's thread
        self.opener = opener  # PostgreSQL: the state store (migrations checked, none applied), opened in its loop
        self.host = host
        self.port = port
        self.checks = dict(checks)
        self.hold = hold
        self.main_base = main_base
        self.limits = limits
        self.stored = 0  # written by the front desk's thread, read for logs and metrics
        self.refused = 0
        self.relayed = 0
        self.storing = 0  # requests whose commit is awaited now (their 200 not sent yet)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._main: asyncio.AbstractEventLoop | None = None

    async def start(self) -> int:
        """Start the thread; returns once its port listens (the port: ``server.front_desk_port``, or the one picked
        for 0). Raises what stopped it (a port in use, a store that cannot be opened)."""
        self._main = asyncio.get_running_loop()
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:  # the desk's thread waits this long at most for the GIL
            sys.setswitchinterval(SWITCH_INTERVAL_S)  # (the daemon sets it at start: bot.ops.interpreter)
        started: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(started,), name="sabha-front-desk", daemon=True)
        self._thread.start()
        self.port = await asyncio.wrap_future(started)
        log.info("front desk: webhooks %s received on http://%s:%d on their own thread (stored, then 200)",
                 ", ".join(sorted(self.checks)), self.host, self.port)
        return self.port

    async def stop(self) -> None:
        """Stop taking webhooks (what was stored is handed over by the hold, now or at the next start)."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        self._thread = None
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        await asyncio.to_thread(thread.join, STOP_WAIT_S)
        log.info("front desk: stopped (%d webhook(s) stored, %d refused, %d relayed)", self.stored, self.refused,
                 self.relayed)

    def describe(self) -> dict[str, int]:
        """For ``/healthz``: its port and counts since the start (``storing``: waiting for their commit now)."""
        return {"port": self.port, "storing": self.storing, "stored": self.stored, "refused": self.refused,
                "relayed": self.relayed, "handed_over": self.hold.handed_over}

    # -- the front desk's thread -------------------------------------------------------------

    def _run(self, started: concurrent.futures.Future[int]) -> None:
        try:
            asyncio.run(self._serve(started))
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
            else:
                log.exception("front desk: stopped by an error; webhooks are refused until a restart")

    async def _serve(self, started: concurrent.futures.Future[int]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        writer: JournalWriter
        if self.url.dialect is Dialect.SQLITE and self.url.path is not None:
            writer = SqliteWriter(self.url.path)  # its own connection, used on this thread only
        else:
            writer = DatabaseWriter(await self.opener())  # its own pool, made in this loop
        try:
            store = Journal(writer)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
                runner = await self._listen(store, http)
                try:
                    started.set_result(self.port)
                    await self._stop.wait()
                finally:
                    await runner.cleanup()
        finally:
            await writer.close()

    async def _listen(self, store: Journal, http: aiohttp.ClientSession) -> web.AppRunner:
        limits = self.limits
        app = web.Application()
        app[BODY_GATE] = BodyGate(limits.body_timeout_s, limits.max_pending_bodies)

        async def take(request: web.Request) -> web.StreamResponse:
            return await self._take(request, store, http)

        for path in self.checks:
            app.router.add_post(path, take)
        runner = web.AppRunner(app, handle_signals=False, access_log=None, keepalive_timeout=limits.idle_timeout_s,
                               lingering_time=min(2.0, limits.body_timeout_s))
        await runner.setup()
        try:
            self.port = await bind_site(runner, self.host, self.port, "front_desk_port", who="front desk")
        except OSError:
            await runner.cleanup()
            raise
        return runner

    async def _take(self, request: web.Request, store: Journal,
                    http: aiohttp.ClientSession) -> web.StreamResponse:
        from bot.intake.storage import is_storage_error

        try:
            body = await read_body(request, MAX_HELD_BYTES)
        except BodyTooLarge as exc:
            return web.Response(status=413, text=str(exc))
        verdict = self.checks[request.path](request.headers, body)
        if verdict.relay:
            self.relayed += 1
            return await self._relay(request, body, http)
        if not verdict.stored:
            self.refused += 1
            log.warning("front desk: refused a request to %s from %s (%d: %s)", request.path, request.remote,
                        verdict.status, verdict.text)
            return web.Response(status=verdict.status, text=verdict.text)
        self.storing += 1
        try:
            with span("receipt", {"sabha.receipt.via": "front_desk", "http.request.body.size": len(body)}):
                await store.add((request.path, json.dumps(self.hold.kept_headers(request)), body,
                                 datetime.now(UTC).isoformat()))
        except Exception as exc:
            if not is_storage_error(exc):
                raise
            log.warning("front desk: cannot store a webhook to %s (%s); answered 503, so the sender delivers it "
                        "again", request.path, exc)
            return web.Response(status=503, text="cannot store the webhook right now; retry later")
        finally:
            self.storing -= 1
        self.stored += 1
        assert self._main is not None
        self._main.call_soon_threadsafe(self.hold.kick)  # stored: the main loop's one consumer hands it over
        return web.Response(text="ok")

    async def _relay(self, request: web.Request, body: bytes, http: aiohttp.ClientSession) -> web.Response:
        """Post ``request`` to the main port and answer what it answered (its channel writes this answer)."""
        headers = dict(own_headers(request))
        try:
            async with http.post(self.main_base + request.path_qs, data=body, headers=headers) as resp:
                text = await resp.read()
                return web.Response(status=resp.status, body=text, content_type=resp.content_type)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.warning("front desk: could not pass a request to %s on to the main port (%s); answered 503",
                        request.path, exc)
            return web.Response(status=503, text="busy; retry later")
