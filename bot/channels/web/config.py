"""``web.chat``: the web chat channel's settings, a subsection of the web pages' section.

The section itself (:class:`bot.web.config.WebChatSection`) sits with ``web`` (the chat runs
when the pages do); :func:`chat_section` reads it from a loaded config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.web.config import WebChatSection

if TYPE_CHECKING:
    from bot.config import LoadedConfig

__all__ = ["WebChatSection", "chat_section"]


def chat_section(loaded: LoadedConfig) -> WebChatSection:
    """The ``web.chat`` section of ``loaded``."""
    return loaded.config.web.chat
