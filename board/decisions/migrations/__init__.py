"""Decision life's own tables: the action items' due dates (0801, for their reminders) and the owner's
verdicts and rulings (0810). Predictions (0820) and recall (0821) keep theirs in their own packages."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
