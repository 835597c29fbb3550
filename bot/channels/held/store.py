"""``held_webhooks``: webhook requests kept while the channels start (:mod:`bot.channels.held`).

A row is the request as its channel must see it again: the path, the headers (JSON pairs; a header whose
value is one of the config's secrets, e.g. Telegram's secret token, is stored as that secret's SHA-256
and put back from the config when handed over: no secret is written) and the raw body (the bytes a
WhatsApp signature covers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from board.storage import Database

__all__ = ["Header", "HeldRequest", "HeldStore"]

#: A stored header: (name, value) or (name, {"secret": sha256 of the value}).
Header = tuple[str, Any]


@dataclass(frozen=True)
class HeldRequest:
    """One held request, as stored."""

    id: int
    path: str
    headers: tuple[Header, ...]
    body: bytes


class HeldStore:
    """Adds, lists (oldest first) and removes held requests."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, path: str, headers: list[Header], body: bytes, now: datetime) -> None:
        """Keep one request (committed when this returns)."""
        await self.db.execute("INSERT INTO held_webhooks(path, headers, body, received_at) VALUES (?, ?, ?, ?)",
                              (path, json.dumps(headers), body, now.isoformat()))

    async def oldest(self, limit: int = 50) -> list[HeldRequest]:
        """Up to ``limit`` held requests, in arrival order."""
        rows = await self.db.fetchall("SELECT id, path, headers, body FROM held_webhooks ORDER BY id LIMIT ?",
                                      (limit,))
        return [HeldRequest(int(r["id"]), str(r["path"]), tuple((str(n), v) for n, v in json.loads(r["headers"])),
                            bytes(r["body"])) for r in rows]

    async def remove(self, request_id: int) -> None:
        """Its channel has taken it."""
        await self.db.execute("DELETE FROM held_webhooks WHERE id = ?", (request_id,))

    async def remove_all(self, request_ids: list[int]) -> None:
        """Their channels have taken them (one statement)."""
        if request_ids:
            marks = ", ".join("?" for _ in request_ids)
            await self.db.execute(f"DELETE FROM held_webhooks WHERE id IN ({marks})", tuple(request_ids))
