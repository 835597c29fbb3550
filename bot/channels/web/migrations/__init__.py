"""The web chat's tables: each conversation's outbox, read by the page over SSE (0910-0919)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
