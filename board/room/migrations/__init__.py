"""The room's tables: meetings (participants, statements, events, decisions) and consultations (0100-0199;
1000-1030: the table, resuming, starts; 1226: the meetings of standing items; 1326: indexes the lists read by;
1600: the end's bookkeeping done; 1610: the meetings that ended lately, found at a start)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
