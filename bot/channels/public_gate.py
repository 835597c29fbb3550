"""Public mode's two limits on strangers, shared by the channels that can be open to anyone (WhatsApp, Discord).

:class:`PublicGate` holds, for one channel, each stranger to ``rate`` messages a minute and all strangers together
to ``daily_usd`` of model calls a day (UTC): what the ledger recorded today under the channel's public scope
(:func:`board.spending.allowance.public_scope`), re-read at most once a second, or the board's own refusal of a call
under that cap (``closed``). Over either: one short polite refusal per sender and window
(:class:`bot.intake.courier.Admission` with a ``notice_key``), no model call. Who counts as a stranger, and who is
never limited, is the channel's access policy's to say: it asks the gate only about strangers.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

from board.spending.allowance import PUBLIC_CAP_REACHED
from board.storage import Database
from bot.intake.courier import Admission

__all__ = ["CAP_REACHED", "RATE_LIMITED", "SPEND_REFRESH_S", "PublicGate"]

RATE_LIMITED = "You're sending messages faster than I can answer. Please wait a minute and try again."
CAP_REACHED = PUBLIC_CAP_REACHED
SPEND_REFRESH_S = 1.0


class PublicGate:
    """See the module docstring."""

    def __init__(self, db: Database, scope: str, *, rate: float, daily_usd: float,
                 clock: Callable[[], float] = time.monotonic,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        self.db = db
        self.scope = scope  # how the ledger marks the calls strangers cause on this channel
        self.rate = rate
        self.daily_usd = daily_usd
        self.clock = clock
        self.closed = closed  # the board refused a stranger's call under the cap (``daily_usd``) today
        self.spent_today = 0.0
        self.refused_rate = 0
        self.refused_cap = 0
        self._spent_at = -1e9
        self._recent: dict[str, deque[float]] = {}

    async def refresh(self) -> None:
        """Re-read what strangers' model calls cost today (at most once a second)."""
        if self.clock() - self._spent_at < SPEND_REFRESH_S:
            return
        self._spent_at = self.clock()
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
        row = await self.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ? AND scope = ?",
            (midnight, self.scope))
        self.spent_today = float(row["usd"]) if row is not None else 0.0

    def admit(self, user: str) -> Admission:
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
