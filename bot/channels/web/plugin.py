"""The web chat channel's plugin record (the factory imports the channel when it runs)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from bot.channels.plugin import ChannelPlugin
from bot.channels.web.migrations import MIGRATIONS

if TYPE_CHECKING:
    from bot.channels.plugin import ChannelFactory
    from bot.config import LoadedConfig

__all__ = ["PLUGIN", "enabled"]


def enabled(loaded: LoadedConfig) -> bool:
    """Whether the chat runs: the web pages are on (``web.enabled``) and ``web.chat.enabled``."""
    web = loaded.config.web
    return web.enabled and web.chat.enabled


def _factory() -> ChannelFactory:
    build: ChannelFactory = importlib.import_module("bot.channels.web.channel").build
    return build


PLUGIN = ChannelPlugin(name="web", section="web", enabled=enabled, factory=_factory, migrations=MIGRATIONS)
