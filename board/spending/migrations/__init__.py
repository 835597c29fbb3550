"""The ledger's tables: LLM calls and tool calls (0002-0099; 0900: the MCP server of a tool call; 1225: the
scheduled run a model call belongs to; 1327: indexes by role and by meeting)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
