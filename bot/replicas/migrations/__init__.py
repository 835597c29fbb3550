"""The replicas' table: ``replicas``, who runs on this state and who polls Telegram (0951)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
