"""The Discord channel's plugin record (the factory imports the channel when it runs)."""

from __future__ import annotations

from bot.channels.discord.migrations import MIGRATIONS
from bot.channels.plugin import ChannelPlugin

__all__ = ["PLUGIN"]

PLUGIN = ChannelPlugin.of_package(__package__ or "bot.channels.discord",
                                  lambda loaded: loaded.config.discord.enabled, MIGRATIONS)
