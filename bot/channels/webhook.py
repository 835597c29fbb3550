"""Reading a webhook's body safely: the raw bytes (for signatures), with a size limit (413),
a time limit and a cap on how many bodies may be arriving at once.

A body is read before it can be authenticated (a WhatsApp signature covers the bytes), so
anyone can open connections and send a byte a second. The daemon puts a :class:`BodyGate`
on its application (``server.body_timeout_s``, ``server.max_pending_bodies``): a body that
has not arrived in full within the timeout is answered 408 and the connection closed; when
more bodies than the cap are arriving at once, the one that has waited longest is answered
503 and closed to make room (a real webhook's body arrives in milliseconds, so it is never
the oldest). A body that has arrived in full before the handler asks for it (a webhook of a few
kilobytes comes with its headers) is taken from aiohttp's buffer at once: nothing is left to wait
for, so neither the timeout nor the cap applies, and the acknowledgement skips their cost (a timer
and an async read loop per request: about a third of the channel's own CPU per acknowledgement).
What a channel's check on the front desk decides (:class:`DeskVerdict`, :mod:`bot.channels.held.desk`) is
here too, beside the body it looks at. Without a gate on the application (a channel served alone in a unit
test) a body is read with the size limit only. What arrives while the channels start is held by
:mod:`bot.channels.held` (stored, 200, handed over once they are up).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass

from aiohttp import web

__all__ = ["BODY_GATE", "HELD_REQUEST", "BodyGate", "BodyTooLarge", "DeskVerdict", "read_body", "stored_earlier"]

log = logging.getLogger("sabha.webhook")


@dataclass(frozen=True)
class DeskVerdict:
    """What the front desk does with a request its channel looked at: ``status`` 200 and ``relay`` False: store it,
    then 200; ``relay``: post it to the main port and pass the answer back; else refuse it with ``status`` and
    ``text`` (never stored)."""

    status: int = 200
    text: str = ""
    relay: bool = False

    @property
    def stored(self) -> bool:
        """Store it, then answer 200."""
        return self.status == 200 and not self.relay


class BodyTooLarge(Exception):
    """The body is over the route's limit; answer 413."""


@dataclass
class _Arriving:
    """One body being read: its deadline (moved to now to evict it) and why it ended early."""

    deadline: asyncio.Timeout
    evicted: bool = False


class BodyGate:
    """How long a request body may take to arrive, and how many may be arriving at once."""

    def __init__(self, timeout_s: float, max_pending: int) -> None:
        self.timeout_s = timeout_s
        self.max_pending = max_pending
        self._arriving: dict[int, _Arriving] = {}  # in arrival order (dicts keep insertion order)
        self._ids = itertools.count()
        self.timed_out = 0  # since the start, for the log
        self.evicted = 0
        self._last_log = 0.0

    async def read(self, request: web.Request, limit: int) -> bytes:
        """The body of ``request`` (see :func:`read_body`), within the timeout and the cap.

        Raises ``web.HTTPRequestTimeout`` (408) when it is too slow and
        ``web.HTTPServiceUnavailable`` (503) when it was evicted for a newer one; both close
        the connection."""
        key = next(self._ids)
        me = self._arriving[key] = _Arriving(asyncio.timeout(self.timeout_s))
        try:
            async with me.deadline:  # entered before anything else runs: only then may it be evicted
                if len(self._arriving) > self.max_pending:
                    self._evict_oldest(but=me)
                return await _read(request, limit)
        except TimeoutError:
            raise self._refusal(request, me) from None
        finally:
            self._arriving.pop(key, None)

    def _evict_oldest(self, *, but: _Arriving) -> None:
        """End the body that has been arriving longest (not ``but``, nor one already ending)."""
        for arriving in self._arriving.values():
            if arriving is not but and not arriving.evicted and not arriving.deadline.expired():
                arriving.evicted = True
                arriving.deadline.reschedule(asyncio.get_running_loop().time())
                return

    def _refusal(self, request: web.Request, me: _Arriving) -> web.HTTPException:
        if me.evicted:
            self.evicted += 1
            refusal: web.HTTPException = web.HTTPServiceUnavailable(
                text=f"too many request bodies arriving at once (over {self.max_pending}); retry")
        else:
            self.timed_out += 1
            refusal = web.HTTPRequestTimeout(text=f"the body did not arrive within {self.timeout_s:g} s")
        refusal.force_close()  # no keep-alive for a client this slow
        now = time.monotonic()
        if now - self._last_log >= 60:  # a flood of slow clients logs a line a minute, not one each
            self._last_log = now
            log.warning("webhook: closed a slow connection from %s on %s (%d body timeout(s) and %d eviction(s) "
                        "so far; server.body_timeout_s %g, server.max_pending_bodies %d)", request.remote,
                        request.path, self.timed_out, self.evicted, self.timeout_s, self.max_pending)
        return refusal


#: Set on a request the hold hands over (:mod:`bot.channels.held`): it was stored when it arrived, maybe long ago.
HELD_REQUEST = "sabha_held_request"


def stored_earlier(request: web.Request) -> bool:
    """Whether ``request`` is one the daemon stored when it arrived and hands to its channel now (held at start or
    taken by the front desk): a timestamp window on its signature (Slack's five minutes) is judged at arrival."""
    return bool(request.get(HELD_REQUEST))


#: Where the daemon puts its :class:`BodyGate` on the application.
BODY_GATE = web.AppKey("sabha_body_gate", BodyGate)


async def read_body(request: web.Request, limit: int) -> bytes:
    """The raw body, at most ``limit`` bytes; raises :class:`BodyTooLarge` past it (checked on
    the declared length first, then while reading, so a lying or missing header cannot pass).

    Through the application's :class:`BodyGate` when it has one (408 / 503 as it says)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyTooLarge(f"a body of {declared:,} bytes is over the {limit:,}-byte limit")
    if request.content.is_eof():  # all of it is here already: nothing to wait for
        return _buffered(request, limit)
    gate = request.config_dict.get(BODY_GATE)
    if gate is None:
        return await _read(request, limit)
    return await gate.read(request, limit)


def _buffered(request: web.Request, limit: int) -> bytes:
    """The body aiohttp has received in full (``feed_eof`` was called), taken from its buffer without waiting."""
    content = request.content
    chunks: list[bytes] = []
    size = 0
    while not content.at_eof():
        chunk = content.read_nowait(-1)
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"a body of more than {limit:,} bytes is over the limit")
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _read(request: web.Request, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"a body of more than {limit:,} bytes is over the limit")
        chunks.append(chunk)
    return b"".join(chunks)
