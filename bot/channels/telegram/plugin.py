"""The Telegram channel's plugin record (imports no PTB: the factory does, when it runs)."""

from __future__ import annotations

from bot.channels.plugin import ChannelPlugin
from bot.channels.telegram.migrations import MIGRATIONS

__all__ = ["PLUGIN"]

PLUGIN = ChannelPlugin.of_package(__package__ or "bot.channels.telegram",
                                  lambda loaded: loaded.config.telegram.enabled, MIGRATIONS)
