"""The intake's table: ``inbound_messages``, the durable inbox of every channel (0201-0202, 0300-0399)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
