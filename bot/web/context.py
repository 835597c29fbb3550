"""What the web pages work with: :class:`WebContext` (one per daemon) and its typed lookup.

Kept apart from :mod:`bot.web.app` (which builds the sub-application from the pages) so the
pages and the stream can look the context up without importing the app that imports them.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web

from bot.web.auth import WebAuth
from bot.web.feed import MeetingFeed
from bot.web.settings import WebSettings

if TYPE_CHECKING:
    from board.service import Board

__all__ = ["MAX_NONCES", "PREFIX", "WEB", "WebContext", "context_of"]

PREFIX = "/ui"
MAX_NONCES = 1000


@dataclass(eq=False)
class WebContext:
    """What the pages work with (one per daemon)."""

    board: Board
    settings: WebSettings
    auth: WebAuth
    feed: MeetingFeed
    server_url: str
    nonces: OrderedDict[str, str] = field(default_factory=OrderedDict)  # New meeting form nonce -> meeting id
    topics: OrderedDict[str, str] = field(default_factory=OrderedDict)  # meeting id -> topic, of those started here

    def new_nonce(self) -> str:
        """A fresh form nonce (a double submit of one form starts one meeting)."""
        return secrets.token_urlsafe(12)

    def labels(self, roster: str | None) -> dict[str, str]:
        """``role -> "🦉 Critic"`` for the roles of ``roster`` (the board's own when None or unknown)."""
        try:
            souls = self.board.souls_for(roster) if roster else self.board.souls
            return {p.role: p.label for p in souls.profiles()}
        except (ValueError, KeyError):
            return {p.role: p.label for p in self.board.souls.profiles()}

    def remember(self, nonce: str, meeting_id: str, topic: str) -> None:
        """Record the meeting a form (its nonce) started, and its topic (for its page until it is on record)."""
        if nonce:
            self.nonces[nonce] = meeting_id
        self.topics[meeting_id] = topic
        for kept in (self.nonces, self.topics):
            while len(kept) > MAX_NONCES:
                kept.popitem(last=False)


WEB = web.AppKey("sabha_web", WebContext)


def context_of(request: web.Request) -> WebContext:
    """The pages' context (typed)."""
    return request.config_dict[WEB]
