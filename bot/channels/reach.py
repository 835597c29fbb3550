"""Whether a channel can reach its service's API right now (part of what ``/readyz`` says).

A channel that cannot reach its API cannot answer anyone, whatever else works: webhooks
may still arrive and be stored, but every reply fails. :class:`Reach` keeps that verdict
for one channel from two sources:

* what the channel's own requests find: a request that could not reach the API (the
  connection was refused, the host is unknown, no answer in time) calls :meth:`Reach.lost`;
  any answer from the API, an error answer too, calls :meth:`Reach.reached`;
* a probe (a cheap read-only request of the channel's: ``GET /{phone-number-id}`` on the
  Graph API, ``getMe`` on the Bot API): once at start (:meth:`Reach.check`), then by the
  background watcher: while the API is unreachable, again and again with backoff (1, 2,
  5, 10, 30 s) until it answers; while it is reachable, after ``idle_check_s`` (a minute by
  default; five on WhatsApp, whose Graph API counts these reads against its rate limits) without
  any request of the channel's having reached it.

A probe raises :class:`Unreachable` (with what happened, one line) when the API cannot be
reached and returns when it answered. Something else answering at the API's address (a wrong port in
the config, a proxy's error page, another service) is not the API answering: the probe raises
:class:`NotTheAPI` (a kind of :class:`Unreachable`) and the verdict says what answered instead of
"network failure". Losing and regaining the API are each logged once,
as a network failure, with the API's address; the verdict is :attr:`Reach.problem`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["BACKOFF_S", "IDLE_CHECK_S", "PROBE_TIMEOUT_S", "NotTheAPI", "Reach", "Unreachable"]

log = logging.getLogger("sabha.channels")

#: Pauses between probes while the API cannot be reached (the last one repeats).
BACKOFF_S: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 30.0)
#: A reachable API is probed again after this long without any request of the channel reaching it.
IDLE_CHECK_S = 60.0
#: How long one probe may take before the API counts as unreachable.
PROBE_TIMEOUT_S = 10.0


class Unreachable(Exception):
    """A request could not reach the API; ``str()`` says what happened (one line, no secret)."""


class NotTheAPI(Unreachable):
    """Something answered at the API's address, but not as the API does; ``str()`` says what answered and what
    to check (one line, no secret)."""


class Reach:
    """One channel's view of its API; see the module docstring."""

    def __init__(self, channel: str, api: str, probe: Callable[[], Awaitable[None]], *,
                 backoff: Sequence[float] = BACKOFF_S, idle_check_s: float = IDLE_CHECK_S,
                 probe_timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.channel = channel
        self.api = api  # e.g. "the WhatsApp Graph API at https://graph.facebook.com"
        self.probe = probe
        self.backoff = tuple(backoff)
        self.idle_check_s = idle_check_s
        self.probe_timeout_s = probe_timeout_s
        self.problem: str | None = None
        self.lost_at: float | None = None
        self.last_reached = time.monotonic()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def ok(self) -> bool:
        """True unless the API was found unreachable and has not answered since."""
        return self.problem is None

    def lost(self, detail: str, *, network: bool = True) -> None:
        """A request could not reach the API (``detail``: what happened; ``network`` False: something that is not
        the API answered there)."""
        why = "network failure" if network else "something else answers there"
        self.problem = f"cannot reach {self.api} ({why}: {detail})"
        if self.lost_at is None:
            self.lost_at = time.monotonic()
            log.error("%s: %s; not ready until it answers again (checking in the background)", self.channel,
                      self.problem)
            self._wake.set()

    def reached(self) -> None:
        """The API answered a request (with any status)."""
        self.last_reached = time.monotonic()
        if self.lost_at is not None:
            log.info("%s: %s answers again (after %.0f s); ready", self.channel, self.api,
                        self.last_reached - self.lost_at)
            self.lost_at = None
        self.problem = None

    async def check(self) -> bool:
        """Probe the API once; True when it answered."""
        try:
            async with asyncio.timeout(self.probe_timeout_s):
                await self.probe()
        except NotTheAPI as exc:
            self.lost(str(exc), network=False)
            return False
        except Unreachable as exc:
            self.lost(str(exc))
            return False
        except TimeoutError:
            self.lost(f"no answer within {self.probe_timeout_s:.0f} s")
            return False
        self.reached()
        return True

    def start(self) -> None:
        """Start the background watcher (see the module docstring)."""
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name=f"{self.channel} reachability")

    async def stop(self) -> None:
        """Stop the watcher."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _watch(self) -> None:
        failures = 0
        while True:
            if self.problem is None:
                failures = 0
                self._wake.clear()
                idle = time.monotonic() - self.last_reached
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, self.idle_check_s - idle))
                if self.problem is None and time.monotonic() - self.last_reached < self.idle_check_s:
                    continue  # a request reached the API meanwhile: no need to ask
                if self.problem is None:
                    await self._probe()
                    continue
            await asyncio.sleep(self.backoff[min(failures, len(self.backoff) - 1)])
            failures += 1
            await self._probe()

    async def _probe(self) -> None:
        try:
            await self.check()
        except asyncio.CancelledError:
            raise
        except Exception:  # a broken probe must not stop the watcher; the log says what broke
            log.exception("%s: checking %s failed", self.channel, self.api)
