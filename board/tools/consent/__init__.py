"""The owner's consent before a tool that changes the world runs (issue 39): the durable approvals
(:mod:`.store`, migration 0910), the gate that asks and waits (:mod:`.gate`, the board's
:class:`board.agent.outside.ConsentGate`) and what it says (:mod:`.words`)."""

from board.tools.consent.gate import ConsentSettings, Decided, OwnerConsent
from board.tools.consent.store import AlwaysAllowed, Answer, ApprovalRow, ApprovalStore
from board.tools.consent.words import answers_consent, consent_lane

__all__ = [
    "AlwaysAllowed",
    "Answer",
    "ApprovalRow",
    "ApprovalStore",
    "ConsentSettings",
    "Decided",
    "OwnerConsent",
    "answers_consent",
    "consent_lane",
]
