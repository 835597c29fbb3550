"""The ledger's ``tool_calls.server`` (migration 0900): an outside tool's call is stored with its MCP server, one of
Sabha's own with none; on SQLite and a real PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from board.spending.ledger import Ledger, ToolCallRecord
from board.spending.migrations import MIGRATIONS

pytestmark = pytest.mark.backends


async def test_a_tool_call_is_stored_with_its_server(database_with: Any) -> None:
    db = await database_with(MIGRATIONS)
    ledger = Ledger(db)
    await ledger.record_tool_call(ToolCallRecord("git__git_log", True, args={"max_count": 1}, latency_ms=12.5,
                                                 role="research", server="git"))
    await ledger.record_tool_call(ToolCallRecord("search_knowledge_base", True, role="research"))
    rows = await db.fetchall("SELECT name, server, role, latency_ms FROM tool_calls ORDER BY id")
    assert [(r["name"], r["server"], r["role"], r["latency_ms"]) for r in rows] == [
        ("git__git_log", "git", "research", 12.5), ("search_knowledge_base", None, "research", None)]
