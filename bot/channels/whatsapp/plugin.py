"""The WhatsApp channel's plugin record (the factory imports the channel when it runs)."""

from __future__ import annotations

from bot.channels.plugin import ChannelPlugin
from bot.channels.whatsapp.migrations import MIGRATIONS

__all__ = ["PLUGIN"]

PLUGIN = ChannelPlugin.of_package(__package__ or "bot.channels.whatsapp",
                                  lambda loaded: loaded.config.whatsapp.enabled, MIGRATIONS)
