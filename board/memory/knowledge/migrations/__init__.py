"""The knowledge index's tables in the state store (0550): on PostgreSQL only; SQLite keeps the index in its own
FTS5 file (``<data_dir>/knowledge.db``, :mod:`board.memory.knowledge.index`), so its step of that number is empty."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
