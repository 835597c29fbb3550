"""The predictions' table (0820-0829 is this package's range; 1325: the tallies track records are read from):
one row per checkable claim a member made."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
