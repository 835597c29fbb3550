"""The table of webhooks held at start: ``held_webhooks`` (0975)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
