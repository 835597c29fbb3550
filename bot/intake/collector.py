"""The cyclic garbage collector waits while a burst of webhooks is being acknowledged.

Measured on a 1,000-event Slack burst (``benchmarks/webhook.py``, notes/daemon-latency.md): the main thread
ran 30-100 young collections during each burst (0.2-1 ms each, one of 16 ms) and, in some rounds, a full one
(8-42 ms, the heap the turns of the round before left). Each lands inside somebody's acknowledgement, and a
full one stalls every request in flight at once: the tail of the acknowledgement's latency.

:class:`CollectorPause` switches the collector off when a burst of receipts begins (the first
:meth:`receiving` after a quiet spell) and back on once receipts have been quiet for ``quiet`` seconds, or
``most`` seconds after the burst began, whichever is first: the same bounds as the lanes' hold on starting
answers (:class:`bot.intake.lanes.Lanes`), so the collections a burst put off run when the answers start,
not while anybody waits for a 200. Reference counting frees nearly everything meanwhile; only reference
cycles wait, for at most ``most`` seconds. Receipts that keep coming past ``most`` are received with the
collector on until the next quiet spell (a steady stream never switches it off for long).

A collector someone else switched off (``gc.disable()`` elsewhere) is left off: this only ever turns on
what it turned off.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator

__all__ = ["CollectorPause"]


class CollectorPause:
    """See the module docstring. Used from the event loop's thread only."""

    def __init__(self, *, quiet: float = 0.1, most: float = 1.0) -> None:
        self.quiet = quiet
        self.most = most
        self.paused = 0  # bursts during which the collector waited (for /healthz-style counts and tests)
        self._receiving = 0
        self._since: float | None = None  # the current burst's first receipt (None: no burst)
        self._off = False  # the collector is off because of us
        self._last = 0.0  # when the last receipt ended
        self._timer: asyncio.TimerHandle | None = None

    @contextlib.contextmanager
    def receiving(self) -> Iterator[None]:
        """Wrap one receipt (a webhook request) in this."""
        loop = asyncio.get_running_loop()
        if self._since is None:
            self._since = loop.time()
            if gc.isenabled():
                gc.disable()
                self._off = True
                self.paused += 1
                self._schedule(loop, self._since + self.most)
        self._receiving += 1
        try:
            yield
        finally:
            self._receiving -= 1
            self._last = loop.time()
            if self._receiving == 0:
                self._schedule(loop, self._last + self.quiet)

    def _schedule(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            if self._off and self._since is not None and when > self._since + self.most:
                when = self._since + self.most  # the cap stands
            self._timer.cancel()
        self._timer = loop.call_at(when, self._check)

    def _check(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        assert self._since is not None
        if self._off and now >= self._since + self.most:
            self._resume()  # the burst went on too long: collect as usual, receipts or not
        if self._receiving == 0 and now >= self._last + self.quiet:
            self._resume()
            self._since = None  # quiet: the next receipt begins a new burst
        else:
            self._timer = loop.call_at(self._last + self.quiet if self._receiving == 0 else now + self.quiet,
                                       self._check)

    def _resume(self) -> None:
        if self._off:
            self._off = False
            gc.enable()

    def close(self) -> None:
        """Switch the collector back on (if this switched it off) and forget the burst (the daemon stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._resume()
        self._since = None
