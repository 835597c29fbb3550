"""Whose money a message spends, and the one place that says so: :class:`Money`.

A message's model calls are its sender's (the ledger's ``spending_for``), and a stranger's
(``Envelope.is_public``) are held to the channel's :class:`PublicTerms` and the budget's per-sender
and daily limits before every call they cause (:mod:`board.spending.allowance`). :meth:`Money.spending` sets
both context variables together; the front door sets it around the answer, the media service around
its transcriptions and spoken replies.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from board.envelope import Envelope
from board.spending.allowance import Allowance, Limit, PublicTerms, allowed
from board.spending.budget import DAILY_REACHED, SENDER_REACHED, Budget, sender_id
from board.spending.ledger import spending_for

__all__ = ["Money"]


class Money:
    """The public terms of each channel open to strangers, and the spending context of a message."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        #: channel -> what strangers may do and cost there (a channel open to anyone sets it)
        self.public_terms: dict[str, PublicTerms] = {}

    def set_public_terms(self, terms: PublicTerms) -> None:
        """What strangers may do and cost on ``terms.channel`` (a channel open to anyone; a reload again)."""
        self.public_terms[terms.channel] = terms

    def allowance_for(self, envelope: Envelope) -> Allowance:
        """The limits every model call for a stranger's ``envelope`` is held to: the channel's public cap
        (nothing, when the channel set no terms), and the budget's per-sender and daily limits when set."""
        terms = self.public_terms.get(envelope.channel) or PublicTerms(envelope.channel, daily_usd=0.0)
        limits = [Limit("public", terms.scope, terms.daily_usd, terms.cap_text)]
        budget = self.budget.settings
        if budget.per_sender_daily_usd is not None:
            limits.append(Limit("sender", sender_id(envelope), budget.per_sender_daily_usd, SENDER_REACHED))
        if budget.daily_usd is not None:
            limits.append(Limit("daily", "*", budget.daily_usd, DAILY_REACHED))
        return Allowance(terms, tuple(limits))

    def allowance_of(self, envelope: Envelope) -> Allowance | None:
        """:meth:`allowance_for` a stranger's envelope; None for everyone else (no limits held)."""
        return self.allowance_for(envelope) if envelope.is_public else None

    @contextlib.contextmanager
    def spending(self, envelope: Envelope, allowance: Allowance | None = None) -> Iterator[None]:
        """The model calls made inside the block are ``envelope``'s sender's, held to a stranger's limits
        (``allowance``: already made for this envelope; else made here)."""
        if allowance is None:
            allowance = self.allowance_of(envelope)
        with spending_for(sender_id(envelope), scope=allowance.terms.scope if allowance else None), \
                allowed(allowance):
            yield
