"""The board's memory of its decisions (0821-0829 shared with predictions' range): the full-text
index over decisions and minutes, and the reviews recorded on decisions."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
