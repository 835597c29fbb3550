"""Which items of Telegram albums are stored: the ``telegram_album_items`` rows (migration 0985).

An album is stored by the intake as one message under its first item's id (:mod:`.albums`); the
intake knows nothing of its other items. This record keeps every stored item, ``(chat, message
id) -> head`` (the id the album was stored as), so that what Telegram sends again is recognised item
by item: a non-first item posted again alone (its webhook 200 was lost), or an album regrouped with
a late item after a restart (:meth:`AlbumItems.fresh` leaves only the items not stored yet, which are
then stored as a message of their own, headed by the first of them).

The rows are written right after the intake stored the album and before Telegram is told (the
webhook's 200, the polling offset). A crash between the two leaves the album stored and its items
unrecorded; Telegram was told nothing, so it sends the items again, grouped as before under the same
head: the intake's inbox takes that for a duplicate. Rows older than a week are pruned (Telegram
redelivers for a day at most).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from board.storage import Database
from bot.channels.telegram.inbound import TgMessage

__all__ = ["AlbumItems"]

log = logging.getLogger("sabha.telegram")


@dataclass(frozen=True)
class AlbumItems:
    """The record of stored album items (module docstring)."""

    db: Database

    async def fresh(self, items: Sequence[TgMessage]) -> list[TgMessage]:
        """``items`` (one album's, in order) without those stored already."""
        if not items:
            return []
        chat = items[0].chat.id
        marks = ", ".join("?" for _ in items)
        rows = await self.db.fetchall(
            f"SELECT message_id FROM telegram_album_items WHERE chat_id = ? AND message_id IN ({marks})",
            (chat, *(item.message_id for item in items)))
        stored = {int(row[0]) for row in rows}
        if stored:
            log.info("telegram: album %s in chat %s: item(s) %s stored already (sent again), %d new",
                     items[0].media_group_id, chat, ", ".join(str(i) for i in sorted(stored)),
                     len(items) - len(stored))
        return [item for item in items if item.message_id not in stored]

    async def record(self, albums: Sequence[Sequence[TgMessage]]) -> None:
        """Remember every item of ``albums`` (each stored under its first item's id)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        rows = [(item.chat.id, item.message_id, album[0].message_id, now) for album in albums if album
                for item in album]
        if not rows:
            return
        async with self.db.transaction() as tx:
            for row in rows:
                await tx.execute("INSERT INTO telegram_album_items (chat_id, message_id, head_id, created_at) "
                                 "VALUES (?, ?, ?, ?) ON CONFLICT (chat_id, message_id) DO NOTHING", row)

    async def prune(self, keep: timedelta = timedelta(days=7)) -> None:
        """Forget items recorded more than ``keep`` ago."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="seconds")
        await self.db.execute("DELETE FROM telegram_album_items WHERE created_at < ?", (cutoff,))
