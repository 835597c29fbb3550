"""``web.chat``: the web chat channel's settings (validated by pydantic).

The chat is part of the owner's web pages (:mod:`bot.web`): it runs when they do and
``web.chat.enabled`` is true. :func:`chat_section` reads it from a loaded config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from bot.config_model import StrictModel

if TYPE_CHECKING:
    from bot.config import LoadedConfig

__all__ = ["WebChatSection", "chat_section"]


class WebChatSection(StrictModel):
    """``web.chat``: the owner's chat with the board on the web page (``/ui/chat``)."""

    enabled: bool = Field(True, description="serve the chat at /ui/chat (with the web pages)")
    stream: bool = Field(True, description="show answers while they are written (with a streaming model)")


def chat_section(loaded: LoadedConfig) -> WebChatSection:
    """The ``web.chat`` section of ``loaded`` (the defaults when the config has none)."""
    web = getattr(loaded.config, "web", None)
    chat = getattr(web, "chat", None)
    return chat if isinstance(chat, WebChatSection) else WebChatSection()

