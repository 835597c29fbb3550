"""WhatsApp's tables: each user's sticky role, the delivery record of each outbound message, and the
people behind numbers and business-scoped user ids (0400-0499)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
