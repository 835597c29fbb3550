"""The channels Sabha knows, as plugin records; the daemon and the CLI use only this.

Importing this module imports no client library: a plugin's factory and CLI load their
package on first use, so ``sabha --help`` does not pay for PTB.
"""

from __future__ import annotations

from collections.abc import Iterable

from board.db import Migration
from bot.channels.plugin import ChannelPlugin
from bot.channels.telegram.plugin import PLUGIN as TELEGRAM
from bot.channels.whatsapp.plugin import PLUGIN as WHATSAPP

__all__ = ["PLUGINS", "all_migrations", "plugin"]

PLUGINS: tuple[ChannelPlugin, ...] = (TELEGRAM, WHATSAPP)


def plugin(name: str) -> ChannelPlugin:
    """The plugin called ``name``; KeyError names the known ones."""
    for p in PLUGINS:
        if p.name == name:
            return p
    raise KeyError(f"no channel {name!r}; channels: {', '.join(p.name for p in PLUGINS)}")


def all_migrations() -> Iterable[Migration]:
    """Every channel's migrations (enabled or not: a db may hold a disabled channel's tables)."""
    for p in PLUGINS:
        yield from p.migrations
