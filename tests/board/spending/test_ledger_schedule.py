"""The ledger's scheduled-run tag (migration 1225): the model calls made inside :func:`spending_for_run` (and in
the tasks started there) carry the standing item and the run's label; ``--by schedule`` shows each run on its own
line, and :meth:`Ledger.spent_on_item` sums an item's runs; on SQLite and a real PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from board.spending.ledger import NOT_SCHEDULED, Ledger, LLMCallRecord, RunTag, spending_for_run
from board.spending.migrations import MIGRATIONS

pytestmark = pytest.mark.backends

MONDAY = RunTag(7, "#7 brief: the week (2026-11-30 09:00Z)")
FRIDAY = RunTag(8, "#8 roundtable: growth ideas (2026-12-04 16:00Z)")


def priced(cost: float) -> LLMCallRecord:
    return LLMCallRecord(provider="offline", model="offline", outcome="ok", cost_usd=cost)


async def test_each_scheduled_run_is_its_own_line(database_with: Any) -> None:
    ledger = Ledger(await database_with(MIGRATIONS))
    await ledger.record_llm_call(priced(0.5))  # a chat turn: not scheduled
    with spending_for_run(MONDAY):
        await ledger.record_llm_call(priced(0.25))
        # a meeting the run starts in the background inherits the tag
        await asyncio.create_task(ledger.record_llm_call(priced(0.125)))
    with spending_for_run(FRIDAY):
        await ledger.record_llm_call(priced(1.0))
    rows = {row.key: (row.calls, row.cost_usd) for row in await ledger.summary(by="schedule")}
    assert rows == {MONDAY.label: (2, 0.375), FRIDAY.label: (1, 1.0), NOT_SCHEDULED: (1, 0.5)}
    since = datetime.now(UTC) - timedelta(days=1)
    assert await ledger.spent_on_item(7, since=since) == 0.375
    assert await ledger.spent_on_item(8, since=since) == 1.0
    assert await ledger.spent_on_item(9, since=since) == 0.0
    assert await ledger.spent_on_item(7, since=datetime.now(UTC) + timedelta(days=1)) == 0.0
