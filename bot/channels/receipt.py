"""The ``receipt`` span: where a message reaches Sabha (a webhook's request, a poll's batch of updates), the first
span of the message's trace while tracing is on (:mod:`board.telemetry`).

Inside it the channel reads what came and hands the messages to the intake, whose ``claim`` span (the durable
store) is its child; each stored row keeps the receipt's trace context (``inbound_messages.traceparent``), so the
answer's ``message`` span, taken up later in the conversation's lane, joins the same trace. A webhook the front desk
(:mod:`bot.channels.held`, its own thread and loop) stored first is received twice: the desk's ``receipt`` span
(``sabha.receipt.via`` ``front_desk``) writes its context as a ``traceparent`` header into the held row, and the
channel's span, when the row is handed over, is its child. Its attributes are the
channel, how it came (``webhook``, ``poll``, ``gateway`` (Discord), ``socket`` (Slack's Socket Mode), ``page`` (the
web chat's post)), the request's size or the batch's count and the answer's status:
never a text, a sender or a chat. While tracing is off it is the facade's one shared quiet span.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TypeVar

from aiohttp import web

from board.telemetry.spans import is_on, span
from bot.channels.webhook import HELD_REQUEST

__all__ = ["ReceivedVia", "received", "received_request"]

_R = TypeVar("_R", bound=web.StreamResponse)


class ReceivedVia(StrEnum):
    """How a channel got what it received (the span's ``sabha.receipt.via``)."""

    WEBHOOK = "webhook"
    POLL = "poll"
    GATEWAY = "gateway"  # Discord's gateway (a WebSocket the daemon holds open)
    SOCKET = "socket"  # Slack's Socket Mode (an envelope on a WebSocket)
    PAGE = "page"  # the web chat's page posting the owner's message


@contextmanager
def received(channel: str, via: ReceivedVia, count: int = 1) -> Iterator[None]:
    """The ``receipt`` span around taking ``count`` message(s) that came ``via`` something other than a webhook's
    request (a poll's batch, a gateway's or a socket's messages, the web chat's post); the intake's ``claim`` inside
    it is its child, and the stored rows keep its context."""
    with span("receipt", {"sabha.channel": channel, "sabha.receipt.via": via.value, "sabha.updates.count": count}):
        yield


async def received_request(channel: str, request: web.Request, take: Callable[[web.Request], Awaitable[_R]]) -> _R:
    """``take(request)`` (a webhook route's work: read, check, claim, answer) inside the ``receipt`` span. A request
    the front desk (or the start-time hold) stored and now hands over carries the ``traceparent`` of the span that
    stored it: this span is then that one's child (a sender's own ``traceparent`` is not followed)."""
    if not is_on():  # tracing off: the span is the shared quiet one; its attributes need not be read
        return await take(request)
    held = bool(request.get(HELD_REQUEST))
    stored = request.headers.get("traceparent") if held else None
    with span("receipt", {"sabha.channel": channel, "sabha.receipt.via": ReceivedVia.WEBHOOK.value,
                          "sabha.receipt.held": held or None, "http.request.body.size": request.content_length},
              root=stored is not None, parent=stored) as receipt:
        response = await take(request)
        receipt.set("http.response.status_code", response.status)
        return response
