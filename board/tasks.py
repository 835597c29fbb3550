"""Finishing background tasks: wait for them, cancel what outlives a timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["finish_tasks"]


async def finish_tasks(tasks: Iterable[asyncio.Task[Any]], timeout: float | None) -> None:
    """Wait up to ``timeout`` seconds (None: forever) for ``tasks``; cancel and reap the rest."""
    pending = [t for t in tasks if not t.done()]
    if not pending:
        return
    _, still = await asyncio.wait(pending, timeout=timeout)
    for task in still:
        task.cancel()
    if still:
        await asyncio.gather(*still, return_exceptions=True)
