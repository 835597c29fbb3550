"""``inbox:``, the intake's config section (shared by every channel), validated by pydantic."""

from __future__ import annotations

from pydantic import Field

from bot.config.base import StrictModel

__all__ = ["InboxSection"]


class InboxSection(StrictModel):
    """``inbox``: the shared intake of every channel (durable inbox, lanes, backpressure)."""

    resume_max_age_s: float = Field(3600, ge=0, le=7 * 86_400, description=(
        "messages received but not answered when Sabha stopped are answered at the next start if younger than "
        "this; older ones are logged and given up"))
    max_concurrent_turns: int = Field(32, ge=1, le=1000, description=(
        "turns in flight at once over all conversations; the rest wait their turn, fairly across conversations (an "
        "answer already stored gives its place up while it is sent)"))
    shutdown_grace_s: float = Field(20, ge=0, le=3600, description=(
        "at SIGTERM/SIGINT, how long running answers may take to finish; what is left stays stored and is "
        "answered at the next start"))
    confirm_within_s: float = Field(120, gt=0, le=86_400, description=(
        "WhatsApp: a reply whose request left but whose answer was lost (Sabha stopped, the connection dropped) "
        "waits this long for Meta's status webhook to confirm it; without one it is sent once more, marked as "
        "possibly repeated"))
    storage_retry_s: float = Field(2.0, gt=0, le=300, description=(
        "when the data dir cannot be written, how long to wait before trying to store or answer again "
        "(doubling up to 30 s)"))
