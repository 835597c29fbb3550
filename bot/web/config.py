"""Config section ``web``: the owner's web pages on the daemon's own server (``/ui/``).

Validated like every section (unknown keys are errors) and turned into the plain
:class:`bot.web.settings.WebSettings` by :meth:`WebSection.settings`. ``web.chat`` is the web
chat channel's subsection (:class:`WebChatSection`, owned by that channel).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from bot.config.base import StrictModel, base_url, section
from bot.web.settings import WebSettings

__all__ = ["WebChatSection", "WebSection"]


class WebChatSection(StrictModel):
    """``web.chat``: the owner's chat with the board at ``/ui/chat`` (the web chat channel,
    :mod:`bot.channels.web`; it runs with the pages)."""

    enabled: bool = Field(True, description="serve the chat with the advisors at /ui/chat (with the web pages)")
    stream: bool = Field(True, description=(
        "show answers while they are written (needs a provider with `stream: true`)"))


class WebSection(StrictModel):
    """``web``: the owner's pages (board, meetings live, decisions, cost), login links, sessions."""

    enabled: bool = Field(True, description="serve the owner's pages at /ui/ while `sabha run` runs")
    session_ttl_s: float = Field(7 * 86400, ge=60, le=90 * 86400, description=(
        "how long a browser stays signed in after following a login link"))
    link_ttl_s: float = Field(600, ge=10, le=86400, description=(
        "how long a `sabha web link` link may be used (once)"))
    base_url: str | None = Field(None, description=(
        "the address your browser uses to reach Sabha (behind a reverse proxy: https://sabha.example.org); "
        "`sabha web link` prints links under it. Unset: http://<server.host>:<server.port>"))
    login_attempts_per_minute: int = Field(10, ge=1, le=1000, description=(
        "failed login attempts one client address may make in a minute; more are answered 429 (a valid "
        "link always signs in)"))
    chat: WebChatSection = section()

    @field_validator("base_url")
    @classmethod
    def _base(cls, value: str | None) -> str | None:
        return base_url(value, "https://sabha.example.org") if value else None

    def settings(self) -> WebSettings:
        """The pages' plain settings."""
        return WebSettings(enabled=self.enabled, session_ttl_s=float(self.session_ttl_s),
                           link_ttl_s=float(self.link_ttl_s), base_url=self.base_url,
                           login_attempts_per_minute=self.login_attempts_per_minute)
