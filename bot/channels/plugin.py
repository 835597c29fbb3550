"""The record a channel package registers: its name, config section, factory, CLI and tables."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from board.app.parts import Parts
    from board.db import Migration
    from bot.channels.base import Channel
    from bot.channels.parts import ChannelParts
    from bot.config import LoadedConfig
    from bot.intake.intake import IntakeHub

__all__ = ["ChannelFactory", "ChannelPlugin", "CliCommand", "WithParts"]

ChannelFactory = Callable[["ChannelParts", "LoadedConfig", "IntakeHub"], "Channel"]
# Opens the board, runs the body on its parts, closes it. The CLI hands it to a channel's command:
# a channel package cannot import the composition root (bot.app imports the registry).
WithParts = Callable[["LoadedConfig", Callable[["Parts"], Awaitable[int]]], Awaitable[int]]
CliCommand = Callable[["LoadedConfig", argparse.Namespace, WithParts], Awaitable[int]]


@dataclass(frozen=True)
class ChannelPlugin:
    """A channel as the registry knows it.

    ``enabled`` reads the channel's config section; ``factory`` builds the channel (and is
    where its client library is first imported); ``add_cli`` adds ``sabha <name> ...``
    subcommands and returns their handler; ``migrations`` are its tables.
    """

    name: str
    section: str
    enabled: Callable[[LoadedConfig], bool]
    factory: Callable[[], ChannelFactory]
    migrations: Sequence[Migration] = ()
    add_cli: Callable[[Any, argparse.ArgumentParser], CliCommand] | None = None

    @classmethod
    def of_package(cls, package: str, enabled: Callable[[LoadedConfig], bool],
                   migrations: Sequence[Migration]) -> ChannelPlugin:
        """The plugin of a channel package laid out like ``bot.channels.telegram``: its
        ``channel`` module has ``build`` (the factory), its ``cli`` module (if it has one) ``add_cli``.
        Both are imported on first use only, so listing a channel imports no client library."""
        name = package.rsplit(".", 1)[-1]

        def factory() -> ChannelFactory:
            build: ChannelFactory = importlib.import_module(f"{package}.channel").build
            return build

        def add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
            command: CliCommand = importlib.import_module(f"{package}.cli").add_cli(sub, common)
            return command

        has_cli = importlib.util.find_spec(f"{package}.cli") is not None
        return cls(name=name, section=name, enabled=enabled, factory=factory, migrations=migrations,
                   add_cli=add_cli if has_cli else None)
