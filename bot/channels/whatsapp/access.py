"""Who may talk to the board on WhatsApp (:class:`AccessPolicy`).

``allowlist`` (the default): only ``allowed_numbers`` (phone numbers or business-scoped
user ids; a person is listed when any of their ids is, see :mod:`.identity`); anyone else
costs no model call, is logged once and told nothing.
``public``: anyone, but each sender at most ``public_rate_per_minute`` messages a minute,
and what strangers' model calls cost today (UTC, from the ledger: every call a stranger
caused, meetings included, is recorded under the scope ``public:whatsapp``) under
``public_daily_usd``; over either, one short polite refusal per sender and window, no model
call. The board also holds each of those calls to the cap before it is made
(:mod:`board.spending.allowance`); once it refused one, the cap counts as reached here too. Listed
numbers are never limited.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

from board.spending.allowance import PUBLIC_CAP_REACHED, public_scope
from board.storage import Database
from bot.channels.whatsapp.config import AccessMode, WhatsAppSection
from bot.intake.courier import Admission

__all__ = ["CAP_REACHED", "RATE_LIMITED", "SCOPE", "AccessPolicy"]

log = logging.getLogger("sabha.whatsapp")

RATE_LIMITED = "You're sending messages faster than I can answer. Please wait a minute and try again."
CAP_REACHED = PUBLIC_CAP_REACHED
SCOPE = public_scope("whatsapp")  # how the ledger marks the calls strangers cause here
SPEND_REFRESH_S = 1.0


class AccessPolicy:
    """See the module docstring."""

    def __init__(self, settings: WhatsAppSection, db: Database, *, clock: Callable[[], float] = time.monotonic,
                 ids: Callable[[str], set[str]] | None = None,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        self.mode = settings.access
        self.allowed = set(settings.allowed_numbers)
        self.owner = settings.allowed_numbers[0] if settings.allowed_numbers else None
        self.rate = settings.public_rate_per_minute
        self.daily_usd = settings.public_daily_usd
        self.db = db
        self.clock = clock
        self.ids = ids or (lambda user: {user})  # every id of ``user`` (.identity.WhatsAppPeople.identifiers)
        self.closed = closed  # the board refused a stranger's call under the cap (``daily_usd``) today
        self.spent_today = 0.0
        self._spent_at = -1e9
        self._recent: dict[str, deque[float]] = {}
        self._logged: set[str] = set()
        self.refused_rate = 0
        self.refused_cap = 0

    def listed(self, user: str) -> bool:
        """An id of the person ``user`` (number, business-scoped id, a former one) is in ``allowed_numbers``."""
        return not self.allowed.isdisjoint(self.ids(user))

    def is_public(self, user: str) -> bool:
        """``user`` is a stranger, admitted only because the channel is public."""
        return self.mode is AccessMode.PUBLIC and not self.listed(user)

    def is_owner(self, user: str) -> bool:
        """The person ``user`` is the first of ``allowed_numbers`` (by any of their ids)."""
        return self.owner is not None and self.owner in self.ids(user)

    async def refresh(self) -> None:
        """Re-read what strangers' model calls cost today (at most once a second)."""
        if self.mode is not AccessMode.PUBLIC or self.clock() - self._spent_at < SPEND_REFRESH_S:
            return
        self._spent_at = self.clock()
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
        row = await self.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ? AND scope = ?", (midnight, SCOPE))
        self.spent_today = float(row["usd"]) if row is not None else 0.0

    def admit(self, user: str) -> Admission:
        """The verdict on one message from ``user`` (counts it against the rate when admitted)."""
        if self.listed(user):
            return Admission(True)
        if self.mode is AccessMode.ALLOWLIST:
            if user not in self._logged:
                self._logged.add(user)
                hint = (" If this is someone you listed by number, Sabha knows them as soon as Meta sends their "
                        "number and user id together; or list the user id." if "." in user else "")
                log.warning("whatsapp: a message from %s, who is not in whatsapp.allowed_numbers, was ignored "
                            "(add them there to let them talk to the board); further ones are not logged.%s",
                            user, hint)
            return Admission(False)
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
