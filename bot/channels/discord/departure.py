"""When a Discord reply's request leaves: the "sending" mark at the moment the request has its connection.

discord.py sends every REST request through one aiohttp session; its ``http_trace`` option takes an aiohttp
:class:`aiohttp.TraceConfig`. :func:`leaving_trace` is that trace: on ``on_connection_create_end`` and
``on_connection_reuseconn`` (the request has its connection and is about to be written; aiohttp has no signal
before the first byte) it awaits ``leaving()`` of the :class:`bot.intake.delivery.SendProgress` the sending code
put in :data:`PROGRESS` (:func:`sending`) around its call. A request waiting in discord.py's rate limiter (a
bucket exhausted, a 429's ``retry_after``) has not left: the mark waits for it. Requests made outside
:func:`sending` (history, threads, the probe) mark nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from types import SimpleNamespace

import aiohttp

from bot.intake.delivery import SendProgress

__all__ = ["PROGRESS", "leaving_trace", "sending"]

#: The delivery whose request the current task is making (None: a request that posts no reply).
PROGRESS: ContextVar[SendProgress | None] = ContextVar("sabha_discord_progress", default=None)


async def _connected(session: aiohttp.ClientSession, context: SimpleNamespace, params: object) -> None:
    progress = PROGRESS.get()
    if progress is not None:
        await progress.leaving()


def leaving_trace() -> aiohttp.TraceConfig:
    """The trace config that tells the current delivery its request is leaving (see the module docstring)."""
    trace = aiohttp.TraceConfig()
    trace.on_connection_create_end.append(_connected)
    trace.on_connection_reuseconn.append(_connected)
    return trace


@contextlib.contextmanager
def sending(progress: SendProgress | None) -> Iterator[None]:
    """The requests made in the block are ``progress``'s (see the module docstring)."""
    token = PROGRESS.set(progress)
    try:
        yield
    finally:
        PROGRESS.reset(token)
