"""Who may talk to the board on Discord (:class:`DiscordAccessPolicy`).

``allowlist`` (the default): only ``discord.allowed_user_ids``; anyone else costs no model call, is logged once
and told nothing. ``public``: anyone in the server (and in DMs), each stranger held to
``public_rate_per_minute`` and all strangers together to ``public_daily_usd`` a day, the same limits as WhatsApp's
public mode (:class:`bot.channels.public_gate.PublicGate`; the ledger marks their calls ``public:discord``).
Listed users are never limited. The owner is the first of ``allowed_user_ids``; only the owner's messages carry
``is_owner`` (owner-only commands, the owner's sessions).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from board.spending.allowance import public_scope
from board.storage import Database
from bot.channels.discord.config import DiscordAccess, DiscordSection
from bot.channels.public_gate import PublicGate
from bot.intake.courier import Admission

__all__ = ["SCOPE", "DiscordAccessPolicy"]

log = logging.getLogger("sabha.discord")

SCOPE = public_scope("discord")  # how the ledger marks the calls strangers cause here


class DiscordAccessPolicy:
    """See the module docstring."""

    def __init__(self, settings: DiscordSection, db: Database, *,
                 closed: Callable[[float], bool] = lambda usd: False) -> None:
        self.gate = PublicGate(db, SCOPE, rate=settings.public_rate_per_minute,
                               daily_usd=settings.public_daily_usd, closed=closed)
        self.apply(settings)
        self._logged: set[str] = set()

    def apply(self, settings: DiscordSection) -> None:
        """Take the access keys of ``settings`` (at start and on a config reload)."""
        self.mode = settings.access
        self.allowed = set(settings.allowed_user_ids)
        self.owner = settings.owner
        self.gate.rate = settings.public_rate_per_minute
        self.gate.daily_usd = settings.public_daily_usd
        self._logged = set()

    def is_owner(self, user: str) -> bool:
        """``user`` is the first of ``allowed_user_ids``."""
        return self.owner is not None and user == self.owner

    def is_public(self, user: str) -> bool:
        """``user`` is a stranger, admitted only because the channel is public."""
        return self.mode is DiscordAccess.PUBLIC and user not in self.allowed

    async def refresh(self) -> None:
        """Re-read what strangers cost today (public mode; at most once a second)."""
        if self.mode is DiscordAccess.PUBLIC:
            await self.gate.refresh()

    def admit(self, user: str) -> Admission:
        """The verdict on one message from ``user``."""
        if user in self.allowed:
            return Admission(True)
        if self.mode is DiscordAccess.ALLOWLIST:
            if user not in self._logged:
                self._logged.add(user)
                log.warning("discord: a message from user %s, who is not in discord.allowed_user_ids, was ignored "
                            "(add their id there to let them talk to the board); further ones are not logged", user)
            return Admission(False)
        return self.gate.admit(user)
