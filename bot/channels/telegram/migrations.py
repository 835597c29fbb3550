"""Telegram's tables: the forum topic of each role (0200; 0201-0202 are the intake's, named before the split)."""

from __future__ import annotations

from board.db import Migration

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0200_telegram_topics",
        """
        CREATE TABLE telegram_topics (
            chat_id    TEXT NOT NULL,
            role       TEXT NOT NULL,
            thread_id  INTEGER NOT NULL,
            name       TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (chat_id, role)
        );
        """,
    ),
)
