"""The Telegram channel's plugin record (imports no PTB: the factory does, when it runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.channels.plugin import ChannelFactory, ChannelPlugin, CliCommand
from bot.channels.telegram.migrations import MIGRATIONS

if TYPE_CHECKING:
    import argparse

    from bot.config import LoadedConfig

__all__ = ["PLUGIN"]


def _enabled(loaded: LoadedConfig) -> bool:
    return loaded.config.telegram.enabled


def _factory() -> ChannelFactory:
    from bot.channels.telegram.channel import build

    return build


def _add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    from bot.channels.telegram.cli import add_cli

    return add_cli(sub, common)


PLUGIN = ChannelPlugin(name="telegram", section="telegram", enabled=_enabled, factory=_factory,
                       migrations=MIGRATIONS, add_cli=_add_cli)
