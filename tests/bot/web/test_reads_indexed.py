"""What the owner's pages and ``sabha meetings list`` read is read by index (issue 44: "the web meetings list
0.98 s, SELECT * without an index on started_at; the board page a full scan of the ledger"). Each read is made
by the real function with SQLite's trace on; the statement it ran is then explained (EXPLAIN QUERY PLAN): it
must use the index and sort nothing, however many rows there are. PostgreSQL's planner picks by table size, so
its plan is not asserted here (the same functions run on it in the pages' and storage tests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from board.clock import SystemClock
from board.decisions.predictions.store import PredictionStore
from board.decisions.ratify import DecisionBook
from board.room.store import MeetingStore
from board.storage import Database
from bot.web.pages import last_activity


async def _fill(db: Database) -> None:
    for n in range(30):
        await db.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at, decision) "
                         "VALUES (?, 'pricing', 'board', 'general', 'ended', ?, ?)",
                         (f"m-{n:03d}", f"2026-11-{1 + n % 28:02d}T00:00:00+00:00", '{"recommendation": "go"}'))
        await db.execute("INSERT INTO llm_calls(ts, provider, model, role, meeting_id, input_tokens, output_tokens, "
                         "cost_usd, latency_ms, outcome) VALUES (?, 'offline', 'offline', ?, ?, 1, 1, 0, 1, 'ok')",
                         (f"2026-11-{1 + n % 28:02d}T00:00:00+00:00", ("finance", "critic")[n % 2], f"m-{n:03d}"))


async def _plan(db: Database, read: Callable[[], Awaitable[Any]]) -> tuple[list[str], list[str]]:
    """(the statements ``read`` ran, their query plans' lines)."""
    conn: Any = db
    seen: list[str] = []
    await conn.conn.set_trace_callback(seen.append)
    try:
        await read()
    finally:
        await conn.conn.set_trace_callback(None)
    plans = []
    for sql in seen:
        plans += [str(r[3]) for r in await db.fetchall("EXPLAIN QUERY PLAN " + sql)]
    return seen, plans


async def test_the_meeting_lists_read_the_newest_by_index(database: Database) -> None:
    await _fill(database)
    store = MeetingStore(database)
    seen, plans = await _plan(database, lambda: store.list(100))  # /ui/meetings, /ui/decisions, sabha meetings list
    assert len(seen) == 1 and any("meetings_by_start" in p for p in plans), plans
    assert not any("TEMP B-TREE" in p for p in plans), plans  # nothing sorted
    _, plans = await _plan(database, lambda: DecisionBook(database, SystemClock()).recent(limit=200))
    assert any("meetings_by_start" in p for p in plans) and not any("TEMP B-TREE" in p for p in plans), plans
    _, plans = await _plan(database, lambda: store.actions(include_done=True, limit=500))
    assert not any(p.startswith("SCAN a") and "INDEX" not in p for p in plans), plans
    _, plans = await _plan(database, lambda: store.actions(include_done=True, meeting_id="m-001", limit=100))
    assert any("action_items_by_meeting" in p for p in plans), plans  # the meeting page; a recalled decision's outcome
    _, plans = await _plan(database, lambda: store.spent("m-001"))  # a meeting's cost: its own calls
    assert any("llm_calls_by_meeting" in p for p in plans), plans


async def test_the_board_page_looks_up_each_role_instead_of_scanning_the_ledger(database: Database) -> None:
    await _fill(database)
    seen, plans = await _plan(database, lambda: last_activity(database, ["finance", "critic", "research"]))
    assert len(seen) == 1, seen
    assert not any(p.startswith("SCAN llm_calls") for p in plans), plans  # a search per role, no scan
    assert sum("llm_calls_by_role" in p for p in plans) == 3, plans
    found = await last_activity(database, ["finance", "critic", "research"])
    assert set(found) == {"finance", "critic"}  # research never called a model: "never" on the page


async def test_the_track_page_lists_the_latest_resolutions_by_index(database: Database) -> None:
    _, plans = await _plan(database, lambda: PredictionStore(database).latest_resolved(limit=300))
    assert any("predictions_resolved" in p for p in plans) and not any("TEMP B-TREE" in p for p in plans), plans


@pytest.mark.backends
async def test_the_board_page_reads_each_roles_last_call_on_both_backends(database: Database) -> None:
    await _fill(database)
    found = await last_activity(database, ["finance", "critic", "research"])
    assert set(found) == {"finance", "critic"}  # research never called a model: "never" on the page
    assert "28 Nov 2026" in found["finance"] or "27 Nov 2026" in found["finance"], found
    assert await last_activity(database, []) == {}
