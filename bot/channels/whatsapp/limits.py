"""What a Graph API error code means for a send, and the backoff it calls for.

Codes (Meta's Cloud API error codes): 130429 (the number's throughput) pauses the whole
channel; 131056 (the pair rate limit, about one message every 6 s to one user) pauses that
user only; 4, 80007 (app / account rate limits), 131000, 1, 2 (transient) and 131016
(service unavailable) are retried after a pause; 131047 (the 24-hour window is closed),
131026 (undeliverable), 131048 (spam rate limit), 131062, 368 (policy block), 100 (bad
parameter), 190 (expired token) and every other 4xx are never retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Backoff", "ErrorClass", "PairLimit", "classify", "retry_delay"]


class ErrorClass(StrEnum):
    """How a refused send is handled."""

    CHANNEL_LIMIT = "channel_limit"  # back off for the whole channel, then retry
    PAIR_LIMIT = "pair_limit"  # back off for this user only, then retry
    TRANSIENT = "transient"  # retry after a pause
    NETWORK = "network"  # the Graph API could not be reached (no answer at all): retry after a pause
    WINDOW_CLOSED = "window_closed"  # 131047: record as undeliverable, tell the owner; never retry
    PERMANENT = "permanent"  # never retry


_CHANNEL = {130429}
_PAIR = {131056}
_TRANSIENT = {4, 80007, 131000, 1, 2, 131016}
WINDOW_CLOSED = 131047


def classify(code: int | None, http_status: int) -> ErrorClass:
    """The class of an error; an unknown code retries on 5xx / 429 and never on other 4xx."""
    if code in _CHANNEL:
        return ErrorClass.CHANNEL_LIMIT
    if code in _PAIR:
        return ErrorClass.PAIR_LIMIT
    if code in _TRANSIENT:
        return ErrorClass.TRANSIENT
    if code == WINDOW_CLOSED:
        return ErrorClass.WINDOW_CLOSED
    if code is None and (http_status >= 500 or http_status == 429):
        return ErrorClass.TRANSIENT
    return ErrorClass.PERMANENT


def retry_delay(attempt: int, base: float, cap: float = 60.0) -> float:
    """Exponential backoff with jitter for the ``attempt``-th retry (1-based)."""
    delay: float = min(cap, base * (2 ** (attempt - 1)))
    return delay * (0.8 + 0.4 * random.random())  # jitter, not security


@dataclass
class Backoff:
    """A pause that ends at a moment (``until``): ``wait()`` tells how long is left."""

    clock: Callable[[], float] = time.monotonic
    until: float = 0.0

    def pause(self, seconds: float) -> None:
        """Nothing may go out for ``seconds`` (extends, never shortens, a running pause)."""
        self.until = max(self.until, self.clock() + seconds)

    def left(self) -> float:
        """Seconds until sends may go again (0: now)."""
        return max(0.0, self.until - self.clock())


@dataclass
class PairLimit:
    """One :class:`Backoff` per user (131056 pauses only that user)."""

    clock: Callable[[], float] = time.monotonic
    users: dict[str, Backoff] = field(default_factory=dict)

    def of(self, user: str) -> Backoff:
        """The user's pause."""
        backoff = self.users.get(user)
        if backoff is None:
            backoff = self.users[user] = Backoff(self.clock)
        return backoff

    def left(self, user: str) -> float:
        """Seconds until ``user`` may be sent to again."""
        backoff = self.users.get(user)
        if backoff is None:
            return 0.0
        left = backoff.left()
        if left == 0.0:
            del self.users[user]
        return left
