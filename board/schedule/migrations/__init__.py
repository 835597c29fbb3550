"""The scheduled-work table (0800-0809): reminders, resolution requests, reviews, follow-ups; standing work
(1200-1224): the items the owner sets (/every) and their runs."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
