"""The operations page reads bounded, indexed windows (issue 44: "fast at 100k turns ... no full scan").

With SQLite's trace on, :func:`bot.web.ops_figures.read_figures` is run over a ledger and an intake table of
some hundred rows and of three times as many: it makes the same number of statements at both sizes (nothing per
row), and every statement's plan (EXPLAIN QUERY PLAN) searches the big tables by an index, the failed and
retried calls by the partial index ``llm_calls_trouble`` (migration 1475), never a full scan. On both backends
(SQLite and a real PostgreSQL) the figures of the seeded state (:mod:`tests.support.ops_seed`) come out right.
PostgreSQL's planner picks by table size, so its plans are not asserted (as in test_reads_indexed.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from board.spending.ledger import Ledger
from board.storage import Database
from bot.web.ops_figures import read_figures
from tests.support.ops_seed import MODEL, seed

BIG = ("llm_calls", "inbound_messages", "scheduled_work", "guardrail_violations")


async def _fill(db: Database, rows: int, start: int = 0) -> None:
    now = datetime.now(UTC)
    for n in range(start, start + rows):
        ts = (now - timedelta(seconds=n * 7)).isoformat(timespec="seconds")
        await db.execute("INSERT INTO llm_calls(ts, provider, model, role, input_tokens, output_tokens, latency_ms, "
                         "outcome, blocks) VALUES (?, 'p', ?, 'finance', 10, 1, ?, 'ok', '{\"static\": 5}')",
                         (ts, f"m{n % 3}", float(n % 50)))
        await db.execute("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status, answered_at) "
                         "VALUES (?, 'c', ?, ?, 'answered', ?)", (("telegram", "slack")[n % 2], f"x{n}", ts, ts))


async def _traced(db: Database) -> tuple[list[str], list[str]]:
    conn: Any = db
    seen: list[str] = []
    await conn.conn.set_trace_callback(seen.append)
    try:
        await read_figures(db, datetime.now(UTC), lease_s=15)
    finally:
        await conn.conn.set_trace_callback(None)
    plans = []
    for sql in seen:
        plans += [str(r[3]) for r in await db.fetchall("EXPLAIN QUERY PLAN " + sql)]
    return seen, plans


async def test_the_ops_figures_are_read_by_index_in_a_bounded_number_of_statements(database: Database) -> None:
    await _fill(database, 200)
    small, plans = await _traced(database)
    await _fill(database, 400, start=200)
    big, _ = await _traced(database)
    assert len(small) == len(big), (small, big)  # nothing per row: the statements do not grow with the ledger
    scans = [p for p in plans if p.startswith("SCAN") and any(t in p for t in BIG)
             and "INDEX" not in p]
    assert not scans, plans
    assert any("llm_calls_trouble" in p for p in plans), plans  # errors and fallbacks: only those rows
    assert any("llm_calls_ts" in p for p in plans), plans
    assert any("inbound_messages_received" in p for p in plans), plans
    assert any("scheduled_work_due" in p for p in plans), plans


@pytest.mark.backends
async def test_the_ops_figures_of_a_seeded_state_on_both_backends(database: Database) -> None:
    await seed(database, Ledger(database))
    f = await read_figures(database, datetime.now(UTC), lease_s=15)
    for window in ("hour", "day"):
        (telegram,) = [r for r in f.by_channel[window] if r.key == "telegram"]
        assert (telegram.count, round(telegram.p50 or 0), round(telegram.p95 or 0)) == (20, 1000, 1900)
        (model,) = [r for r in f.by_model[window] if r.key == MODEL]
        assert (model.count, model.p50, model.p95) == (20, 1000.0, 1900.0)
    assert (f.errors, f.fallbacks) == (1, 1) and len(f.trouble) == 2
    assert f.violations_day == 1 and f.violations[0]["rule"] == "prompt_leak"
    assert f.tiers == {"static": 1500, "dynamic": 50, "history": 400, "message": 30} and f.tiers_calls == 20
    assert f.cache_share == 0.75
    assert f.queue["whatsapp"] == {"received": 1} and f.queue["telegram"] == {}
    assert f.overdue == 1 and [d["kind"] for d in f.due] == ["reminder", "reminder"]


@pytest.mark.backends
async def test_a_replicas_spare_turns_are_shown_while_fresh(database: Database) -> None:
    """The spare turns a replica published (``intake_room``, bot.intake.leasing) are shown beside its leases while
    published within ``lease_s``; an older figure is not shown (that replica may be gone)."""
    now = datetime.now(UTC)
    await database.execute("INSERT INTO leases(key, holder, expires_at, taken_at) VALUES (?, ?, ?, ?)",
                           ("lane:telegram:7", "r-fresh", now.timestamp() + 600, now.isoformat()))
    await database.execute("INSERT INTO leases(key, holder, expires_at, taken_at) VALUES (?, ?, ?, ?)",
                           ("lane:telegram:8", "r-stale", now.timestamp() + 600, now.isoformat()))
    await database.execute("INSERT INTO intake_room(holder, spare, seen_at) VALUES (?, ?, ?)",
                           ("r-fresh", 5, now.timestamp() - 1))
    await database.execute("INSERT INTO intake_room(holder, spare, seen_at) VALUES (?, ?, ?)",
                           ("r-stale", 9, now.timestamp() - 60))
    f = await read_figures(database, now, lease_s=15)
    shown = {r["name"]: (r["leases"], r["spare"]) for r in f.replicas}
    assert shown["r-fresh"] == (1, 5) and shown["r-stale"] == (1, None), shown
