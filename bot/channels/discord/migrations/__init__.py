"""Discord's tables: the places the board has seen there and the newest message stored from each (1150-1174;
1175-1199 are the components' and meetings' tables)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
