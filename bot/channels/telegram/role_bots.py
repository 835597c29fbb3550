"""Advisors as themselves: a role with a Telegram bot of its own (``board.agents.<role>.telegram_token``).

:class:`RoleBots` holds, for each role given a token, a PTB ``Bot`` made like the main one (the same
``api_base_url``, the same request setup: the "sending" mark where the bytes leave,
:mod:`bot.channels.telegram.departure`) and an :class:`~bot.channels.telegram.outbound.Outbound` on it that shares
the main bot's flood control (one budget per chat, whoever sends). That role's meeting statements and its answers
in the board's forum are sent by its bot, so they show its own name and picture; everything else (status lines,
decisions, minutes, DMs, streamed drafts) stays with the main bot. A role bot never polls: the main bot still
receives every message.

A role bot Telegram refuses (401 at ``getMe`` or at a send, 403 Forbidden, "not a member" / "chat not found": it is
not in the forum) falls back to the main bot for the rest of the run; that is said once, in a log line and in one
line to the owner (:attr:`RoleBots.tell`), never per message. The token is a secret: it is never logged (the
bot is named by its role and, once known, its @username).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from telegram import Bot
from telegram.error import BadRequest, Forbidden, InvalidToken, TelegramError
from telegram.request import HTTPXRequest

from bot.channels.telegram.departure import departure_hooks
from bot.channels.telegram.outbound import Outbound
from bot.channels.telegram.ratelimit import FloodControl
from bot.intake.delivery import SendFailed

__all__ = ["RoleBot", "RoleBots", "refusal"]

log = logging.getLogger("sabha.telegram.rolebots")

#: One line to the owner when a role's bot is refused: (the line) -> sent (best effort)
Tell = Callable[[str], Awaitable[None]]


def refusal(exc: BaseException) -> str | None:
    """Why Telegram refuses a role bot, when ``exc`` (or its cause) says so; None for any other failure."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, InvalidToken):
            return "its token is not valid (401 Unauthorized)"
        if isinstance(seen, Forbidden):
            return f"Telegram refused it ({seen.message})"
        if isinstance(seen, BadRequest) and ("chat not found" in seen.message.lower()
                                             or "not a member" in seen.message.lower()):
            return f"it is not in the chat ({seen.message})"
        if isinstance(seen, TelegramError) and "unauthorized" in str(seen).lower():
            return "its token is not valid (401 Unauthorized)"
        seen = seen.__cause__
    return None


@dataclass
class RoleBot:
    """One role's bot."""

    role: str
    outbound: Outbound
    username: str | None = None
    refused: str | None = None  # why Telegram refused it (then the main bot sends)


@dataclass
class RoleBots:
    """The role bots of one channel; see the module docstring."""

    main: Outbound
    bots: dict[str, RoleBot] = field(default_factory=dict)
    tell: Tell | None = None

    @classmethod
    def of(cls, tokens: Mapping[str, str], main: Outbound, *, base_url: str, flood: FloodControl,
           max_retries: int = 3) -> RoleBots:
        """A bot per ``role -> token`` (made now, contacted at :meth:`check`)."""
        bots = {}
        for role, token in tokens.items():
            request = HTTPXRequest(connection_pool_size=8, pool_timeout=30.0, httpx_kwargs=departure_hooks())
            bot = Bot(token, base_url=base_url, request=request, get_updates_request=HTTPXRequest())
            bots[role] = RoleBot(role, Outbound(bot, flood, max_retries=max_retries))
        return cls(main, bots)

    def outbound_for(self, role: str | None) -> Outbound:
        """The outbound that sends as ``role``: its own bot, unless it has none or was refused."""
        found = self.bots.get(role or "")
        return found.outbound if found is not None and found.refused is None else self.main

    def sends_as(self, role: str | None) -> bool:
        """``role`` has a bot of its own that is not refused."""
        found = self.bots.get(role or "")
        return found is not None and found.refused is None

    async def check(self) -> None:
        """``getMe`` for each role bot (at start): a refused one falls back to the main bot, said once."""
        for found in self.bots.values():
            try:
                me = await found.outbound.bot.get_me()
            except TelegramError as exc:
                why = refusal(exc)
                if why is not None:
                    await self.refuse(found.role, why)
                else:
                    log.warning("telegram: could not reach the bot of %s at start (%s); it is tried at its first "
                                "message", found.role, exc)
                continue
            found.username = me.username
            log.info("telegram: %s speaks as its own bot @%s", found.role, me.username)

    async def refuse(self, role: str, why: str) -> None:
        """``role``'s bot is refused: the main bot sends for it from now on; said once (log, one line to the owner)."""
        found = self.bots.get(role)
        if found is None or found.refused is not None:
            return
        found.refused = why
        name = f"@{found.username}" if found.username else "its bot"
        log.error("telegram: the bot of %s (%s) cannot be used: %s; the main bot sends its messages from now on. "
                  "Check board.agents.%s.telegram_token and add that bot to the forum", role, name, why, role)
        if self.tell is not None:
            try:
                await self.tell(f"⚠️ The Telegram bot of {role} ({name}) cannot be used: {why}. Its messages come "
                                f"from the main bot until that is fixed (board.agents.{role}.telegram_token; the bot "
                                "must be a member of the forum).")
            except Exception as exc:  # noqa: BLE001 - the log line said it already
                log.warning("telegram: could not tell the owner that %s's bot was refused (%s)", role, exc)

    async def on_failure(self, role: str | None, exc: SendFailed) -> bool:
        """A send as ``role`` failed with ``exc``: True when it was its bot being refused (then it is marked and the
        caller sends again with the main bot: Telegram posted nothing)."""
        if not self.sends_as(role):
            return False
        why = refusal(exc)
        if why is None:
            return False
        await self.refuse(role or "", why)
        return True

    async def close(self) -> None:
        """Close the role bots' HTTP clients."""
        for found in self.bots.values():
            try:
                await found.outbound.bot.shutdown()
            except Exception as exc:  # noqa: BLE001 - closing at shutdown
                log.debug("telegram: closing the bot of %s: %s", found.role, exc)
