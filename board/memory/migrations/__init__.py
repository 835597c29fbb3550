"""The user memory's tables: the facts (0500), where each came from (0710), its scope (0970), consolidation's
changes, profiles and forget marks (1300); the agent layer's 0501-0599 are in ``board.agent.migrations``."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
