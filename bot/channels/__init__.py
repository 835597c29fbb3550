"""Channels: adapters between a messaging service and the channel-agnostic board.

Each channel is a package (``bot.channels.telegram``, ``bot.channels.whatsapp``, ``bot.channels.web``) that
turns its native updates into :class:`board.envelope.Envelope` records and delivers
:class:`board.envelope.Reply` records back, as the intake's port says (:mod:`bot.intake.courier`); the
shared intake (:mod:`bot.intake`) does everything in between. The daemon and the CLI know channels only
through :mod:`bot.channels.registry`.

- :mod:`bot.channels.base`: what a channel is to the daemon (``Channel``) and its daemon-side capabilities
- :mod:`bot.channels.parts`: what a channel uses of the board (``ChannelParts``, built once by the daemon)
- :mod:`bot.channels.plugin` / :mod:`bot.channels.registry`: the record each package registers, and the list
- :mod:`bot.channels.webhook`: reading webhook bodies; :mod:`bot.channels.held`: webhooks held while starting
- :mod:`bot.channels.reach`: whether a channel reaches its API; :mod:`bot.channels.seen_once`: logged once
- :mod:`bot.channels.meeting_posts`: what each channel posted of a meeting (caught up after a restart)
"""

# Submodules and channel packages, imported on use (this file imports none of them).
__all__ = [
    "base", "held", "meeting_posts", "parts", "plugin", "reach", "registry", "seen_once", "telegram", "web", "webhook",
    "whatsapp",
]
