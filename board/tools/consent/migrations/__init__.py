"""The consent tables (0910-0919): every call that needed the owner's consent and what came of it, and the
tools the owner always allows."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
