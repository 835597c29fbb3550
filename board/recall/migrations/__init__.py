"""Recall's own tables (1250-1274): the passages recall searches (conversation lines, meeting statements,
documents' text), their full-text index, and how far the background indexer got in each source."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
