"""The locks that keep one session's turns in order: :class:`SessionLocks`.

A lock lives while someone holds or waits for it; idle ones are dropped (weak values), so a board
that has seen a million sessions holds locks only for the ones being answered now.
"""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["SessionLocks"]


class SessionLocks:
    """One :class:`asyncio.Lock` per session key, made on first use."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def lock_for(self, key: str) -> asyncio.Lock:
        """The lock that keeps the turns of session ``key`` in order."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        """How many locks are alive (held or waited for)."""
        return len(self._locks)
