"""The SQLite state db's old address: :class:`StateDB` lives in :mod:`board.storage.sqlite` (the storage layer),
migrations in :mod:`board.storage.migrations`. Kept so ``from board.db import StateDB, Migration`` still works."""

from __future__ import annotations

from board.storage.migrations import Migration, MigrationError, load_migrations
from board.storage.sqlite import StateDB

__all__ = ["Migration", "MigrationError", "StateDB", "load_migrations"]
