"""The record a channel package registers: its name, config section, factory, CLI and tables."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from board.db import Migration
from bot.channels.base import Channel

if TYPE_CHECKING:
    from board.service import Board
    from bot.config import LoadedConfig
    from bot.intake.intake import IntakeHub

__all__ = ["ChannelFactory", "ChannelPlugin", "CliCommand", "WithBoard"]

ChannelFactory = Callable[["Board", "LoadedConfig", "IntakeHub"], Channel]
# Opens the board, runs the body on it, closes it. The CLI hands it to a channel's command:
# a channel package cannot import the composition root (bot.app imports the registry).
WithBoard = Callable[["LoadedConfig", Callable[["Board"], Awaitable[int]]], Awaitable[int]]
CliCommand = Callable[["LoadedConfig", argparse.Namespace, WithBoard], Awaitable[int]]


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
