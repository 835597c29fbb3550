"""Flood control for outbound Telegram calls: one rate budget per chat plus a global one.

Telegram allows about 30 messages a second overall, about 20 a minute into one group
(every topic of a forum counts against the same group) and about one a second into a
private chat. :class:`FloodControl` keeps a token bucket per chat id and one global
bucket; callers ``await acquire(chat_id)`` before each send. When Telegram still answers
429 ``retry_after``, :meth:`FloodControl.pause` blocks that chat (all its topics) until
the time is up; the sender then retries.

Low-priority calls (a meeting's status edits) use :meth:`FloodControl.try_acquire`
instead: it never waits and succeeds only when nobody is waiting for the chat's budget
and enough tokens stay for the messages that matter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RateSettings:
    """Budgets (config ``telegram.rate_limit``)."""

    group_per_minute: float = 20.0
    private_per_second: float = 1.0
    global_per_second: float = 30.0
    group_burst: int = 10
    private_burst: int = 3


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up; waiters are served in order."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.clock = clock
        self.tokens = float(self.burst)
        self.updated = clock()
        self.blocked_until = 0.0
        self.lock = asyncio.Lock()

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def wait_time(self) -> float:
        """Seconds until a token may be taken (0 when one is there now)."""
        now = self.clock()
        self._refill(now)
        blocked = max(0.0, self.blocked_until - now)
        missing = 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate
        return max(blocked, missing)

    @property
    def busy(self) -> bool:
        """Someone is waiting for (or taking) a token right now."""
        return self.lock.locked()

    def spare_in(self, reserve: int = 0) -> float:
        """Seconds until a token can be taken with ``reserve`` more left over (0: now),
        not counting waiters; ``reserve`` is capped at ``burst - 1``."""
        now = self.clock()
        self._refill(now)
        need = 1 + min(max(0, reserve), self.burst - 1)
        missing = 0.0 if self.tokens >= need else (need - self.tokens) / self.rate
        return max(self.blocked_until - now, missing, 0.0)

    def try_take(self, reserve: int = 0) -> bool:
        """Take a token now if nobody waits and ``reserve`` more stay; never sleeps."""
        if self.busy or self.spare_in(reserve) > 0:
            return False
        self.tokens -= 1
        return True

    async def take(self, sleep: Callable[[float], Awaitable[None]]) -> float:
        """Take one token, sleeping as needed; returns the seconds waited."""
        waited = 0.0
        async with self.lock:
            while True:
                delay = self.wait_time()
                if delay <= 0:
                    self.tokens -= 1
                    return waited
                waited += delay
                await sleep(delay)


class FloodControl:
    """Per-chat and global send budgets; see the module docstring."""

    def __init__(
        self,
        settings: RateSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings or RateSettings()
        self.clock = clock
        self.sleep = sleep
        s = self.settings
        self._global = TokenBucket(s.global_per_second, max(1, int(s.global_per_second)), clock)
        self._chats: dict[int | str, TokenBucket] = {}
        self.pauses = 0

    def bucket(self, chat_id: int | str) -> TokenBucket:
        """The budget of one chat (a forum and all its topics share it)."""
        bucket = self._chats.get(chat_id)
        if bucket is None:
            s = self.settings
            if _is_group(chat_id):
                bucket = TokenBucket(s.group_per_minute / 60.0, s.group_burst, self.clock)
            else:
                bucket = TokenBucket(s.private_per_second, s.private_burst, self.clock)
            self._chats[chat_id] = bucket
        return bucket

    async def acquire(self, chat_id: int | str) -> float:
        """Wait for this chat's budget, then the global one; returns the seconds waited."""
        waited = await self.bucket(chat_id).take(self.sleep)
        return waited + await self._global.take(self.sleep)

    def try_acquire(self, chat_id: int | str, reserve: int = 0) -> bool:
        """For calls that may be skipped: take this chat's and the global budget now, only if
        nobody is waiting for the chat, it is not paused and ``reserve`` tokens stay for others."""
        bucket = self.bucket(chat_id)
        if bucket.busy or bucket.spare_in(reserve) > 0 or self._global.busy or self._global.spare_in() > 0:
            return False
        return bucket.try_take(reserve) and self._global.try_take()

    def spare_in(self, chat_id: int | str, reserve: int = 0) -> float:
        """Seconds until :meth:`try_acquire` may succeed (at least one token's time while others wait)."""
        bucket = self.bucket(chat_id)
        wait = max(bucket.spare_in(reserve), self._global.spare_in())
        if bucket.busy:
            wait = max(wait, 1.0 / bucket.rate)
        return wait

    def pause(self, chat_id: int | str, seconds: float) -> None:
        """Telegram said 429 retry_after: nothing goes to this chat for ``seconds``."""
        bucket = self.bucket(chat_id)
        bucket.blocked_until = max(bucket.blocked_until, self.clock() + max(0.0, seconds))
        self.pauses += 1

    def paused_for(self, chat_id: int | str) -> float:
        """Seconds this chat is still paused by a 429."""
        return max(0.0, self.bucket(chat_id).blocked_until - self.clock())


def _is_group(chat_id: int | str) -> bool:
    if isinstance(chat_id, int):
        return chat_id < 0
    return str(chat_id).startswith("-") or str(chat_id).startswith("@")
