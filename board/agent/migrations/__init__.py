"""The agent layer's tables (0500-0599): guardrail violations and the web search ledger.

The user memory's facts table (0500) lives with the memory, in ``board.memory.migrations``.
"""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
