"""The people tables (0700-0709): persons, their channel identities, link codes and failed attempts."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
