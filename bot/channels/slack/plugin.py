"""The Slack channel's plugin record (the factory imports the channel when it runs)."""

from __future__ import annotations

from bot.channels.plugin import ChannelPlugin
from bot.channels.slack.migrations import MIGRATIONS

__all__ = ["PLUGIN"]

PLUGIN = ChannelPlugin.of_package(__package__ or "bot.channels.slack",
                                  lambda loaded: loaded.config.slack.enabled, MIGRATIONS)
