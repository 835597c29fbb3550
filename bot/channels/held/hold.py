"""The hold on the channels' webhook paths while the daemon starts; see :mod:`bot.channels.held`.

:class:`WebhookHold` is closed from the moment the port opens: a ``POST`` to a webhook path
(:func:`webhook_paths`) is read (the server's :class:`~bot.channels.webhook.BodyGate` applies), stored
(:class:`~bot.channels.held.store.HeldStore`) and answered 200; a store that cannot be written answers 503
(the sender delivers again), as the channels do. :meth:`WebhookHold.release` (the daemon awaits it once
every channel has started, before it says it is ready) hands each held request to its channel by posting
it again to the daemon's own port with :data:`REPLAY_HEADER` (this process's token: the hold lets it
through), oldest first, in waves (:func:`waves`: requests of different senders at once, a sender's in the order
they came); the row is deleted once the channel answered (2xx: taken; 4xx: refused, e.g. a
wrong signature, logged and dropped); a 5xx or no answer is tried again with a backoff. The hold opens
(requests go straight to the channels) once no row is left and no request is being stored. Rows left by
a crash are handed over at the next start. The front desk (:mod:`bot.channels.held.desk`) stores into the same
table and calls :meth:`WebhookHold.kick`, which hands its rows over the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

from board.storage import Database
from board.telemetry.spans import span, traceparent
from bot.channels.base import Channel, ChannelCapabilities
from bot.channels.held.store import Header, HeldRequest, HeldStore
from bot.channels.webhook import HELD_REQUEST, BodyTooLarge, read_body

__all__ = ["MAX_HELD", "MAX_HELD_BYTES", "MAX_WAVE", "REPLAY_HEADER", "Senders", "WebhookHold", "own_headers", "waves",
           "webhook_paths"]

log = logging.getLogger("sabha.webhook")

REPLAY_HEADER = "X-Sabha-Held"
MAX_HELD_BYTES = 4 * 1024 * 1024  # over every channel's own webhook limit (WhatsApp 3 MB); it checks its own
MAX_HELD = 10_000  # requests held in one start; past it 503 (the sender delivers again)
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
#: headers not kept: the connection's own, not the request's
_SKIPPED = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "expect",
                      "accept-encoding", REPLAY_HEADER.lower(), "traceparent", "tracestate"})



def own_headers(request: web.Request) -> list[tuple[str, str]]:
    """The headers that are the request's own, as the front desk relays them and a held row keeps them: not the
    connection's (host, length, encoding, keep-alive), not the hold's token, not a sender's trace context."""
    return [(name, value) for name, value in request.headers.items() if name.lower() not in _SKIPPED]


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: A channel's reading of a stored body: who it is from (:meth:`bot.channels.base.ServesWebhook.webhook_senders`).
Senders = Callable[[bytes], frozenset[str] | None]
MAX_WAVE = 64  # requests handed over at once (of different senders)


def waves(rows: Sequence[HeldRequest], senders: Mapping[str, Senders]) -> list[list[HeldRequest]]:
    """``rows`` (oldest first) cut into waves handed over one after the other, each wave's requests at once: a wave
    is the longest run of rows whose senders are all different (so no sender's requests pass each other), at most
    :data:`MAX_WAVE`; a row whose senders are unknown is a wave alone."""
    out: list[list[HeldRequest]] = []
    wave: list[HeldRequest] = []
    seen: set[str] = set()
    for row in rows:
        read = senders.get(row.path)
        who = read(row.body) if read is not None else None
        if wave and (who is None or not who.isdisjoint(seen) or len(wave) >= MAX_WAVE):
            out.append(wave)
            wave, seen = [], set()
        wave.append(row)
        if who is None:
            out.append(wave)
            wave, seen = [], set()
        else:
            seen |= who
    if wave:
        out.append(wave)
    return out


def webhook_paths(channels: Sequence[Channel]) -> frozenset[str]:
    """The ``POST`` routes that are a channel's webhook (its ``webhook_path``:
    :class:`bot.channels.base.ServesWebhook`): Telegram in webhook mode, WhatsApp. Not the web chat's endpoints: a
    browser waits for its answer."""
    paths: set[str] = set()
    for channel in channels:
        webhook = ChannelCapabilities.of(channel).webhook
        path = webhook.webhook_path if webhook is not None else None
        paths.update(route.path for route in channel.routes()
                     if isinstance(route, web.RouteDef) and route.method == "POST" and route.path == path)
    return frozenset(paths)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class WebhookHold:
    """See the module docstring. ``known_secrets``: the config's secrets (a header carrying one is stored as
    its digest and put back when handed over)."""

    def __init__(self, db: Database, *, paths: frozenset[str], known_secrets: Iterable[str],
                 senders: Mapping[str, Senders] | None = None) -> None:
        self.store = HeldStore(db)
        self.paths = paths
        self.senders = dict(senders or {})  # path -> who a stored body is from: see waves()
        self._secrets = {_digest(s): s for s in known_secrets if s}
        self.token = secrets.token_urlsafe(24)
        self.open = False
        self.held = 0  # stored in this start
        self.handed_over = 0
        self._storing = 0  # requests being stored right now
        self._task: asyncio.Task[None] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._base: str | None = None  # the main port, once release() began: kick() hands over from then on
        self._again = False  # the front desk stored a request since the hand-over last read the table
        self._passing = False  # a hand-over is reading and posting rows (one at a time: arrival order)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Hold a webhook that arrives before :meth:`release` has handed over what was held."""
        if request.method != "POST" or request.path not in self.paths:
            return await handler(request)
        if hmac.compare_digest(request.headers.get(REPLAY_HEADER, "").encode(), self.token.encode()):
            request[HELD_REQUEST] = True  # its signature's age counts from when it arrived
            return await handler(request)  # a held request, handed to its channel
        if self.open:
            return await handler(request)
        self._storing += 1
        try:
            with span("receipt", {"sabha.receipt.via": "held_at_start",
                                  "http.request.body.size": request.content_length}):
                return await self._keep(request)
        finally:
            self._storing -= 1

    async def _keep(self, request: web.Request) -> web.Response:
        from bot.intake.storage import is_storage_error

        if self.held >= MAX_HELD:
            return web.Response(status=503, text="too many webhooks while starting; deliver again later")
        try:
            body = await read_body(request, MAX_HELD_BYTES)
        except BodyTooLarge as exc:
            return web.Response(status=413, text=str(exc))
        try:
            await self.store.add(request.path, self.kept_headers(request), body, datetime.now(UTC))
        except Exception as exc:
            if not is_storage_error(exc):
                raise
            log.warning("webhook %s: cannot store what arrived while the channels start (%s); answered 503, so "
                        "the sender delivers it again", request.path, exc)
            return web.Response(status=503, text="cannot store the webhook right now; retry later")
        self.held += 1
        log.info("webhook %s: stored while the channels start (%d so far); it is answered once they are up",
                 request.path, self.held)
        return web.Response(text="ok")

    def kept_headers(self, request: web.Request) -> list[Header]:
        """The headers of ``request`` as a row keeps them (a secret of the config as its digest; thread-safe: the
        front desk calls it, :mod:`bot.channels.held.desk`)."""
        kept: list[Header] = [(name, self._stored(value)) for name, value in own_headers(request)]
        arrived_in = traceparent()  # tracing on: the receipt span of the desk; the hand-over carries it (W3C header)
        return kept if arrived_in is None else [*kept, ("traceparent", arrived_in)]

    def _stored(self, value: str) -> Any:
        digest = _digest(value)
        return {"secret": digest} if digest in self._secrets else value

    def _restored(self, headers: tuple[Header, ...]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in headers:
            if isinstance(value, dict):
                out[name] = self._secrets.get(str(value.get("secret")), "")  # a secret changed since: refused
            else:
                out[name] = str(value)
        out[REPLAY_HEADER] = self.token
        return out

    # -- handing over ----------------------------------------------------------------------

    async def release(self, base_url: str) -> None:
        """The channels are up: hand what is held to them through ``base_url`` (the daemon's own port). What
        cannot be handed over yet (a channel answers 503) is tried again in the background, with a backoff."""
        self._base = base_url
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        if not await self._pass(base_url):
            self._task = asyncio.create_task(self._retry(base_url), name="held webhooks")

    def kick(self) -> None:
        """The front desk stored a request (:mod:`bot.channels.held.desk`): hand it over now, unless a hand-over
        runs already (it reads again before it ends) or :meth:`release` has not come yet (it will)."""
        self._again = True
        if self._base is None or self._passing or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.create_task(self._retry(self._base, first=True), name="front desk hand-over")

    async def _retry(self, base_url: str, *, first: bool = False) -> None:
        failures = 0
        while True:
            if not first:
                failures += 1
                await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S)) - 1])
            first = False
            if await self._pass(base_url):
                return

    async def _pass(self, base_url: str) -> bool:
        """Hand over every held request; True once none is left (the hold is open then)."""
        self._passing = True
        try:
            return await self._pass_all(base_url)
        finally:
            self._passing = False

    async def _pass_all(self, base_url: str) -> bool:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        while True:
            self._again = False  # a kick from here on makes this pass read once more
            try:
                rows = await self.store.oldest(2 * MAX_WAVE)
                if rows and not await self._hand_over(self._http, base_url, rows):
                    return False
            except Exception as exc:  # noqa: BLE001 - the state store is away: tried again
                log.warning("webhook: handing over held requests failed (%s); trying again", exc)
                return False
            if not rows and not self._storing and not self._again:
                if not self.open and self.handed_over:
                    log.info("webhook: handed %d request(s) held at start to their channels", self.handed_over)
                self.open = True
                return True
            if not rows and not self._again:
                await asyncio.sleep(0.05)  # one is being stored: hand it over too

    async def _hand_over(self, http: aiohttp.ClientSession, base_url: str, rows: list[HeldRequest]) -> bool:
        """Post the rows to their channels, wave after wave (:func:`waves`); False after a wave with a request to
        try again later (the ones its channel took are removed; nothing of a later wave is posted)."""
        for wave in waves(rows, self.senders):
            taken = await asyncio.gather(*(self._post(http, base_url, row) for row in wave))
            await self.store.remove_all([row.id for row, ok in zip(wave, taken, strict=True) if ok])
            self.handed_over += sum(taken)
            if not all(taken):
                return False
        return True

    async def _post(self, http: aiohttp.ClientSession, base_url: str, row: HeldRequest) -> bool:
        """Post one row to its channel: True once it took it (or refused it: dropped), False to try again."""
        try:
            async with http.post(base_url + row.path, data=row.body, headers=self._restored(row.headers)) as resp:
                status, text = resp.status, (await resp.text())[:200]
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.warning("webhook %s: could not hand a held request to its channel (%s); trying again", row.path, exc)
            return False
        if status >= 500:
            log.warning("webhook %s: the channel answered %d to a held request (%s); trying again", row.path,
                        status, text)
            return False
        if status >= 400:
            log.warning("webhook %s: the channel refused a request held at start or by the front desk (%d: %s); "
                        "dropped", row.path, status, text)
        return True

    async def stop(self) -> None:
        """Stop handing over (what is left stays stored for the next start)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        self._base = None  # a late kick (the front desk stops first) starts nothing
        if self._http is not None:
            await self._http.close()

    def describe(self) -> dict[str, Any]:
        """For ``/healthz``."""
        return {"open": self.open, "held": self.held, "handed_over": self.handed_over}
