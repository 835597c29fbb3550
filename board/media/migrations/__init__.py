"""The media tables (0600-0699): derived text and each message's attachments."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
