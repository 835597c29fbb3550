"""The memory's tables: the session index, the ledger of LLM calls and of tool calls (0001-0099)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
