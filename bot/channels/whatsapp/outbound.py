"""Talking to the Graph API: one :class:`aiohttp.ClientSession` for the channel, text sends
with WhatsApp's limits respected, read receipts with a typing indicator.

``POST {graph_base_url}/{api_version}/{phone_number_id}/messages`` with the bearer token.
A text goes ``to`` a phone number, to ``recipient`` when only a business-scoped user id
is known, or ``to`` a group with ``recipient_type: group`` (:func:`.places.recipient`), and
quotes the message it answers (``context.message_id``). Errors branch on
``error.code`` (:mod:`.limits`): the number's throughput limit (130429) pauses every send
of the channel, the pair limit (131056) pauses sends to that user only, transient codes
pause and retry; the 24-hour window (131047) and the other permanent codes are never
retried. :meth:`GraphClient.send_text` has ``progress.leaving()`` called for each request that
may post something once that request has its connection, right before it is written (aiohttp's
trace signals ``on_connection_create_end`` / ``on_connection_reuseconn``, the request's
``trace_request_ctx``: :mod:`.departure`): the intake records "sending" there, not while the request waits for one
of the connector's connections; a mark that cannot be stored stops the request and closes its connection.

A request that cannot reach the Graph API at all (connection refused, unknown host) is a
network failure, not a refusal: it is retried like a transient error, logged as a network
failure, and marks the API unreachable (:attr:`GraphClient.reach`, what ``/readyz`` says for
the channel) until the API answers again; :meth:`GraphClient.probe` (``GET
/{phone-number-id}``, read-only) is how the channel checks it at start and in the background.

Only an answer that is the Graph API's counts as reaching it (:func:`graph_answer`): a JSON object, and for an
error status Graph's ``error`` object with its numeric ``code`` (what an expired token gets too); for the probe's
success the number's own ``id``. Anything else at ``whatsapp.graph_base_url`` (a wrong port, a proxy's error page,
another service) leaves the channel not ready, saying what answered (:class:`bot.channels.reach.NotTheAPI`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from board.envelope import Button
from bot.channels.reach import NotTheAPI, Reach, Unreachable
from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.departure import ClosingConnector, leaving_trace
from bot.channels.whatsapp.format import button_message
from bot.channels.whatsapp.limits import Backoff, ErrorClass, PairLimit, classify, retry_delay
from bot.channels.whatsapp.places import recipient
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

__all__ = ["IDLE_CHECK_S", "GraphClient", "GraphError", "Pacing", "Refused", "error_of", "graph_answer"]

log = logging.getLogger("sabha.whatsapp")

#: How long the Graph API may go without any request of the channel reaching it before it is probed.
IDLE_CHECK_S = 300.0


@dataclass(frozen=True)
class Pacing:
    """How long to pause after each kind of refusal (seconds, doubled per retry, jittered)."""

    channel_limit_s: float = 2.0  # 130429
    pair_limit_s: float = 6.0  # 131056: about one message every 6 s to one user
    transient_s: float = 1.0
    max_retries: int = 5
    timeout_s: float = 30.0


@dataclass(frozen=True)
class GraphError:
    """An error answer of the Graph API."""

    http_status: int
    code: int | None
    title: str
    details: str

    def __str__(self) -> str:
        code = f"error {self.code}" if self.code is not None else f"HTTP {self.http_status}"
        return f"{code} ({self.title}{': ' + self.details if self.details and self.details != self.title else ''})"


class Refused(SendFailed):
    """Meta refused a send for good; ``error`` is why."""

    def __init__(self, message: str, error: GraphError, outcome: DeliveryOutcome) -> None:
        super().__init__(message, outcome)
        self.error = error


def error_of(status: int, body: Any) -> GraphError:
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return GraphError(status, None, f"HTTP {status}", "")
    code = err.get("code")
    data = err.get("error_data") if isinstance(err.get("error_data"), dict) else {}
    return GraphError(status, code if isinstance(code, int) else None,
                      str(err.get("error_user_title") or err.get("message") or f"HTTP {status}"),
                      str((data or {}).get("details") or ""))


def graph_answer(status: int, body: Any) -> bool:
    """Whether ``body`` (parsed JSON, None when it was not JSON) answering with ``status`` is the Graph API's:
    a JSON object; for an error status one with Graph's ``error`` object and its numeric ``code``."""
    if not isinstance(body, dict):
        return False
    if status < 400:
        return True
    err = body.get("error")
    return isinstance(err, dict) and isinstance(err.get("code"), int) and not isinstance(err.get("code"), bool)


class GraphClient:
    """The channel's Graph API client; see the module docstring."""

    def __init__(self, settings: WhatsAppSection, pacing: Pacing | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        assert settings.access_token is not None
        self.url = settings.messages_url
        self.number_url = f"{settings.graph_base_url}/{settings.api_version}/{settings.phone_number_id}"
        self.number_id = settings.phone_number_id
        self.api = f"the WhatsApp Graph API at {settings.graph_base_url}"
        # idle: every 5 minutes at most (the Graph API's rate limits count these reads too)
        self.reach = Reach("whatsapp", self.api, self.probe, idle_check_s=IDLE_CHECK_S)
        self._token = settings.access_token.get_secret_value()
        self.pacing = pacing or Pacing()
        self.sleep = sleep
        self.channel_backoff = Backoff()
        self.pair_backoff = PairLimit()
        self.session: aiohttp.ClientSession | None = None
        self.connections = 100  # the connector's limit (requests beyond it wait for a connection)
        self.sent = 0
        self.refused = 0
        self.retried: dict[ErrorClass, int] = {}

    async def open(self) -> None:
        """Open the channel's one HTTP session."""
        if self.session is None:
            self.session = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {self._token}"},
                timeout=aiohttp.ClientTimeout(total=self.pacing.timeout_s),
                connector=ClosingConnector(limit=self.connections), trace_configs=[leaving_trace()])

    async def close(self) -> None:
        """Close the session."""
        if self.session is not None:
            await self.session.close()
            self.session = None

    async def _post(self, payload: dict[str, Any], progress: SendProgress | None = None) -> tuple[int, Any]:
        """POST ``payload``; ``progress`` is told (``leaving``) once the request has its connection."""
        if self.session is None:
            raise SendFailed("the WhatsApp channel is not started", DeliveryOutcome.NOT_SENT)
        try:
            async with self.session.post(self.url, json=payload, trace_request_ctx=progress) as resp:
                try:
                    body = await resp.json(content_type=None)
                except ValueError:
                    body = None
        except aiohttp.ClientConnectorError as exc:  # the API cannot be reached at all
            self.reach.lost(_network(exc))
            raise
        if graph_answer(resp.status, body):  # something else answering there has not reached the API
            self.reach.reached()
        return resp.status, body

    async def probe(self) -> None:
        """``GET /{phone-number-id}?fields=id``: does the Graph API answer? Its answer counts, an error too (an
        expired token is found by the sends); an answer that is not the Graph API's (:func:`graph_answer`, and for
        a success the number's ``id``) raises :class:`NotTheAPI` (see :class:`Reach`)."""
        if self.session is None:
            raise Unreachable("the WhatsApp channel is not started")
        try:
            async with self.session.get(self.number_url, params={"fields": "id"}) as resp:
                raw = await resp.read()
                kind = resp.content_type or "no content type"
        except aiohttp.ClientConnectorError as exc:
            raise Unreachable(_network(exc)) from exc
        except aiohttp.ClientError as exc:
            raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if graph_answer(resp.status, body) and (resp.status >= 400 or str(body.get("id")) == self.number_id):
            return
        raise NotTheAPI(f"HTTP {resp.status} {kind}, not the Graph API's answer to GET /{{phone-number-id}}; "
                        "is whatsapp.graph_base_url right?")

    async def mark_read(self, wamid: str, *, typing: bool = True) -> None:
        """Mark ``wamid`` read, with a typing indicator (best effort: a failure is logged at debug)."""
        payload: dict[str, Any] = {"messaging_product": "whatsapp", "status": "read", "message_id": wamid}
        if typing:
            payload["typing_indicator"] = {"type": "text"}
        try:
            status, body = await self._post(payload)
        except (aiohttp.ClientError, TimeoutError, SendFailed) as exc:
            log.debug("whatsapp: read receipt for %s failed: %s", wamid, exc)
            return
        if status >= 400:
            log.debug("whatsapp: read receipt for %s refused: %s", wamid, error_of(status, body))

    async def _wait_turn(self, user: str) -> None:
        while True:
            left = max(self.channel_backoff.left(), self.pair_backoff.left(user))
            if left <= 0:
                return
            await self.sleep(left)

    async def _after_network_failure(self, exc: aiohttp.ClientConnectorError, attempt: int, user: str,
                                     progress: SendProgress) -> None:
        """Pause before the ``attempt``-th retry of a send that could not reach the API, or give up."""
        if attempt > self.pacing.max_retries:
            outcome = DeliveryOutcome.NOT_SENT if progress.posted == 0 else DeliveryOutcome.MAY_HAVE_ARRIVED
            raise SendFailed(f"network failure: cannot reach {self.api} ({_network(exc)}); the message to {user} "
                             f"was not sent ({attempt - 1} retries)", outcome) from exc
        delay = retry_delay(attempt, self.pacing.transient_s)
        self.retried[ErrorClass.NETWORK] = self.retried.get(ErrorClass.NETWORK, 0) + 1
        log.warning("whatsapp: network failure sending to %s: cannot reach %s (%s); retrying in %.1f s",
                    user, self.api, _network(exc), delay)
        await self.sleep(delay)

    async def _before_leaving(self, exc: Exception, attempt: int, user: str, progress: SendProgress) -> None:
        """Pause before the ``attempt``-th retry of a send that failed before its request was written, or give up
        (not sent)."""
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if attempt > self.pacing.max_retries:
            outcome = DeliveryOutcome.NOT_SENT if progress.posted == 0 else DeliveryOutcome.MAY_HAVE_ARRIVED
            raise SendFailed(f"the message to {user} was not sent: its request failed before it was written "
                             f"({what}; {attempt - 1} retries)", outcome) from exc
        delay = retry_delay(attempt, self.pacing.transient_s)
        self.retried[ErrorClass.NETWORK] = self.retried.get(ErrorClass.NETWORK, 0) + 1
        log.warning("whatsapp: sending to %s failed before its request was written (%s); retrying in %.1f s",
                    user, what, delay)
        await self.sleep(delay)

    async def send_text(self, user: str, body: str, *, reply_to: str | None = None,
                        progress: SendProgress | None = None) -> str:
        """Send one text (at most 4096 characters) to ``user``; returns its wamid.

        Raises :class:`Refused` (never retried: the error says why) or :class:`SendFailed`
        (retries used up, or the request left and its answer was lost).
        """
        return await self.send_message(user, {"type": "text", "text": {"preview_url": False, "body": body}},
                                       reply_to=reply_to, progress=progress)

    async def send_buttons(self, user: str, body: str, buttons: tuple[Button, ...], *, reply_to: str | None = None,
                           progress: SendProgress | None = None) -> str:
        """Send ``body`` (at most 1024 characters) with reply buttons under it (:func:`.format.button_message`)
        to ``user``, as :meth:`send_text` does; returns its wamid."""
        return await self.send_message(user, button_message(body, buttons), reply_to=reply_to, progress=progress)

    async def send_message(self, user: str, content: dict[str, Any], *, reply_to: str | None = None,
                           progress: SendProgress | None = None) -> str:
        """Send one message of any type (``content``: ``{"type": "audio", "audio": {"id": ...}}``) to
        ``user``, as :meth:`send_text` does; returns its wamid."""
        progress = progress or SendProgress()
        payload: dict[str, Any] = {"messaging_product": "whatsapp", **recipient(user), **content}
        if reply_to:
            payload["context"] = {"message_id": reply_to}
        key = progress.part_key()
        if key:  # echoed in this message's status webhooks: confirms a reply that may have arrived
            payload["biz_opaque_callback_data"] = key
        attempt = 0
        while True:
            await self._wait_turn(user)
            try:
                status, answer = await self._post(payload, progress)  # "sending" as it gets its connection
            except aiohttp.ClientConnectorError as exc:  # never reached Meta: safe to retry
                await progress.nothing_posted()  # not "sending" through the pause: a kill then sends it later
                attempt += 1
                await self._after_network_failure(exc, attempt, user, progress)
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                if progress.in_flight:
                    raise SendFailed(f"the request to the Graph API failed after it left ({exc or type(exc).__name__})"
                                     "; it may have arrived", DeliveryOutcome.MAY_HAVE_ARRIVED) from exc
                # before it had its connection (a ConnectionTimeoutError waiting for one): nothing was written
                attempt += 1
                await self._before_leaving(exc, attempt, user, progress)
                continue
            else:
                if status < 400:
                    progress.in_flight = False
                    wamid = _wamid(answer)
                    progress.posted += 1
                    self.sent += 1
                    return wamid
                # Meta refused it: nothing was posted, so the delivery is not "sending" through the pause
                # before a retry (a kill then sends it after the restart instead of writing it off)
                await progress.nothing_posted()
                error = error_of(status, answer)
                kind = classify(error.code, status)
            outcome = DeliveryOutcome.NOT_SENT if progress.posted == 0 else DeliveryOutcome.MAY_HAVE_ARRIVED
            if kind in (ErrorClass.WINDOW_CLOSED, ErrorClass.PERMANENT):
                self.refused += 1
                raise Refused(f"WhatsApp refused the message to {user}: {error}", error, outcome)
            attempt += 1
            if attempt > self.pacing.max_retries:
                self.refused += 1
                raise Refused(f"WhatsApp kept refusing the message to {user} ({attempt - 1} retries): {error}",
                              error, outcome)
            self.retried[kind] = self.retried.get(kind, 0) + 1
            if kind is ErrorClass.CHANNEL_LIMIT:
                delay = retry_delay(attempt, self.pacing.channel_limit_s)
                self.channel_backoff.pause(delay)
                log.warning("whatsapp: the number's throughput limit was hit (%s); pausing every send %.1f s",
                            error, delay)
            elif kind is ErrorClass.PAIR_LIMIT:
                delay = retry_delay(attempt, self.pacing.pair_limit_s)
                self.pair_backoff.of(user).pause(delay)
                log.info("whatsapp: too many messages to %s in a short time (%s); pausing sends to them %.1f s",
                         user, error, delay)
            else:
                delay = retry_delay(attempt, self.pacing.transient_s)
                log.warning("whatsapp: sending to %s failed (%s); retrying in %.1f s", user, error, delay)
                await self.sleep(delay)


def _network(exc: aiohttp.ClientConnectorError) -> str:
    """What a failed connection found, in one line (no URL path, so no token or number)."""
    reason = exc.os_error.strerror if exc.os_error is not None and exc.os_error.strerror else str(exc.os_error)
    return f"{type(exc).__name__} to {exc.host}:{exc.port}: {reason}"


def _wamid(answer: Any) -> str:
    try:
        return str(answer["messages"][0]["id"])
    except (KeyError, IndexError, TypeError):
        return ""
