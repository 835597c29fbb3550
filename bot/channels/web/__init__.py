"""The web chat channel: the owner talks to any advisor on a page the daemon serves.

A third channel through the shared intake (:mod:`bot.intake`), like Telegram and WhatsApp: a message
posted by the page (:mod:`.inbound`) is claimed durably before the POST answers, deduplicated by the
client message id the page generates, answered in its conversation's lane and resumed after a crash.
Replies are appended to a durable per-conversation outbox (:mod:`.store`) that the page reads over
Server-Sent Events (:mod:`.routes`, fed by :mod:`.chat_feed`); an answer being written streams as deltas
(:mod:`.answer_stream`). The owner's other pages are another package, :mod:`bot.web`.
"""

__all__: list[str] = []
