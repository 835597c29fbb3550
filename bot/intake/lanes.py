"""Lanes: work of one place runs in order, work of different places runs concurrently.

A lane is keyed by a place (for Telegram: chat id and forum topic). :meth:`Lanes.submit`
is synchronous, so jobs enter a lane exactly in the order the channel received them; one
worker task per busy lane runs them one after another and ends when the lane is empty.
A slow job (an LLM call) holds up only its own lane.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable

log = logging.getLogger("sabha.lanes")

Job = Callable[[], Awaitable[None]]


class Lanes:
    """Per-key ordered job queues; see the module docstring."""

    def __init__(self, name: str = "lanes") -> None:
        self.name = name
        self._queues: dict[Hashable, deque[Job]] = {}
        self._workers: dict[Hashable, asyncio.Task[None]] = {}
        self.closed = False
        self.done = 0

    def submit(self, key: Hashable, job: Job) -> bool:
        """Queue ``job`` at the end of lane ``key``; False (job dropped) once closed."""
        if self.closed:
            return False
        queue = self._queues.setdefault(key, deque())
        queue.append(job)
        if key not in self._workers:
            self._workers[key] = asyncio.create_task(self._run(key), name=f"{self.name} {key}")
        return True

    async def _run(self, key: Hashable) -> None:
        queue = self._queues[key]
        try:
            while queue:
                job = queue.popleft()
                try:
                    await job()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - one bad job must not stall its lane
                    log.exception("%s: a job in lane %s failed", self.name, key)
                self.done += 1
        finally:
            # no await between the emptiness check above and this: submit() cannot interleave
            self._workers.pop(key, None)
            if not queue:
                self._queues.pop(key, None)

    @property
    def busy(self) -> int:
        """Lanes with work running or queued."""
        return len(self._workers)

    @property
    def pending(self) -> int:
        """Jobs queued (not yet started) over all lanes."""
        return sum(len(q) for q in self._queues.values())

    async def drain(self, timeout: float | None = None) -> bool:
        """Stop taking work and wait for queued jobs; cancel what is left after ``timeout``.
        True when everything finished."""
        self.closed = True
        workers = list(self._workers.values())
        if not workers:
            return True
        done, pending = await asyncio.wait(workers, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            log.warning("%s: cancelled %d lane(s) still busy at shutdown", self.name, len(pending))
            await asyncio.gather(*pending, return_exceptions=True)
        return not pending
