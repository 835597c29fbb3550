"""Telegram's tables: the forum topic of each role (0200; 0201-0202 are the intake's, named before the split),
streamed answers' draft messages (0720), the meeting items each channel posted (1020,
shared with WhatsApp: :mod:`bot.channels.meeting_posts`)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
