"""The moment a Telegram request starts to leave: where a reply's "sending" mark is taken.

A PTB call does not write its request at once: it may wait for a connection from the httpx pool
(every connection busy with other sends, typing indicators, meeting posts), and on a loaded machine
the event loop may run other work for a while before it writes. A reply marked "sending" before
that wait and lost in it (Sabha killed) was never sent, yet a restart could only treat it as
"may have arrived". So the mark goes where the bytes leave: httpcore's ``trace`` request extension
(an async callback told ``http11.send_request_headers.started`` right before the request's first
byte is written; not for an HTTP proxy's ``CONNECT``, which only opens the tunnel) awaits
:meth:`bot.intake.delivery.SendProgress.leaving` there; the request waits for the mark to be stored, holding
its connection, then goes.

:func:`departing` says which delivery the requests made inside it belong to (a context variable:
PTB awaits its request in the caller's task); :func:`attach_departure`, an httpx ``request`` event
hook on the bot's client (:func:`departure_hooks`), gives each such request the trace callback.
A mark that could not be stored (a storage error, a lost lease) stops the request before anything
is written; PTB reports it as a network error, so :meth:`Departure.reraise` gives the caller the
mark's own error back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import httpx

from bot.intake.delivery import SendProgress

__all__ = ["Departure", "attach_departure", "departing", "departure_hooks"]

#: The trace events that come right before a request's first byte is written (HTTP/1.1, HTTP/2).
_LEAVING = ("http11.send_request_headers.started", "http2.send_request_headers.started")

_current: ContextVar[Departure | None] = ContextVar("sabha_telegram_departure", default=None)


class Departure:
    """The requests of one delivery attempt: ``progress.leaving()`` is awaited when one starts to leave."""

    def __init__(self, progress: SendProgress) -> None:
        self.progress = progress
        self.left = False  # a request of it started to be written (False: a failure proves nothing left)
        self.error: Exception | None = None  # storing the mark failed: nothing was written

    async def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's ``trace`` callback."""
        if event not in _LEAVING:
            return
        request = info.get("request")
        if getattr(request, "method", None) == b"CONNECT":  # an HTTP proxy's tunnel: the request is still to go
            return
        try:
            await self.progress.leaving()
        except Exception as exc:
            self.error = exc
            raise
        self.left = True

    def reraise(self) -> None:
        """Raise the mark's own error when storing it is what stopped the request."""
        if self.error is not None:
            raise self.error


@contextlib.contextmanager
def departing(progress: SendProgress | None) -> Iterator[Departure | None]:
    """Requests made inside take ``progress``'s "sending" mark as they start to leave (None: no mark)."""
    if progress is None:
        yield None
        return
    departure = Departure(progress)
    token = _current.set(departure)
    try:
        yield departure
    finally:
        _current.reset(token)


async def attach_departure(request: httpx.Request) -> None:
    """httpx ``request`` event hook: a request made inside :func:`departing` gets its trace callback."""
    departure = _current.get()
    if departure is not None:
        request.extensions["trace"] = departure.trace


def departure_hooks() -> dict[str, Any]:
    """``httpx_kwargs`` for PTB's ``HTTPXRequest``: the event hook above on its client."""
    return {"event_hooks": {"request": [attach_departure]}}
