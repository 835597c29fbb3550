"""What a channel open to anyone (public mode: WhatsApp, Slack) holds strangers to: a per-sender rate and a
daily cost cap (:class:`PublicLimits`).

Each stranger may send at most ``rate`` messages a minute; what strangers' model calls cost today (UTC, from
the ledger: every call a stranger caused, meetings included, is recorded under the channel's scope
``public:<channel>``, :func:`board.spending.allowance.public_scope`) stays under ``daily_usd``. Over either:
one short polite refusal per sender and window (the intake says an :class:`~bot.intake.courier.Admission`'s
notice once per ``notice_key``), no model call. The board also holds each of those calls to the cap before it
is made (:mod:`board.spending.allowance`); once it refused one (``closed``), the cap counts as reached here
too. Who is a stranger is the channel's to say (its allowlist); listed people are never limited.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

from board.spending.allowance import PUBLIC_CAP_REACHED
from board.storage import Database
from bot.intake.courier import Admission

__all__ = ["CAP_REACHED", "RATE_LIMITED", "SPEND_REFRESH_S", "PublicLimits"]

RATE_LIMITED = "You're sending messages faster than I can answer. Please wait a minute and try again."
CAP_REACHED = PUBLIC_CAP_REACHED
SPEND_REFRESH_S = 1.0


class PublicLimits:
    """The rate and the daily cap of one channel's strangers; see the module docstring."""

    def __init__(self, db: Database, scope: str, *, rate: float, daily_usd: float,
                 clock: Callable[[], float] = time.monotonic,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        self.db = db
        self.scope = scope
        self.rate = rate
        self.daily_usd = daily_usd
        self.clock = clock
        self.closed = closed  # the board refused a stranger's call under the cap (``daily_usd``) today
        self.spent_today = 0.0
        self._spent_at = -1e9
        self._recent: dict[str, deque[float]] = {}
        self.refused_rate = 0
        self.refused_cap = 0

    async def refresh_spend(self) -> None:
        """Re-read what strangers' model calls cost today (at most once a second)."""
        if self.clock() - self._spent_at < SPEND_REFRESH_S:
            return
        self._spent_at = self.clock()
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
        row = await self.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ? AND scope = ?",
            (midnight, self.scope))
        self.spent_today = float(row["usd"]) if row is not None else 0.0

    def limit(self, user: str) -> Admission:
        """The verdict on one message from the stranger ``user`` (counted against the rate when admitted)."""
        day = datetime.now(UTC).date().isoformat()
        if self.spent_today >= self.daily_usd or self.closed(self.daily_usd):
            self.refused_cap += 1
            return Admission(False, CAP_REACHED, notice_key=f"cap:{user}:{day}")
        now = self.clock()
        recent = self._recent.setdefault(user, deque())
        while recent and now - recent[0] >= 60.0:
            recent.popleft()
        if len(recent) >= self.rate:
            self.refused_rate += 1
            window = int(recent[0])  # one refusal until the oldest message leaves the minute
            return Admission(False, RATE_LIMITED, notice_key=f"rate:{user}:{window}")
        recent.append(now)
        return Admission(True)
