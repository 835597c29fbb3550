"""The room's tables: meetings (participants, statements, events, decisions) and consultations (0100-0199)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
