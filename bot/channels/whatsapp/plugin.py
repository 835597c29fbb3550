"""The WhatsApp channel's plugin record (the factory imports the channel when it runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.channels.plugin import ChannelFactory, ChannelPlugin, CliCommand
from bot.channels.whatsapp.migrations import MIGRATIONS

if TYPE_CHECKING:
    import argparse

    from bot.config import LoadedConfig

__all__ = ["PLUGIN"]


def _enabled(loaded: LoadedConfig) -> bool:
    return loaded.config.whatsapp.enabled


def _factory() -> ChannelFactory:
    from bot.channels.whatsapp.channel import build

    return build


def _add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    from bot.channels.whatsapp.cli import add_cli

    return add_cli(sub, common)


PLUGIN = ChannelPlugin(name="whatsapp", section="whatsapp", enabled=_enabled, factory=_factory,
                       migrations=MIGRATIONS, add_cli=_add_cli)
