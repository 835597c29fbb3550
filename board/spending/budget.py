"""Daily spending limits on model calls: ``budget.daily_usd`` and ``budget.per_sender_daily_usd``.

:class:`Budget` is asked before a message that would call a model (a chat turn, a meeting,
``/compact``). When today's spend (UTC day, from the ledger's ``llm_calls``) has reached
``daily_usd``, or the sender's own spend has reached ``per_sender_daily_usd``, the message
gets a polite fixed reply and no model is called. The owner is never held to the
per-sender limit (they pay for the board), only to the daily one.

Each stop is logged once per day and budget (and sender). The owner is told once per day
and budget, in their own chat: the board's next reply to the owner carries a short note
(or, when the owner's own message is the one stopped, the fixed reply itself says what
was reached and how to raise it). Nothing is pushed unprompted: a channel-agnostic board
cannot know where the owner reads, and the owner's next message is where they look.

A turn already running is not cut short, so a day's spend can end slightly above a limit;
except for a stranger's (public mode): each model call made for them is checked against
these limits too, before it is made (:mod:`board.spending.allowance`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Literal

from board.envelope import Envelope
from board.spending.ledger import Ledger, start_of_day

__all__ = ["DAILY_REACHED", "SENDER_REACHED", "Budget", "BudgetSettings", "BudgetStop", "sender_id"]

log = logging.getLogger("sabha.budget")

DAILY_REACHED = "The board has used up today's budget, so I can't answer right now. Please try again tomorrow."
SENDER_REACHED = "You have reached today's limit for questions to the board. Please try again tomorrow."
RELOAD_HINT = "raise it in the config and reload Sabha (`systemctl reload sabha` or `kill -HUP <pid>`)"

BudgetKind = Literal["daily", "sender"]


@dataclass(frozen=True)
class BudgetSettings:
    """``budget:`` as plain values; None means no limit."""

    daily_usd: float | None = None
    per_sender_daily_usd: float | None = None

    @property
    def enabled(self) -> bool:
        """Some limit is set."""
        return self.daily_usd is not None or self.per_sender_daily_usd is not None


@dataclass(frozen=True)
class BudgetStop:
    """A message the budget stops: which limit, today's spend against it, and what the sender is told."""

    kind: BudgetKind
    spent: float
    limit: float
    text: str


def sender_id(envelope: Envelope) -> str:
    """Who a message is from, as the ledger, the budgets and memory facts key it: the linked person
    (``person:<n>``, :mod:`board.people`) when the board has found one, else ``<channel>:<sender id>``."""
    if envelope.person is not None:
        return envelope.person.key
    return f"{envelope.channel}:{envelope.sender}"


@dataclass
class _Day:
    """What happened today: what was logged, what the owner still has to hear."""

    day: date
    logged: set[tuple[BudgetKind, str]] = field(default_factory=set)
    reached: dict[BudgetKind, str] = field(default_factory=dict)  # kind -> when (HH:MM UTC)
    senders: list[str] = field(default_factory=list)  # who reached the per-sender limit
    told: set[BudgetKind] = field(default_factory=set)


class Budget:
    """See the module docstring. ``settings`` may be replaced while running (a config reload)."""

    def __init__(self, ledger: Ledger, settings: BudgetSettings | None = None, *,
                 clock: Callable[[], datetime] | None = None,
                 keys_of: Callable[[str], Awaitable[tuple[str, ...]]] | None = None) -> None:
        self.ledger = ledger
        self.settings = settings or BudgetSettings()
        self.clock = clock or (lambda: datetime.now(UTC))
        self.stopped = 0
        self._day = _Day(self.clock().date())
        #: every key one sender's spend is recorded under (a linked person: its key and each identity's
        #: own, :meth:`board.people.People.keys_of`); None: the sender's key alone
        self.keys_of: Callable[[str], Awaitable[tuple[str, ...]]] | None = keys_of

    def _today(self) -> _Day:
        day = self.clock().astimezone(UTC).date()
        if day != self._day.day:
            self._day = _Day(day)
        return self._day

    async def check(self, sender: str, *, is_owner: bool) -> BudgetStop | None:
        """None when ``sender`` may have a model answer now; else why not (logged once a day)."""
        settings = self.settings
        if not settings.enabled:
            return None
        since = start_of_day(self.clock())
        stop: BudgetStop | None = None
        if settings.daily_usd is not None:
            spent = await self.ledger.spent(since=since)
            if spent >= settings.daily_usd:
                text = self._owner_daily_text(spent, settings.daily_usd) if is_owner else DAILY_REACHED
                stop = BudgetStop("daily", spent, settings.daily_usd, text)
        if stop is None and settings.per_sender_daily_usd is not None and not is_owner:
            keys = await self.keys_of(sender) if self.keys_of is not None else (sender,)
            spent = sum([await self.ledger.spent(since=since, sender=key) for key in keys])
            if spent >= settings.per_sender_daily_usd:
                stop = BudgetStop("sender", spent, settings.per_sender_daily_usd, SENDER_REACHED)
        if stop is not None:
            self._record(stop, sender, told=is_owner)
        return stop

    def _owner_daily_text(self, spent: float, limit: float) -> str:
        return (f"Today's budget is spent: ${spent:.4f} of budget.daily_usd ${limit:.2f} (the day runs to midnight "
                f"UTC), so no model is called until then. To go on today, {RELOAD_HINT}.")

    def _record(self, stop: BudgetStop, sender: str, *, told: bool) -> None:
        self.stopped += 1
        today = self._today()
        now = self.clock().astimezone(UTC).strftime("%H:%M")
        today.reached.setdefault(stop.kind, now)
        if stop.kind == "sender" and sender not in today.senders:
            today.senders.append(sender)
        if told and stop.kind == "daily":
            today.told.add("daily")
        who = sender if stop.kind == "sender" else "*"
        if (stop.kind, who) in today.logged:
            return
        today.logged.add((stop.kind, who))
        if stop.kind == "daily":
            log.warning("budget: today's spend $%.4f reached budget.daily_usd $%.2f; every message gets a fixed "
                        "reply and no model call until midnight UTC (logged once a day)", stop.spent, stop.limit)
        else:
            log.warning("budget: %s spent $%.4f today, reaching budget.per_sender_daily_usd $%.2f; their messages "
                        "get a fixed reply and no model call until midnight UTC (logged once a day)",
                        sender, stop.spent, stop.limit)

    def owner_note(self) -> str | None:
        """What the owner has not been told yet today (None: nothing); the note counts as told."""
        today = self._today()
        lines: list[str] = []
        settings = self.settings
        if "daily" in today.reached and "daily" not in today.told:
            limit = f" (${settings.daily_usd:.2f})" if settings.daily_usd is not None else ""
            lines.append(f"Sabha: today's budget.daily_usd{limit} was reached at {today.reached['daily']} UTC; "
                         f"since then every message gets a fixed reply and no model is called. To go on today, "
                         f"{RELOAD_HINT}.")
            today.told.add("daily")
        if "sender" in today.reached and "sender" not in today.told:
            limit = f" (${settings.per_sender_daily_usd:.2f})" if settings.per_sender_daily_usd is not None else ""
            shown = ", ".join(today.senders[:5]) + (" ..." if len(today.senders) > 5 else "")
            lines.append(f"Sabha: {len(today.senders)} sender(s) reached budget.per_sender_daily_usd{limit} today "
                         f"({shown}); they get a fixed reply until midnight UTC (`sabha cost` shows the spend).")
            today.told.add("sender")
        return "\n".join(lines) if lines else None
