"""Webhooks that arrive while the daemon starts: stored, answered 200, handed to their channel once it is up.

The daemon's HTTP port opens before its channels have started (they resume what is pending, reach their
APIs), and a channel that is not up yet answers its webhook 503: Meta then delivers again only minutes
later. :class:`bot.channels.held.hold.WebhookHold` (an aiohttp middleware on the channels' webhook paths)
stores such a request instead (:class:`~bot.channels.held.store.HeldStore`, table ``held_webhooks``: the
intake's rule, stored before the 200) and, once every channel has started, posts each one again to the
daemon's own port, oldest first, through the channel's ordinary webhook handler (signature checks, the
durable claim, dedupe); a row is deleted once its channel has taken it.
"""

__all__: list[str] = []  # nothing imported here: ``sabha ask`` loads the migrations without aiohttp
