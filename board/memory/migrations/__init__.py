"""The memory's tables: the session index, the ledger of LLM calls and of tool calls (0001-0099), and the
user memory's facts (0500; the agent layer's 0501-0599 are in ``board.agent.migrations``)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
