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
from collections.abc import Callable

from board.spending.allowance import public_scope
from board.storage import Database
from bot.channels.public_limits import CAP_REACHED, RATE_LIMITED, PublicLimits
from bot.channels.whatsapp.config import AccessMode, WhatsAppSection
from bot.intake.courier import Admission

__all__ = ["CAP_REACHED", "RATE_LIMITED", "SCOPE", "AccessPolicy"]

log = logging.getLogger("sabha.whatsapp")

SCOPE = public_scope("whatsapp")  # how the ledger marks the calls strangers cause here


class AccessPolicy(PublicLimits):
    """See the module docstring (the rate and the cap: :class:`bot.channels.public_limits.PublicLimits`)."""

    def __init__(self, settings: WhatsAppSection, db: Database, *, clock: Callable[[], float] = time.monotonic,
                 ids: Callable[[str], set[str]] | None = None,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        super().__init__(db, SCOPE, rate=settings.public_rate_per_minute, daily_usd=settings.public_daily_usd,
                         clock=clock, closed=closed)
        self.mode = settings.access
        self.allowed = set(settings.allowed_numbers)
        self.owner = settings.allowed_numbers[0] if settings.allowed_numbers else None
        self.ids = ids or (lambda user: {user})  # every id of ``user`` (.identity.WhatsAppPeople.identifiers)
        self._logged: set[str] = set()

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
        """Re-read what strangers' model calls cost today (public mode; at most once a second)."""
        if self.mode is AccessMode.PUBLIC:
            await self.refresh_spend()

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
        return self.limit(user)
