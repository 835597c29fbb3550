"""Webhook albums: each item kept durably as it is posted, the album stored as one message once it is complete.

Telegram posts an album's items to the webhook as separate requests. With ``max_connections: 1`` they come one
after another, each only once the previous one was answered 200, so no request may wait for the next one.
Here each item is written to ``telegram_album_staged`` (migration 1065) and answered 200 at once (503 when it
could not be written: Telegram posts it again). The album is then *held* (:class:`WebhookAlbums`): it is
complete when no item of it was posted for :data:`.albums.ALBUM_WAIT_S` (counted from the last one), or as soon
as anything else from its chat is posted (so a question sent after an album is answered after it). Its staged
items are then stored with the intake as one arrival, as a polled album is (the first item's id, the captions,
every picture; items recorded as stored already are left out, :mod:`.album_items`), and only then unstaged.
One store, under one message id, is one turn: the intake claims it once and marks it answered once.

A crash or a stop while an album is held loses nothing: its items are staged. At the next start every staged
album is held again for :data:`RESUME_WAIT_S`, since Telegram posts what it could not deliver meanwhile as soon
as the webhook answers again; an item posted then joins it (and the hold is counted from it again). So an album
whose hold passed while Sabha was down is still one turn if its other items come within that time after the
start; an item later than that is answered on its own (logged), as a late item is in polling mode. A crash
between storing an album and unstaging it stores it once: the second store finds its items recorded.

Replicas behind a balancer may stage items of one album on two replicas: each stores what is staged when its
own hold ends; the one that comes second finds the items recorded and stores nothing (or only what it alone
saw, as a late item).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from board.storage import Database
from bot.channels.telegram.albums import ALBUM_WAIT_S, AlbumKey
from bot.channels.telegram.inbound import TgMessage, parse_update

__all__ = ["RESUME_WAIT_S", "AlbumStage", "WebhookAlbums"]

log = logging.getLogger("sabha.telegram")

#: How long an album staged before a restart waits at the start for items Telegram could not post meanwhile.
RESUME_WAIT_S = 10.0


@dataclass(frozen=True)
class AlbumStage:
    """The ``telegram_album_staged`` rows: the items of webhook albums not stored with the intake yet."""

    db: Database

    async def add(self, key: AlbumKey, message_id: int, body: str) -> None:
        """Keep an item of album ``key`` as posted (``body``); posted again, it is kept once."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        await self.db.execute("INSERT INTO telegram_album_staged (chat_id, message_id, group_id, body, staged_at) "
                              "VALUES (?, ?, ?, ?, ?) ON CONFLICT (chat_id, message_id) DO NOTHING",
                              (key[0], message_id, key[1], body, now))

    async def items(self, key: AlbumKey) -> list[TgMessage]:
        """The staged items of album ``key``, in message order (an unreadable one is logged and left out)."""
        rows = await self.db.fetchall("SELECT message_id, body FROM telegram_album_staged WHERE chat_id = ? AND "
                                      "group_id = ? ORDER BY message_id", key)
        items: list[TgMessage] = []
        for row in rows:
            try:
                message = parse_update(json.loads(str(row["body"]))).message
            except ValueError as exc:
                log.warning("telegram: staged album item %s could not be read again (%s); left out", row[0], exc)
                continue
            if message is not None:
                items.append(message)
        return items

    async def drop(self, key: AlbumKey, message_ids: list[int]) -> None:
        """Unstage the items ``message_ids`` of album ``key`` (stored with the intake)."""
        for message_id in message_ids:
            await self.db.execute("DELETE FROM telegram_album_staged WHERE chat_id = ? AND message_id = ? AND "
                                  "group_id = ?", (key[0], message_id, key[1]))

    async def albums(self) -> list[AlbumKey]:
        """Every album with staged items."""
        rows = await self.db.fetchall("SELECT DISTINCT chat_id, group_id FROM telegram_album_staged")
        return [(int(row[0]), str(row[1])) for row in rows]


@dataclass
class WebhookAlbums:
    """Holds webhook albums until they are complete, then stores each as one message (module docstring).
    ``store`` stores an album's items with the intake and says whether it could."""

    stage: AlbumStage
    store: Callable[[list[TgMessage]], Awaitable[bool]]
    wait_s: float = ALBUM_WAIT_S
    retry_s: float = 5.0
    _timers: dict[AlbumKey, asyncio.Task[None]] = field(default_factory=dict)
    _storing: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def add(self, key: AlbumKey, message_id: int, body: str) -> None:
        """Stage an item of album ``key`` and hold the album :attr:`wait_s` from now. Raises the storage
        error when it could not be staged (the request is then not answered 200)."""
        await self.stage.add(key, message_id, body)
        self._hold(key, self.wait_s)

    async def resume(self) -> None:
        """Hold every album staged before this start for :data:`RESUME_WAIT_S`."""
        keys = await self.stage.albums()
        for key in keys:
            if key not in self._timers:
                self._hold(key, RESUME_WAIT_S)
        if keys:
            log.info("telegram: %d album(s) posted to the webhook before the restart are held %.0f s for their "
                     "other items", len(keys), RESUME_WAIT_S)

    async def flush_chat(self, chat: int) -> None:
        """Store now the albums held for ``chat`` (something else from it was posted: it comes after them)."""
        for key in [k for k in self._timers if k[0] == chat]:
            self._release(key)
            await self._flush(key)

    def holding(self) -> list[AlbumKey]:
        """The albums held now (their items staged, not stored with the intake yet)."""
        return list(self._timers)

    def close(self) -> None:
        """Stop holding (a stop): what is staged stays staged, for the next start."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _hold(self, key: AlbumKey, wait_s: float) -> None:
        """Store album ``key`` ``wait_s`` from now (a hold running for it starts again)."""
        self._release(key)
        self._timers[key] = asyncio.create_task(self._watch(key, wait_s), name=f"telegram album {key[1]}")

    def _release(self, key: AlbumKey) -> None:
        """Stop holding ``key`` (a hold in ``_timers`` is still waiting: it has not begun to store)."""
        timer = self._timers.pop(key, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    async def _watch(self, key: AlbumKey, wait_s: float) -> None:
        await asyncio.sleep(wait_s)
        self._release(key)  # an item posted from now on holds the album anew
        await self._flush(key)

    async def _flush(self, key: AlbumKey) -> None:
        """Store album ``key``'s staged items as one message, then unstage them; held again when it cannot."""
        async with self._storing:
            try:
                items = await self.stage.items(key)
                stored = not items or await self.store(items)
                if items and stored:
                    await self.stage.drop(key, [item.message_id for item in items])
            except Exception:
                log.exception("telegram: storing album %s of chat %s failed; it stays staged", key[1], key[0])
                stored = False
        if not stored:
            self._hold(key, self.retry_s)
