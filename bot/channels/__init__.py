"""Channels: adapters between a messaging service and the channel-agnostic board.

Each channel is a package (``bot.channels.telegram``, ...) that turns its native updates
into :class:`board.envelope.Envelope` records and delivers :class:`board.envelope.Reply`
records back; the shared intake (:mod:`bot.intake`) does everything in between. The
daemon and the CLI know channels only through :mod:`bot.channels.registry`.
"""
