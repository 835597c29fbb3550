"""A state with known operations figures, for the operations page's tests (issue 44).

:func:`seed` writes model calls through the real :class:`~board.spending.ledger.Ledger` and the rows the intake,
the guardrails and the schedule would have stored: 20 Telegram messages answered after 0.1 s … 2.0 s (p50 1.0 s,
p95 1.9 s), 20 calls of one model taking 100 … 2000 ms with the same percentiles, one failed call and one answered
on its second attempt, a message waiting on WhatsApp, a guardrail violation, scheduled work one overdue, one due
tomorrow, and calls and messages two days old that no window of the page may count.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from board.llm.base import Usage
from board.spending.ledger import Ledger, LLMCallRecord
from board.storage import Database

__all__ = ["MODEL", "seed"]

MODEL = "anthropic/claude-ops-test"
BLOCKS = {"static": 1000, "soul": 200, "tools": 300, "dynamic": 50, "history": 400, "message": 30}


def _iso(moment: datetime, *, ms: bool = False) -> str:
    return moment.isoformat(timespec="milliseconds" if ms else "seconds")


async def seed(db: Database, ledger: Ledger) -> None:
    now = datetime.now(UTC)
    old = now - timedelta(days=2)
    for n in range(1, 21):
        await ledger.record_llm_call(LLMCallRecord(
            provider="anthropic", model=MODEL, outcome="ok", usage=Usage(input_tokens=500, output_tokens=40,
                                                                         cache_read_tokens=1500),
            latency_ms=100.0 * n, role="finance", purpose="turn", blocks=BLOCKS, ts=_iso(now - timedelta(minutes=n))))
    await ledger.record_llm_call(LLMCallRecord(provider="anthropic", model=MODEL, outcome="ok", latency_ms=99_999.0,
                                               ts=_iso(old)))
    await ledger.record_llm_call(LLMCallRecord(provider="anthropic", model=MODEL, outcome="rate_limit",
                                               error="429 slow down", latency_ms=20.0, role="critic",
                                               ts=_iso(now - timedelta(minutes=3))))
    await ledger.record_llm_call(LLMCallRecord(provider="openai", model="openai/gpt-fallback", outcome="ok",
                                               attempt=2, latency_ms=300.0, role="critic",
                                               ts=_iso(now - timedelta(minutes=3))))
    for n in range(1, 21):
        received = now - timedelta(minutes=n)
        await db.execute("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status, "
                         "answered_at) VALUES ('telegram', '42', ?, ?, 'answered', ?)",
                         (f"m{n}", _iso(received, ms=True), _iso(received + timedelta(milliseconds=100 * n), ms=True)))
    await db.execute("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status, answered_at) "
                     "VALUES ('telegram', '42', 'old', ?, 'answered', ?)",
                     (_iso(old, ms=True), _iso(old + timedelta(minutes=9), ms=True)))
    await db.execute("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status) "
                     "VALUES ('whatsapp', '15550001', 'w1', ?, 'received')", (_iso(now, ms=True),))
    await db.execute("INSERT INTO guardrail_violations(ts, role, tier, rule, action, excerpt) "
                     "VALUES (?, 'critic', 'persona', 'prompt_leak', 'replace', 'My system prompt says')",
                     (_iso(now - timedelta(minutes=5)),))
    for key, due in (("ops-overdue", now - timedelta(hours=1)), ("ops-later", now + timedelta(days=1))):
        stamp = due.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        await db.execute("INSERT INTO scheduled_work(key, kind, due_at, channel, chat_id, created_at, updated_at) "
                         "VALUES (?, 'reminder', ?, 'telegram', '42', ?, ?)", (key, stamp, stamp, stamp))
