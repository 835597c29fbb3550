"""``memory.consolidation`` as plain values: whether and for whom a person's facts are tidied, when, and what it may
spend. Read by :class:`board.memory.facts.MemorySettings` (its ``consolidation`` field)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ConsolidationSettings", "ConsolidationWho"]


class ConsolidationWho(StrEnum):
    """Whose facts are consolidated. Strangers (public mode) never are: what they say is not extracted either
    (their cost stays their turns'), and an advisor's remember-tool facts about them are theirs to keep."""

    OWNER = "owner"      # only the owner's
    MEMBERS = "members"  # the owner's and every allowed person's (the default)


@dataclass(frozen=True)
class ConsolidationSettings:
    """See ``bot.config.knowledge.ConsolidationSection`` for each field's meaning."""

    enabled: bool = True
    who: ConsolidationWho = ConsolidationWho.MEMBERS
    hour: int = 3
    daily_usd: float = 0.25
    min_facts: int = 3
    max_facts: int = 80
    stale_days: int = 180
    profile_chars: int = 400
