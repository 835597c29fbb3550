"""Slack users' names (``users.info``, cached): what the board shows a sender as, quoted as data in the prompt.

A name is looked up in the background when a user is first seen (never before the event is acknowledged: the
ack waits for nothing but the durable claim; and not among a burst's acknowledgements either: the lookup waits,
as the answers do, until the burst is acknowledged, ``after``) and kept for :data:`NAME_TTL_S`; a message answered
before the lookup came back goes without a name. A Slack user is a person of the board as ``slack:<user id>``
(:mod:`board.people`; ``/link`` joins them with their other channels).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

__all__ = ["NAME_TTL_S", "SlackNames"]

log = logging.getLogger("sabha.slack")

NAME_TTL_S = 3600.0


class SlackNames:
    """Display names by user id; see the module docstring."""

    def __init__(self, lookup: Callable[[str], Awaitable[str | None]], *, ttl_s: float = NAME_TTL_S,
                 clock: Callable[[], float] = time.monotonic,
                 after: Callable[[], Awaitable[None]] | None = None) -> None:
        self.lookup = lookup
        self.after = after  # awaited before each lookup (the intake's after_receipts)
        self.ttl_s = ttl_s
        self.clock = clock
        self._names: dict[str, tuple[str | None, float]] = {}
        self._asking: dict[str, asyncio.Task[None]] = {}

    def name(self, user: str) -> str | None:
        """The cached name of ``user`` (None: not known yet); an old one is asked again in the background."""
        known = self._names.get(user)
        if known is None or self.clock() - known[1] > self.ttl_s:
            self.learn(user)
        return known[0] if known is not None else None

    def learn(self, user: str) -> None:
        """Ask Slack for ``user``'s name in the background (once at a time)."""
        if user in self._asking or not user:
            return
        task = asyncio.create_task(self._ask(user), name=f"slack users.info {user}")
        self._asking[user] = task
        task.add_done_callback(lambda _: self._asking.pop(user, None))

    async def _ask(self, user: str) -> None:
        try:
            if self.after is not None:
                await self.after()
            name = await self.lookup(user)
        except Exception:
            log.debug("slack: looking up %s's name failed", user, exc_info=True)
            return
        self._names[user] = (name, self.clock())

    async def settle(self) -> None:
        """End the lookups in flight (a stop: a name is not worth waiting for)."""
        tasks = list(self._asking.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
