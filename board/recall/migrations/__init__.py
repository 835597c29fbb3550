"""Recall's own tables (1250-1299): the passages recall searches (conversation lines, meeting statements,
documents' text), their full-text index, how far the background indexer got in each source, and the passages'
vectors (1275, recall by meaning)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
