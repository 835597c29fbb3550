"""The channels Sabha knows, as plugin records; the daemon and the CLI use only this.

:data:`PACKAGES` lists the channel packages. Importing this module imports none of them:
:data:`PLUGINS` (the records, :func:`plugins`) loads each package's ``plugin`` module on
first use, and a plugin's factory loads its client library only when it runs.
:func:`add_cli_parsers` imports just the packages' ``cli`` modules: ``sabha --help`` builds
every channel's parser and needs neither the records nor the migrations they carry (which
bring the state db module, and asyncio with it).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from board.db import Migration
    from bot.channels.plugin import ChannelPlugin, CliCommand

__all__ = ["PACKAGES", "PLUGINS", "add_cli_parsers", "all_migrations", "channel_commands", "plugin", "plugins"]

#: The channel packages, in the order the daemon starts them. Each has a ``plugin`` module
#: whose ``PLUGIN`` is its :class:`~bot.channels.plugin.ChannelPlugin`; one that adds
#: ``sabha <name> ...`` commands has a ``cli`` module with ``add_cli(sub, common)`` (which is
#: what :meth:`ChannelPlugin.of_package` makes the record's ``add_cli``).
PACKAGES: tuple[str, ...] = ("bot.channels.telegram", "bot.channels.whatsapp", "bot.channels.slack",
                             "bot.channels.discord", "bot.channels.web")

PLUGINS: tuple[ChannelPlugin, ...]  # no value here: the module's __getattr__ loads it on first use


@functools.cache
def plugins() -> tuple[ChannelPlugin, ...]:
    """Every channel's plugin record, in :data:`PACKAGES` order (imported on the first call)."""
    return tuple(importlib.import_module(f"{package}.plugin").PLUGIN for package in PACKAGES)


def __getattr__(name: str) -> tuple[ChannelPlugin, ...]:
    """``PLUGINS``: :func:`plugins`, loaded when first asked for."""
    if name == "PLUGINS":
        return plugins()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plugin(name: str) -> ChannelPlugin:
    """The plugin called ``name``; KeyError names the known ones."""
    for p in plugins():
        if p.name == name:
            return p
    raise KeyError(f"no channel {name!r}; channels: {', '.join(p.name for p in plugins())}")


def all_migrations() -> Iterable[Migration]:
    """Every channel's migrations (enabled or not: a db may hold a disabled channel's tables)."""
    for p in plugins():
        yield from p.migrations


@functools.cache
def channel_commands() -> dict[str, str]:
    """``sabha <name>`` commands of the channels: name -> the package's ``cli`` module (only
    packages that have one; nothing is imported but the channel packages themselves)."""
    return {package.rsplit(".", 1)[-1]: f"{package}.cli" for package in PACKAGES
            if importlib.util.find_spec(f"{package}.cli") is not None}


def add_cli_parsers(sub: Any, common: argparse.ArgumentParser, *, only: str | None = None) -> dict[str, CliCommand]:
    """Add each channel's ``sabha <name> ...`` parser(s) to ``sub`` (``only``: just that
    channel's); their handlers by channel name.

    It imports the packages' ``cli`` modules only, as the records' ``add_cli`` would."""
    return {name: importlib.import_module(module).add_cli(sub, common)
            for name, module in channel_commands().items() if only is None or name == only}
