"""Inbound message ids: a message is answered once, even when it is delivered twice.

Telegram redelivers updates that were not confirmed before a restart (and a webhook may
retry); WhatsApp retries webhooks. Each channel claims ``(channel, chat_id, message_id)``
in the ``inbound_messages`` table of the state db before answering; a second claim of
the same id fails and the duplicate is skipped. Claimed rows are marked answered when the
reply went out, and rows older than a week are pruned at start.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from board.db import StateDB

log = logging.getLogger("sabha.inbox")

KEEP = timedelta(days=7)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Inbox:
    """Dedupe of inbound messages for one channel."""

    def __init__(self, db: StateDB, channel: str) -> None:
        self.db = db
        self.channel = channel
        self.duplicates = 0

    async def claim(self, chat_id: str, message_id: str) -> bool:
        """True the first time a message is seen; False for a redelivery (skip it)."""
        cursor = await self.db.conn.execute(
            "INSERT OR IGNORE INTO inbound_messages(channel, chat_id, message_id, received_at, status) "
            "VALUES (?, ?, ?, ?, 'received')",
            (self.channel, chat_id, message_id, _now()),
        )
        fresh = cursor.rowcount > 0
        await cursor.close()
        await self.db.conn.commit()
        if not fresh:
            self.duplicates += 1
            log.info("%s: message %s in chat %s was delivered again; already handled, skipping",
                     self.channel, message_id, chat_id)
        return fresh

    async def done(self, chat_id: str, message_id: str, status: str = "answered") -> None:
        """Record how a claimed message ended (answered, denied, failed)."""
        await self.db.execute(
            "UPDATE inbound_messages SET status = ?, answered_at = ? WHERE channel = ? AND chat_id = ? "
            "AND message_id = ?",
            (status, _now(), self.channel, chat_id, message_id),
        )

    async def prune(self, keep: timedelta = KEEP) -> None:
        """Forget ids older than ``keep`` (Telegram redelivers for at most a day)."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="seconds")
        await self.db.execute(
            "DELETE FROM inbound_messages WHERE channel = ? AND received_at < ?", (self.channel, cutoff)
        )
