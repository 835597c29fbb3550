"""Who may talk to the board on Slack (:class:`SlackAccessPolicy`).

``allowlist`` (the default): only ``slack.allowed_user_ids``; anyone else costs no model call, is logged once
and told :data:`NOT_ALLOWED` once. ``public``: anyone in the workspace, each stranger held to
``public_rate_per_minute`` and all strangers together to ``public_daily_usd`` a day
(:class:`bot.channels.public_limits.PublicLimits`, shared with WhatsApp; the ledger's scope is
``public:slack``). The owner is ``allowed_user_ids[0]``: only their messages (and presses) carry the
owner's scope; owner-only commands are refused to anyone else by the board.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from board.spending.allowance import public_scope
from board.storage import Database
from bot.channels.public_limits import PublicLimits
from bot.channels.slack.config import SlackAccess, SlackSection
from bot.intake.courier import Admission

__all__ = ["NOT_ALLOWED", "SCOPE", "SlackAccessPolicy"]

log = logging.getLogger("sabha.slack")

SCOPE = public_scope("slack")
NOT_ALLOWED = ("Hi! This board only talks with the people its owner listed; ask them to add your Slack user id "
               "to slack.allowed_user_ids.")


class SlackAccessPolicy(PublicLimits):
    """See the module docstring."""

    def __init__(self, settings: SlackSection, db: Database, *, clock: Callable[[], float] = time.monotonic,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        super().__init__(db, SCOPE, rate=settings.public_rate_per_minute, daily_usd=settings.public_daily_usd,
                         clock=clock, closed=closed)
        self.mode = settings.access
        self.allowed = set(settings.allowed_user_ids)
        self.owner = settings.allowed_user_ids[0] if settings.allowed_user_ids else None
        self.strangers = 0
        self._logged: set[str] = set()

    def reconfigure(self, settings: SlackSection) -> None:
        """The access keys of a re-read config."""
        self.mode = settings.access
        self.allowed = set(settings.allowed_user_ids)
        self.owner = settings.allowed_user_ids[0] if settings.allowed_user_ids else None
        self.rate, self.daily_usd = settings.public_rate_per_minute, settings.public_daily_usd
        self._logged.clear()

    def listed(self, user: str) -> bool:
        """``user`` is in ``allowed_user_ids``."""
        return user in self.allowed

    def is_owner(self, user: str) -> bool:
        """``user`` is the owner (the first of ``allowed_user_ids``)."""
        return self.owner is not None and user == self.owner

    def is_public(self, user: str) -> bool:
        """``user`` is a stranger admitted only because the channel is public."""
        return self.mode is SlackAccess.PUBLIC and not self.listed(user)

    async def refresh(self) -> None:
        """Re-read what strangers cost today (public mode; at most once a second)."""
        if self.mode is SlackAccess.PUBLIC:
            await self.refresh_spend()

    def admit(self, user: str) -> Admission:
        """The verdict on one message from ``user`` (counted against the rate when admitted)."""
        if self.listed(user):
            return Admission(True)
        if self.mode is SlackAccess.ALLOWLIST:
            self.strangers += 1
            if user not in self._logged:
                self._logged.add(user)
                log.warning("slack: a message from %s, who is not in slack.allowed_user_ids, was not answered (add "
                            "them there to let them talk to the board); further ones are not logged", user)
            return Admission(False, NOT_ALLOWED, notice_key=f"stranger:{user}")
        return self.limit(user)
