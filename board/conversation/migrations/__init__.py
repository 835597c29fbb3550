"""The conversation store's tables: the session index (0001) and the transcript lines (0960)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
